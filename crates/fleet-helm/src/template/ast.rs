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
        name: Arc<str>,
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
    /// The declared variables: none, one (`$x := …`) or two (`range $i, $v := …`).
    pub decl: Few<Arc<str>>,
    /// The commands, a span of the file's [`Code::cmds`].
    pub cmds: Span,
}

#[derive(Debug, Clone)]
pub struct Command {
    pub pos: usize,
    /// The arguments, a span of the file's [`Code::args`].
    pub args: Span,
}

/// A run of one parsed file's commands or arguments in its [`Code`]. A chart's templates have tens of thousands of
/// commands and arguments: one vector of each per file instead of one per pipeline and command saves as many
/// allocations, and keeps pipelines (and so tree nodes) small.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    start: u32,
    len: u32,
}

impl Span {
    pub fn len(self) -> usize {
        self.len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// The commands and arguments of one parsed file, which its pipelines and commands refer to by [`Span`].
#[derive(Debug, Clone, Default)]
pub struct Code {
    args: Vec<Arg>,
    cmds: Vec<Command>,
}

/// Appends `items` to `store` and returns where they lie. Sources are below 4 GiB (the parser checks), and every
/// argument or command is at least one byte of source, so the counts fit a `u32`.
fn append<T>(store: &mut Vec<T>, items: impl ExactSizeIterator<Item = T>) -> Span {
    let span = Span {
        start: store.len() as u32,
        len: items.len() as u32,
    };
    store.extend(items);
    span
}

impl Code {
    /// An empty store with room for the commands and arguments of a file of `tokens` tokens. Over the corpus's
    /// kafka and kube-prometheus-stack charts there are 0.30 arguments and 0.16 commands per token; room for 3/8 and
    /// 1/5 leaves one file in ten growing its arguments once, and one in forty its commands.
    pub(crate) fn with_room(tokens: usize) -> Code {
        Code {
            args: Vec::with_capacity(tokens * 3 / 8 + 4),
            cmds: Vec::with_capacity(tokens / 5 + 2),
        }
    }

    /// The arguments of `cmd` (the function or field first).
    pub fn args(&self, cmd: &Command) -> &[Arg] {
        &self.args[cmd.args.range()]
    }

    /// The commands of `pipe`, in order.
    pub fn cmds(&self, pipe: &Pipeline) -> &[Command] {
        &self.cmds[pipe.cmds.range()]
    }

    /// Stores one command's arguments.
    pub(crate) fn add_args(&mut self, args: impl ExactSizeIterator<Item = Arg>) -> Span {
        append(&mut self.args, args)
    }

    /// Stores one pipeline's commands.
    pub(crate) fn add_cmds(&mut self, cmds: impl ExactSizeIterator<Item = Command>) -> Span {
        append(&mut self.cmds, cmds)
    }

    /// `item` as it is written in a template (for error contexts).
    pub fn show<'a, T: ?Sized>(&'a self, item: &'a T) -> Shown<'a, T> {
        Shown { code: self, item }
    }
}

/// A sequence that holds a single item inline: most pipelines declare no variable or one.
#[derive(Debug, Clone, Default)]
pub enum Few<T> {
    #[default]
    None,
    One(T),
    Many(Vec<T>),
}

impl<T> Few<T> {
    pub fn push(&mut self, item: T) {
        match self {
            Few::None => *self = Few::One(item),
            Few::One(_) => {
                if let Few::One(first) = std::mem::replace(self, Few::Many(Vec::with_capacity(2)))
                    && let Few::Many(items) = self
                {
                    items.push(first);
                    items.push(item);
                }
            }
            Few::Many(items) => items.push(item),
        }
    }
}

impl<'a, T> IntoIterator for &'a Few<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> std::ops::Deref for Few<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Few::None => &[],
            Few::One(item) => std::slice::from_ref(item),
            Few::Many(items) => items,
        }
    }
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
        func: Option<crate::call::Func>,
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

/// The field names of a chain such as `.A.B.C`: the run of source text `A.B.C`, held as a range of the template's
/// shared source (no allocation per chain).
#[derive(Debug, Clone, Default)]
pub struct FieldPath {
    /// The template source; `None` for no fields.
    src: Option<Arc<str>>,
    start: u32,
    end: u32,
}

impl FieldPath {
    /// The names at `start..end` of `src`, joined by dots, without the leading dot. Sources beyond 4 GiB are
    /// refused by the parser before any path is made.
    pub fn new(src: &Arc<str>, start: usize, end: usize) -> FieldPath {
        FieldPath {
            src: Some(src.clone()),
            start: start as u32,
            end: end as u32,
        }
    }

    /// The names joined by dots.
    pub fn as_str(&self) -> &str {
        match &self.src {
            Some(src) => &src[self.start as usize..self.end as usize],
            None => "",
        }
    }

    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }

    pub fn len(&self) -> usize {
        let path = self.as_str();
        if path.is_empty() {
            0
        } else {
            1 + path.bytes().filter(|&b| b == b'.').count()
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let path = self.as_str();
        path.split('.').filter(move |_| !path.is_empty())
    }
}

impl PartialEq for FieldPath {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for FieldPath {}

fn write_fields(f: &mut fmt::Formatter<'_>, idents: &FieldPath) -> fmt::Result {
    for i in idents.iter() {
        write!(f, ".{i}")?;
    }
    Ok(())
}

/// A tree item printed as Go prints it, with the [`Code`] its spans refer to: see [`Code::show`].
pub struct Shown<'a, T: ?Sized> {
    code: &'a Code,
    item: &'a T,
}

impl fmt::Display for Shown<'_, Arg> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item {
            Arg::Field { idents, .. } => write_fields(f, idents),
            Arg::Variable { name, idents, .. } => {
                f.write_str(name)?;
                write_fields(f, idents)
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Chain { node, fields, .. } => {
                let node = self.code.show(&**node);
                if matches!(node.item, Arg::Pipe(_)) {
                    write!(f, "({node})")?;
                } else {
                    write!(f, "{node}")?;
                }
                write_fields(f, fields)
            }
            Arg::Pipe(p) => write!(f, "{}", self.code.show(&**p)),
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

/// A command's arguments, as the command is written.
impl fmt::Display for Shown<'_, [Arg]> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.item.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            let a = self.code.show(a);
            if matches!(a.item, Arg::Pipe(_)) {
                write!(f, "({a})")?;
            } else {
                write!(f, "{a}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Shown<'_, Pipeline> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pipe = self.item;
        if !pipe.decl.is_empty() {
            write!(
                f,
                "{} {} ",
                pipe.decl.join(", "),
                if pipe.is_assign { "=" } else { ":=" }
            )?;
        }
        for (i, c) in self.code.cmds(pipe).iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{}", self.code.show(self.code.args(c)))?;
        }
        Ok(())
    }
}
