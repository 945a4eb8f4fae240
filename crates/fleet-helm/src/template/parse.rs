//! The parser for Go `text/template`: turns the lexer's tokens into the tree of [`super::ast`], collecting
//! `define`/`block` bodies separately, with Go's parse-time checks (undefined variables, `break` outside `range`,
//! unexpected `else`/`end`).

use std::sync::Arc;

use super::TemplateError;
use super::ast::{Arg, Branch, Code, Command, Few, FieldPath, List, Node, Number, Pipeline};
use super::lex::{Keyword, Syntax, Tok, Token, lex_into};

/// The variable every template starts with, shared by all trees and executions.
pub(crate) static DOLLAR: std::sync::LazyLock<Arc<str>> =
    std::sync::LazyLock::new(|| Arc::from("$"));

/// Deepest nesting of `if`/`with`/`range` and parentheses accepted.
pub const MAX_NESTING: usize = 100;

/// A parsed template file: its source (which the tree's positions and field paths refer to), its main body, the
/// templates it defines, and the commands and arguments of all of them.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub src: Arc<str>,
    pub root: List,
    pub defines: Vec<(Arc<str>, List)>,
    pub code: Code,
}

/// Parses one template source. `name` is the template name used in errors (e.g. `chart/templates/x.yaml`).
pub fn parse(name: &str, src: &str) -> Result<Parsed, TemplateError> {
    parse_shared(name, Arc::from(src))
}

/// [`parse`] of a source the caller already holds shared: the tree keeps `src` itself instead of a copy.
pub fn parse_shared(name: &str, src: Arc<str>) -> Result<Parsed, TemplateError> {
    parse_with(name, src, &Syntax::helm())
}

/// [`parse_shared`] with other delimiters or another function map.
pub fn parse_with(name: &str, src: Arc<str>, syntax: &Syntax<'_>) -> Result<Parsed, TemplateError> {
    thread_local! {
        /// The token vector of the last file parsed on this thread, kept for the next.
        static TOKENS: std::cell::RefCell<Vec<Token>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if u32::try_from(src.len()).is_err() {
        return Err(TemplateError::parse(
            name,
            "",
            0,
            "template larger than 4 GiB".into(),
        ));
    }
    let mut tokens = TOKENS.take();
    let parsed = lex_into(name, &src, &mut tokens, syntax)
        .and_then(|strings| parse_tokens(name, &src, &mut tokens, strings));
    if tokens.capacity() <= KEPT_TOKENS {
        tokens.clear();
        TOKENS.set(tokens);
    }
    parsed
}

/// The largest token vector a thread keeps between files (a long-running process keeps one per thread).
const KEPT_TOKENS: usize = 1 << 15;

/// [`parse`] on the tokens of `src` and the texts of its strings (which are moved out).
fn parse_tokens(
    name: &str,
    src: &Arc<str>,
    tokens: &mut Vec<Token>,
    strings: Vec<Arc<str>>,
) -> Result<Parsed, TemplateError> {
    let mut p = Parser {
        name,
        src,
        shared_src: src.clone(),
        code: Code::with_room(tokens.len()),
        tokens,
        strings,
        i: 0,
        defines: Vec::new(),
        pending_args: Vec::new(),
        pending_cmds: Vec::new(),
        vars: vec![DOLLAR.clone()],
        range_depth: 0,
        depth: 0,
    };
    let (root, end) = p.list(true)?;
    if let Some((kw, pos)) = end {
        return Err(p.error(pos, format!("unexpected {{{{{}}}}}", keyword_name(kw))));
    }
    Ok(Parsed {
        src: p.shared_src,
        root,
        defines: p.defines,
        code: p.code,
    })
}

fn keyword_name(k: Keyword) -> &'static str {
    match k {
        Keyword::Block => "block",
        Keyword::Break => "break",
        Keyword::Continue => "continue",
        Keyword::Define => "define",
        Keyword::Else => "else",
        Keyword::End => "end",
        Keyword::If => "if",
        Keyword::Range => "range",
        Keyword::Template => "template",
        Keyword::With => "with",
    }
}

