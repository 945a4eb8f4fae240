//! The parse tree of a Go template, mirroring the node kinds of Go's `text/template/parse`. Every node that can fail
//! at run time keeps its byte offset so errors can name `file:line:col` the way Go does.

use std::fmt;
use std::sync::Arc;

/// A sequence of nodes (a template body or a branch).
pub type List = Vec<Node>;

#[derive(Debug, Clone)]
pub enum Node {
    /// Literal text (already trimmed): the byte range `start..end` of the template's source, not a copy.
    Text {
        start: usize,
        end: usize,
    },
    Action(Pipeline),
    If(Branch),
    With(Branch),
    Range(Branch),
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipeline>,
    },
    Break(usize),
    Continue(usize),
}

/// `if`, `with` and `range`: a pipeline, the body and the optional `else` part.
#[derive(Debug, Clone)]
pub struct Branch {
    pub pos: usize,
    pub pipe: Pipeline,
    pub list: List,
    pub else_list: Option<List>,
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    pub pos: usize,
    /// `true` for `=` (assignment to existing variables), `false` for `:=`.
    pub is_assign: bool,
    pub decl: Vec<Arc<str>>,
    pub cmds: Vec<Command>,
}

#[derive(Debug, Clone)]
pub struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub enum Arg {
    /// `.A.B` on dot.
    Field {
        pos: usize,
        idents: FieldPath,
    },
    /// `$x.A.B`.
    Variable {
        pos: usize,
        name: Arc<str>,
        idents: FieldPath,
    },
    /// A function name, resolved while parsing: `func` is `None` for the functions the evaluator binds itself
    /// (`and`, `or`, `include`, `tpl`).
    Identifier {
        pos: usize,
        name: &'static str,
        func: Option<crate::funcs::Func>,
    },
    /// `(pipeline).A.B`.
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: FieldPath,
    },
    Pipe(Box<Pipeline>),
    Dot(usize),
    Nil(usize),
    Bool(bool),
    Number {
        pos: usize,
        /// The constant as written, unless that is the plain decimal form of an integer `value`.
        text: Option<Box<str>>,
        value: Number,
    },
    String(Arc<str>),
}

/// A numeric constant: Go keeps integer and float constants apart.
#[derive(Debug, Clone, Copy)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Arg {
    pub fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Number { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
            Arg::Bool(_) | Arg::String(_) => 0,
        }
    }
}

/// The field names of a chain such as `.A.B.C`, kept as one string `A.B.C` (one allocation per chain, not one per
/// name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(Box<str>);

impl FieldPath {
    /// `path` is the names joined by dots, without the leading dot.
    pub fn new(path: &str) -> FieldPath {
        FieldPath(Box::from(path))
    }

    /// This chain followed by the names of `more` (joined by dots).
    pub fn join(&self, more: &str) -> FieldPath {
        if self.0.is_empty() {
            return FieldPath::new(more);
        }
        FieldPath(format!("{}.{more}", self.0).into_boxed_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            1 + self.0.bytes().filter(|&b| b == b'.').count()
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.split('.').filter(|_| !self.0.is_empty())
    }
}

fn write_fields(f: &mut fmt::Formatter<'_>, idents: &FieldPath) -> fmt::Result {
    for i in idents.iter() {
        write!(f, ".{i}")?;
    }
    Ok(())
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field { idents, .. } => write_fields(f, idents),
            Arg::Variable { name, idents, .. } => {
                f.write_str(name)?;
                write_fields(f, idents)
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Chain { node, fields, .. } => {
                if matches!(**node, Arg::Pipe(_)) {
                    write!(f, "({node})")?;
                } else {
                    write!(f, "{node}")?;
                }
                write_fields(f, fields)
            }
            Arg::Pipe(p) => write!(f, "{p}"),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Bool(b) => write!(f, "{b}"),
            Arg::Number {
                text: Some(text), ..
            } => f.write_str(text),
            Arg::Number { value, .. } => match value {
                Number::Int(i) => write!(f, "{i}"),
                Number::Float(x) => write!(f, "{x}"),
            },
            Arg::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if let Arg::Pipe(p) = a {
                write!(f, "({p})")?;
            } else {
                write!(f, "{a}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            write!(
                f,
                "{} {} ",
                self.decl.join(", "),
                if self.is_assign { "=" } else { ":=" }
            )?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}