struct Parser<'a> {
    name: &'a str,
    src: &'a str,
    /// `src`, shared with the tree's field paths.
    shared_src: Arc<str>,
    tokens: &'a mut Vec<Token>,
    /// The unquoted texts of the file's strings, by [`Tok::String`] index (each taken by the node it becomes).
    strings: Vec<Arc<str>>,
    i: usize,
    defines: Vec<(Arc<str>, List)>,
    /// The commands and arguments parsed so far.
    code: Code,
    /// Arguments of the commands being parsed, innermost last: a command's arguments move to `code` together when
    /// it ends (a parenthesized pipeline among them ends, and moves its own, first).
    pending_args: Vec<Arg>,
    /// Commands of the pipelines being parsed, innermost last (as `pending_args`).
    pending_cmds: Vec<Command>,
    /// Variables in scope (Go checks variable use at parse time).
    vars: Vec<Arc<str>>,
    range_depth: usize,
    /// Current nesting of control structures and parentheses (bounded so hostile input cannot overflow the stack).
    depth: usize,
}

/// How a list ended: `{{end}}` or `{{else …}}` (the parser stands after the keyword), or end of input (`None`).
type ListEnd = Option<(Keyword, usize)>;

impl<'a> Parser<'a> {
    fn error(&self, pos: usize, msg: impl Into<String>) -> TemplateError {
        TemplateError::parse(self.name, self.src, pos, msg.into())
    }

    /// The next token. `i` never passes the final `Eof` ([`Parser::next`] stops there, and a two-variable range
    /// declaration skips four tokens only after seeing that the fourth is `:=` or `=`, not `Eof`).
    fn peek(&self) -> &Token {
        &self.tokens[self.i]
    }

    /// Consumes a token. The final `Eof` stays, so reading past the end keeps returning it.
    fn next(&mut self) -> Token {
        let t = *self.peek();
        if self.i + 1 < self.tokens.len() {
            self.i += 1;
        }
        t
    }

    /// The text of the string token `index`, moved out: each string token becomes one node.
    fn take_string(&mut self, index: u32) -> Arc<str> {
        self.strings
            .get_mut(index as usize)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The name of the variable token at index `i`, for a declaration.
    fn variable_name(&self, i: usize) -> Arc<str> {
        let t = &self.tokens[i];
        Arc::from(&self.src[t.pos..t.end])
    }

    /// [`describe`] for a token at `pos..end`.
    fn describe(&self, t: &Tok, pos: usize, end: usize) -> String {
        describe(t, &self.src[pos..end], &self.strings)
    }

    fn expect_right_delim(&mut self, context: &str) -> Result<(), TemplateError> {
        let t = self.next();
        if !matches!(t.kind, Tok::RightDelim) {
            return Err(self.error(
                t.pos,
                format!(
                    "unexpected {} in {context}",
                    self.describe(&t.kind, t.pos, t.end)
                ),
            ));
        }
        Ok(())
    }

    /// Parses nodes until `{{end}}`, `{{else}}` or the end of input.
    fn list(&mut self, top_level: bool) -> Result<(List, ListEnd), TemplateError> {
        let mut nodes = Vec::new();
        loop {
            let t = self.next();
            match t.kind {
                Tok::Eof => return Ok((nodes, None)),
                Tok::Text { start, end } => nodes.push(Node::Text { start, end }),
                Tok::Comment => {}
                Tok::LeftDelim => {
                    let kw_pos = self.peek().pos;
                    if let Tok::Keyword(kw) = self.peek().kind {
                        self.next();
                        match kw {
                            Keyword::End | Keyword::Else => {
                                return Ok((nodes, Some((kw, kw_pos))));
                            }
                            Keyword::Define => {
                                if !top_level {
                                    return Err(
                                        self.error(kw_pos, "unexpected <define> in command")
                                    );
                                }
                                self.define()?;
                            }
                            _ => nodes.push(self.keyword_action(kw, kw_pos)?),
                        }
                    } else {
                        let pipe = self.pipeline("command", true)?;
                        nodes.push(Node::Action(pipe));
                    }
                }
                other => {
                    return Err(self.error(
                        t.pos,
                        format!("unexpected {}", self.describe(&other, t.pos, t.end)),
                    ));
                }
            }
        }
    }

    fn define(&mut self) -> Result<(), TemplateError> {
        let t = self.next();
        let Tok::String(name) = t.kind else {
            return Err(self.error(t.pos, "unexpected name in define clause"));
        };
        let name = self.take_string(name);
        self.expect_right_delim("define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec![DOLLAR.clone()]);
        let (body, end) = self.list(false)?;
        self.vars = saved;
        match end {
            Some((Keyword::End, _)) => {
                self.expect_right_delim("end")?;
                self.defines.push((name, body));
                Ok(())
            }
            Some((kw, pos)) => {
                Err(self.error(pos, format!("unexpected {{{{{}}}}}", keyword_name(kw))))
            }
            None => Err(self.error(self.src.len(), "unexpected EOF")),
        }
    }

    fn keyword_action(&mut self, kw: Keyword, pos: usize) -> Result<Node, TemplateError> {
        match kw {
            Keyword::If | Keyword::With | Keyword::Range => {
                let branch = self.branch(kw, pos)?;
                Ok(match kw {
                    Keyword::If => Node::If(branch),
                    Keyword::With => Node::With(branch),
                    _ => Node::Range(branch),
                })
            }
            Keyword::Break | Keyword::Continue => {
                if self.range_depth == 0 {
                    return Err(self.error(
                        pos,
                        format!("{{{{{}}}}} outside {{{{range}}}}", keyword_name(kw)),
                    ));
                }
                self.expect_right_delim(keyword_name(kw))?;
                Ok(if kw == Keyword::Break {
                    Node::Break(pos)
                } else {
                    Node::Continue(pos)
                })
            }
            Keyword::Template | Keyword::Block => {
                let t = self.next();
                let Tok::String(name) = t.kind else {
                    return Err(self.error(
                        t.pos,
                        format!(
                            "unexpected {} in template clause",
                            self.describe(&t.kind, t.pos, t.end)
                        ),
                    ));
                };
                let name = self.take_string(name);
                let pipe = if matches!(self.peek().kind, Tok::RightDelim) {
                    self.next();
                    None
                } else {
                    Some(self.pipeline("template clause", false)?)
                };
                if kw == Keyword::Block {
                    let saved = std::mem::replace(&mut self.vars, vec![DOLLAR.clone()]);
                    let (body, end) = self.list(false)?;
                    self.vars = saved;
                    if !matches!(end, Some((Keyword::End, _))) {
                        return Err(self.error(pos, "unexpected EOF in block clause"));
                    }
                    self.expect_right_delim("end")?;
                    self.defines.push((name.clone(), body));
                }
                Ok(Node::Template { pos, name, pipe })
            }
            Keyword::End | Keyword::Else | Keyword::Define => {
                Err(self.error(pos, format!("unexpected {{{{{}}}}}", keyword_name(kw))))
            }
        }
    }

    /// Parses the rest of an `if`/`with`/`range` action through its `{{end}}`.
    fn branch(&mut self, kw: Keyword, pos: usize) -> Result<Branch, TemplateError> {
        self.enter(pos)?;
        let r = self.branch_inner(kw, pos);
        self.depth -= 1;
        r
    }

    fn enter(&mut self, pos: usize) -> Result<(), TemplateError> {
        if self.depth >= MAX_NESTING {
            return Err(self.error(pos, format!("template nesting deeper than {MAX_NESTING}")));
        }
        self.depth += 1;
        Ok(())
    }

    fn branch_inner(&mut self, kw: Keyword, pos: usize) -> Result<Branch, TemplateError> {
        let vars_mark = self.vars.len();
        let context = keyword_name(kw);
        let pipe = self.pipeline(context, kw == Keyword::Range)?;
        if kw == Keyword::Range {
            self.range_depth += 1;
        }
        let (list, end) = self.list(false)?;
        if kw == Keyword::Range {
            self.range_depth -= 1;
        }
        let else_list = match end {
            Some((Keyword::End, _)) => {
                self.expect_right_delim("end")?;
                None
            }
            Some((Keyword::Else, else_pos)) => {
                let (next_kind, next_pos) = match self.peek().kind {
                    Tok::Keyword(k) => (Some(k), self.peek().pos),
                    _ => (None, 0),
                };
                match next_kind {
                    // `{{else if …}}` / `{{else with …}}`: a nested branch that consumes the shared `{{end}}`.
                    Some(k @ (Keyword::If | Keyword::With)) if k == kw => {
                        self.next();
                        let nested = self.branch(k, next_pos)?;
                        Some(vec![if k == Keyword::If {
                            Node::If(nested)
                        } else {
                            Node::With(nested)
                        }])
                    }
                    _ => {
                        self.expect_right_delim("else")?;
                        let (else_body, end2) = self.list(false)?;
                        match end2 {
                            Some((Keyword::End, _)) => self.expect_right_delim("end")?,
                            Some((k, p)) => {
                                return Err(self.error(
                                    p,
                                    format!("expected end; found {{{{{}}}}}", keyword_name(k)),
                                ));
                            }
                            None => return Err(self.error(else_pos, "unexpected EOF")),
                        }
                        Some(else_body)
                    }
                }
            }
            Some((k, p)) => {
                return Err(self.error(p, format!("unexpected {{{{{}}}}}", keyword_name(k))));
            }
            None => return Err(self.error(self.src.len(), format!("unexpected EOF in {context}"))),
        };
        self.vars.truncate(vars_mark);
        Ok(Branch {
            pos,
            pipe,
            list,
            else_list,
        })
    }

    /// Parses a pipeline up to `}}` (consumed), with optional variable declarations.
    fn pipeline(&mut self, context: &str, allow_decl: bool) -> Result<Pipeline, TemplateError> {
        let pos = self.peek().pos;
        let mut decl = Few::None;
        let mut is_assign = false;
        // Look ahead for `$x :=`, `$x =`, `$k, $v :=`.
        if (allow_decl || context != "template clause")
            && let Tok::Variable = self.peek().kind
        {
            {
                let v_at = self.i;
                let kind_at = |i: usize| self.tokens.get(i).map(|t| &t.kind);
                match kind_at(self.i + 1) {
                    Some(after @ (Tok::Declare | Tok::Assign)) => {
                        is_assign = matches!(after, Tok::Assign);
                        decl.push(self.variable_name(v_at));
                        self.next();
                        self.next();
                    }
                    Some(Tok::Comma) if context == "range" => {
                        if let (Some(Tok::Variable), Some(op @ (Tok::Declare | Tok::Assign))) =
                            (kind_at(self.i + 2), kind_at(self.i + 3))
                        {
                            is_assign = matches!(op, Tok::Assign);
                            decl.push(self.variable_name(v_at));
                            decl.push(self.variable_name(v_at + 2));
                            self.i += 4;
                        } else {
                            return Err(self.error(pos, "too many declarations in range"));
                        }
                    }
                    _ => {}
                }
            }
        }
        if is_assign {
            for v in &decl {
                if !self.vars.contains(v) {
                    return Err(self.error(pos, format!("undefined variable \"{v}\"")));
                }
            }
        }
        let first_cmd = self.pending_cmds.len();
        loop {
            match self.peek().kind {
                Tok::RightDelim => {
                    self.next();
                    break;
                }
                Tok::RightParen if context == "parenthesized pipeline" => {
                    self.next();
                    break;
                }
                _ => {
                    let cmd = self.command(context)?;
                    self.pending_cmds.push(cmd);
                    if matches!(self.peek().kind, Tok::Pipe) {
                        let pipe_pos = self.next().pos;
                        if matches!(self.peek().kind, Tok::RightDelim | Tok::RightParen) {
                            return Err(self.error(pipe_pos, "missing command"));
                        }
                    }
                }
            }
        }
        if self.pending_cmds.len() == first_cmd {
            return Err(self.error(pos, format!("missing value for {context}")));
        }
        let cmds = self.code.add_cmds(self.pending_cmds.drain(first_cmd..));
        if !is_assign {
            self.vars.extend(decl.iter().cloned());
        }
        Ok(Pipeline {
            pos,
            is_assign,
            decl,
            cmds,
        })
    }

    fn command(&mut self, context: &str) -> Result<Command, TemplateError> {
        let pos = self.peek().pos;
        let first_arg = self.pending_args.len();
        loop {
            match self.peek().kind {
                Tok::Pipe => {
                    if self.pending_args.len() == first_arg {
                        return Err(self.error(self.peek().pos, "missing command"));
                    }
                    break;
                }
                Tok::RightDelim => break,
                Tok::RightParen if context == "parenthesized pipeline" => break,
                _ => {
                    let arg = self.operand()?;
                    self.pending_args.push(arg);
                }
            }
        }
        if self.pending_args.len() == first_arg {
            return Err(self.error(pos, "empty command"));
        }
        let args = self.code.add_args(self.pending_args.drain(first_arg..));
        Ok(Command { pos, args })
    }

    fn operand(&mut self) -> Result<Arg, TemplateError> {
        let term = self.term()?;
        let mut last_end = self.tokens[self.i - 1].end;
        // Go positions a chained node (`.a.b`, `$x.a`, `(p).a`) at its first chained field.
        let chain_pos = self.peek().pos;
        // Adjacent field tokens are one run of source text: `.a.b` is `a.b` after the first dot.
        while let Tok::Field = &self.peek().kind {
            if self.peek().pos != last_end {
                break;
            }
            last_end = self.peek().end;
            self.next();
        }
        if last_end <= chain_pos {
            return Ok(term);
        }
        Ok(match term {
            // The first name and the chained ones are one run of source text.
            Arg::Field { pos, .. } => Arg::Field {
                pos: chain_pos,
                idents: FieldPath::new(&self.shared_src, pos + 1, last_end),
            },
            Arg::Variable { name, .. } => Arg::Variable {
                pos: chain_pos,
                name,
                idents: FieldPath::new(&self.shared_src, chain_pos + 1, last_end),
            },
            Arg::Bool(_) | Arg::String(_) | Arg::Number { .. } | Arg::Dot(_) | Arg::Nil(_) => {
                return Err(self.error(
                    term.pos(),
                    format!(
                        "unexpected . after term {:?}",
                        self.code.show(&term).to_string()
                    ),
                ));
            }
            other => Arg::Chain {
                pos: chain_pos,
                node: Box::new(other),
                fields: FieldPath::new(&self.shared_src, chain_pos + 1, last_end),
            },
        })
    }

    fn term(&mut self) -> Result<Arg, TemplateError> {
        let t = self.next();
        Ok(match t.kind {
            // Go resolves function names while parsing (the lexer looked them up).
            Tok::Function(f) => Arg::Identifier {
                pos: t.pos,
                name: f.name,
                func: f.func,
            },
            Tok::Identifier => {
                let name = &self.src[t.pos..t.end];
                return Err(self.error(t.pos, format!("function {name:?} not defined")));
            }
            Tok::Dot => Arg::Dot(t.pos),
            Tok::Nil => Arg::Nil(t.pos),
            Tok::Bool(b) => Arg::Bool(b),
            Tok::String(s) => Arg::String(self.take_string(s)),
            Tok::Field => Arg::Field {
                pos: t.pos,
                idents: FieldPath::new(&self.shared_src, t.pos + 1, t.end),
            },
            Tok::Variable => {
                let v = &self.src[t.pos..t.end];
                // The name is shared with its declaration's.
                let Some(name) = self.vars.iter().rev().find(|d| &***d == v).cloned() else {
                    return Err(self.error(t.pos, format!("undefined variable \"{v}\"")));
                };
                Arg::Variable {
                    pos: t.pos,
                    name,
                    idents: FieldPath::default(),
                }
            }
            Tok::Char(c) => Arg::Number {
                pos: t.pos,
                text: Some(format!("'{c}'").into()),
                value: Number::Int(c as i64),
            },
            Tok::Number => {
                let text = &self.src[t.pos..t.end];
                let value = parse_number(text)
                    .ok_or_else(|| self.error(t.pos, format!("bad number syntax: {text:?}")))?;
                Arg::Number {
                    pos: t.pos,
                    text: (!is_plain_decimal(text)).then(|| text.into()),
                    value,
                }
            }
            Tok::LeftParen => {
                self.enter(t.pos)?;
                let pipe = self.pipeline("parenthesized pipeline", true);
                self.depth -= 1;
                Arg::Pipe(Box::new(pipe?))
            }
            other => {
                return Err(self.error(
                    t.pos,
                    format!(
                        "unexpected {} in operand",
                        self.describe(&other, t.pos, t.end)
                    ),
                ));
            }
        })
    }
}

/// Digits only, without a leading zero (or `0` itself): how an `i64` prints.
fn is_plain_decimal(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 18
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

/// Parses a Go number literal (decimal, hex, octal, binary, with `_` separators; floats with exponents).
pub fn parse_number(text: &str) -> Option<Number> {
    if is_plain_decimal(text) {
        return text.parse().ok().map(Number::Int);
    }
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest.to_string()),
        None => (
            false,
            cleaned.strip_prefix('+').unwrap_or(&cleaned).to_string(),
        ),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        if h.contains('p') || h.contains('.') {
            None
        } else {
            i64::from_str_radix(h, 16).ok()
        }
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|c| c.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else if lower.bytes().all(|c| c.is_ascii_digit()) && !lower.is_empty() {
        lower.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Some(Number::Int(if neg { -i } else { i }));
    }
    if let Some(h) = lower.strip_prefix("0x") {
        let f = parse_hex_float(h)?;
        return Some(Number::Float(if neg { -f } else { f }));
    }
    let f: f64 = lower.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    Some(Number::Float(if neg { -f } else { f }))
}

/// A hexadecimal float mantissa and binary exponent (`1p60`, `1.8p-3`).
fn parse_hex_float(h: &str) -> Option<f64> {
    let (mant, exp) = h.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let f = v * 2f64.powi(exp);
    f.is_finite().then_some(f)
}

/// A token as Go's parse errors name it; `text` is its source text, `strings` the file's string texts.
fn describe(t: &Tok, text: &str, strings: &[Arc<str>]) -> String {
    match t {
        Tok::Text { .. } => "text".into(),
        Tok::LeftDelim => "\"{{\"".into(),
        Tok::RightDelim => "\"}}\"".into(),
        Tok::Comment => "comment".into(),
        Tok::Identifier => format!("<{text}>"),
        Tok::Function(f) => format!("<{}>", f.name),
        Tok::Field => format!("<{text}>"),
        Tok::Variable => format!("<{text}>"),
        Tok::Dot => "<.>".into(),
        Tok::String(i) => format!("{:?}", strings.get(*i as usize).map_or("", |s| s)),
        Tok::Char(c) => format!("'{c}'"),
        Tok::Number => text.to_string(),
        Tok::Bool(b) => b.to_string(),
        Tok::Nil => "nil".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::LeftParen => "\"(\"".into(),
        Tok::RightParen => "\")\"".into(),
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Keyword(k) => format!("<{}>", keyword_name(*k)),
        Tok::Eof => "EOF".into(),
    }
}
