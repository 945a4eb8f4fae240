//! The lexer for Go `text/template` source: splits text from `{{ … }}` actions (or actions between other delimiters,
//! Go's `Delims`), applies `{{-`/`-}}` trimming and produces the tokens inside actions with their byte offsets (Go
//! reports positions as byte offsets). Function names resolve against the [`Syntax`]'s function map, as Go's parser
//! checks them against the template's `Funcs`.

use std::sync::Arc;

use super::TemplateError;
use crate::funcs::Funcs;

/// One token with the byte offset where it starts in the template source. Tokens own nothing (a string's text is
/// kept aside, [`Tok::String`]), so a file's token vector is emptied without visiting its tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Token {
    pub kind: Tok,
    pub pos: usize,
    /// Byte offset just past the token (used to tell `$x.F` from `$x .F`).
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tok {
    /// Literal text between actions (already trimmed): the source's bytes `start..end`.
    Text {
        start: usize,
        end: usize,
    },
    /// `{{` (after any left trim marker).
    LeftDelim,
    /// `}}`.
    RightDelim,
    /// A comment action `{{/* … */}}`; produces no output.
    Comment,
    /// A name that is not a known function (the token's source text; the parser reports it).
    Identifier,
    /// A known function.
    Function(FunctionRef),
    /// `.Field` (the name is the token's source text after the dot).
    Field,
    /// `$name` or `$` (the token's source text).
    Variable,
    Dot,
    /// A quoted or raw string: the index of its unquoted text among the file's strings ([`lex_into`]).
    String(u32),
    /// A character constant, as its code point.
    Char(char),
    /// A number literal (its source text).
    Number,
    Bool(bool),
    Nil,
    Pipe,
    LeftParen,
    RightParen,
    Declare,
    Assign,
    Comma,
    Keyword(Keyword),
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyword {
    Block,
    Break,
    Continue,
    Define,
    Else,
    End,
    If,
    Range,
    Template,
    With,
}

impl Keyword {
    fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "block" => Keyword::Block,
            "break" => Keyword::Break,
            "continue" => Keyword::Continue,
            "define" => Keyword::Define,
            "else" => Keyword::Else,
            "end" => Keyword::End,
            "if" => Keyword::If,
            "range" => Keyword::Range,
            "template" => Keyword::Template,
            "with" => Keyword::With,
            _ => return None,
        })
    }
}

/// How a template source is read: the action delimiters (Go's `Delims`) and the function map names resolve against
/// (Go's `Funcs`). Helm's is `{{`/`}}` with Helm's functions ([`Syntax::helm`]).
#[derive(Clone, Copy)]
pub struct Syntax<'d> {
    pub left: &'d str,
    pub right: &'d str,
    pub funcs: &'static Funcs,
}

impl Syntax<'static> {
    /// `{{`/`}}` and Helm's function map.
    pub fn helm() -> Self {
        Syntax {
            left: "{{",
            right: "}}",
            funcs: Funcs::helm(),
        }
    }
}

impl std::fmt::Debug for Syntax<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Syntax")
            .field("left", &self.left)
            .field("right", &self.right)
            .finish_non_exhaustive()
    }
}

/// Where actions start and end. Helm's `{{`/`}}` is its own type so that the lexer of every chart compiles with the
/// delimiters as constants; other delimiters are read at run time.
trait Delims: Copy {
    /// The offset of the first left delimiter in `s`.
    fn find_left(&self, s: &str) -> Option<usize>;
    fn left_len(&self) -> usize;
    fn right(&self) -> &[u8];
}

#[derive(Clone, Copy)]
struct Braces;

impl Delims for Braces {
    #[inline]
    fn find_left(&self, s: &str) -> Option<usize> {
        find_left_delim(s)
    }
    #[inline]
    fn left_len(&self) -> usize {
        2
    }
    #[inline]
    fn right(&self) -> &[u8] {
        b"}}"
    }
}

#[derive(Clone, Copy)]
struct Custom<'d> {
    left: &'d [u8],
    right: &'d [u8],
}

impl Delims for Custom<'_> {
    fn find_left(&self, s: &str) -> Option<usize> {
        memchr::memmem::find(s.as_bytes(), self.left)
    }
    fn left_len(&self) -> usize {
        self.left.len()
    }
    fn right(&self) -> &[u8] {
        self.right
    }
}

struct Lexer<'a, D> {
    name: &'a str,
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    strings: Vec<Arc<str>>,
    delims: D,
    funcs: &'static Funcs,
}

/// Splits `src` into tokens, into `tokens` (cleared first), so one vector can serve many files: a chart's token
/// vectors add up to several times its template source, and a fresh one per file means fresh pages per file.
/// Returns the unquoted texts of the file's strings, which [`Tok::String`] tokens index. `name` is used in error
/// messages.
pub fn lex_into(
    name: &str,
    src: &str,
    tokens: &mut Vec<Token>,
    syntax: &Syntax<'_>,
) -> Result<Vec<Arc<str>>, TemplateError> {
    // Go falls back to the default for an empty delimiter.
    let left = if syntax.left.is_empty() {
        "{{"
    } else {
        syntax.left
    };
    let right = if syntax.right.is_empty() {
        "}}"
    } else {
        syntax.right
    };
    if left == "{{" && right == "}}" {
        lex_with(name, src, tokens, Braces, syntax.funcs)
    } else {
        let delims = Custom {
            left: left.as_bytes(),
            right: right.as_bytes(),
        };
        lex_with(name, src, tokens, delims, syntax.funcs)
    }
}

fn lex_with<D: Delims>(
    name: &str,
    src: &str,
    tokens: &mut Vec<Token>,
    delims: D,
    funcs: &'static Funcs,
) -> Result<Vec<Arc<str>>, TemplateError> {
    tokens.clear();
    // Charts average one token per twelve bytes of template source, dense files one per eight: room for that means
    // few regrowths of a large vector. A vector too small is replaced, not grown: growing would copy its old
    // capacity, though it holds nothing.
    let room = src.len() / 8 + 16;
    if tokens.capacity() < room {
        *tokens = Vec::with_capacity(room);
    }
    let mut lexer = Lexer {
        name,
        src,
        pos: 0,
        tokens: std::mem::take(tokens),
        strings: Vec::new(),
        delims,
        funcs,
    };
    let r = lexer.run();
    *tokens = lexer.tokens;
    r.map(|()| lexer.strings)
}

/// Bytes that may continue an ASCII identifier (`_`, letters, digits).
static IDENT_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c == b'_' || c.is_ascii_alphanumeric();
        b += 1;
    }
    t
};

/// The offset of the first `{{`: a vectorised byte search for `{` (the `memchr` crate's, several times cheaper on
/// long text than the standard library's word-at-a-time `str::find`), then a look at the next byte.
fn find_left_delim(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl<'a, D: Delims> Lexer<'a, D> {
    fn error(&self, pos: usize, msg: impl Into<String>) -> TemplateError {
        TemplateError::parse(self.name, self.src, pos, msg.into())
    }

    fn run(&mut self) -> Result<(), TemplateError> {
        let bytes = self.src.as_bytes();
        let mut trim_next_text = false;
        loop {
            let rest = &self.src[self.pos..];
            let Some(open) = self.delims.find_left(rest) else {
                self.push_text(rest, trim_next_text, false);
                self.tokens.push(Token {
                    kind: Tok::Eof,
                    pos: self.src.len(),
                    end: self.src.len(),
                });
                return Ok(());
            };
            let action_start = self.pos + open;
            let left_len = self.delims.left_len();
            let trim_left = bytes.get(action_start + left_len) == Some(&b'-')
                && bytes
                    .get(action_start + left_len + 1)
                    .is_some_and(|c| is_space(*c));
            self.push_text(&rest[..open], trim_next_text, trim_left);
            let mut inner = action_start + left_len;
            if trim_left {
                inner += 2;
            }
            // Comments: `{{/*` or `{{- /*`.
            if self.src[inner..].starts_with("/*") {
                let Some(end) = memchr::memmem::find(&bytes[inner + 2..], b"*/") else {
                    return Err(self.error(action_start, "unclosed comment"));
                };
                let mut after = inner + 2 + end + 2;
                let mut trim_right = false;
                let right = self.delims.right();
                if bytes[after..].starts_with(b" -") && bytes[after + 2..].starts_with(right) {
                    trim_right = true;
                    after += 2 + right.len();
                } else if bytes[after..].starts_with(right) {
                    after += right.len();
                } else {
                    return Err(self.error(action_start, "comment ends before closing delimiter"));
                }
                self.tokens.push(Token {
                    kind: Tok::Comment,
                    pos: action_start,
                    end: after,
                });
                self.pos = after;
                trim_next_text = trim_right;
                continue;
            }
            self.tokens.push(Token {
                kind: Tok::LeftDelim,
                pos: action_start,
                end: inner,
            });
            self.pos = inner;
            trim_next_text = self.lex_inside_action(action_start)?;
        }
    }

    /// Records the text `text`, which starts at the current position, trimmed as the neighbouring markers ask.
    fn push_text(&mut self, text: &str, trim_start: bool, trim_end: bool) {
        let bytes = text.as_bytes();
        let mut from = 0;
        let mut to = bytes.len();
        if trim_start {
            while from < to && is_space(bytes[from]) {
                from += 1;
            }
        }
        if trim_end {
            while to > from && is_space(bytes[to - 1]) {
                to -= 1;
            }
        }
        if from < to {
            let start = self.pos + from;
            self.tokens.push(Token {
                kind: Tok::Text {
                    start,
                    end: self.pos + to,
                },
                pos: self.pos,
                end: self.pos,
            });
        }
    }

    /// Lexes tokens up to and including `}}`; returns whether the action ended with a right trim marker.
    fn lex_inside_action(&mut self, action_start: usize) -> Result<bool, TemplateError> {
        let bytes = self.src.as_bytes();
        let mut paren_depth = 0usize;
        loop {
            // Spaces, and a right trim marker (" -}}").
            while let Some(&c) = bytes.get(self.pos)
                && is_space(c)
            {
                // Most spaces are followed by a name: test one byte before comparing three.
                let right = self.delims.right();
                if bytes.get(self.pos + 1) == Some(&b'-')
                    && bytes
                        .get(self.pos + 2..)
                        .is_some_and(|b| b.starts_with(right))
                {
                    self.tokens.push(Token {
                        kind: Tok::RightDelim,
                        pos: self.pos + 2,
                        end: self.pos + 2 + right.len(),
                    });
                    self.pos += 2 + right.len();
                    return Ok(true);
                }
                self.pos += 1;
            }
            let Some(&c) = bytes.get(self.pos) else {
                return Err(self.error(action_start, "unclosed action"));
            };
            let start = self.pos;
            let right = self.delims.right();
            if c == right[0] && bytes[start..].starts_with(right) {
                if paren_depth > 0 {
                    return Err(self.error(start, "unclosed left paren"));
                }
                self.tokens.push(Token {
                    kind: Tok::RightDelim,
                    pos: start,
                    end: start + right.len(),
                });
                self.pos += right.len();
                return Ok(false);
            }
            let kind = match c {
                b'|' => {
                    self.pos += 1;
                    Tok::Pipe
                }
                b'(' => {
                    self.pos += 1;
                    paren_depth += 1;
                    Tok::LeftParen
                }
                b')' => {
                    self.pos += 1;
                    if paren_depth == 0 {
                        return Err(self.error(start, "unexpected right paren"));
                    }
                    paren_depth -= 1;
                    Tok::RightParen
                }
                b',' => {
                    self.pos += 1;
                    Tok::Comma
                }
                b'=' => {
                    self.pos += 1;
                    Tok::Assign
                }
                b':' => {
                    if bytes.get(self.pos + 1) != Some(&b'=') {
                        return Err(self.error(start, "expected :="));
                    }
                    self.pos += 2;
                    Tok::Declare
                }
                b'"' => {
                    let s = self.lex_quoted()?;
                    self.string(s)
                }
                b'`' => {
                    let Some(end) = memchr::memchr(b'`', &bytes[self.pos + 1..]) else {
                        return Err(self.error(start, "unterminated raw quoted string"));
                    };
                    let s = Arc::from(&self.src[self.pos + 1..self.pos + 1 + end]);
                    self.pos += end + 2;
                    self.string(s)
                }
                b'\'' => Tok::Char(self.lex_char()?),
                b'$' => {
                    self.pos += 1;
                    self.skip_alnum();
                    Tok::Variable
                }
                b'.' => {
                    if bytes.get(self.pos + 1).is_some_and(|c| c.is_ascii_digit()) {
                        self.take_number();
                        Tok::Number
                    } else {
                        self.pos += 1;
                        let name_start = self.pos;
                        self.skip_alnum();
                        if self.pos == name_start {
                            Tok::Dot
                        } else {
                            Tok::Field
                        }
                    }
                }
                b'+' | b'-' | b'0'..=b'9' => {
                    self.take_number();
                    Tok::Number
                }
                c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                    let word = self.take_alnum();
                    if word.is_empty() {
                        return Err(self.error(
                            start,
                            format!("unrecognized character in action: {:?}", c as char),
                        ));
                    }
                    match word {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "nil" => Tok::Nil,
                        w => match Keyword::from_word(w) {
                            Some(k) => Tok::Keyword(k),
                            None => match function_name(w, self.funcs) {
                                Some(f) => Tok::Function(f),
                                None => Tok::Identifier,
                            },
                        },
                    }
                }
                _ => {
                    let ch = self.src[self.pos..].chars().next().unwrap_or('?');
                    return Err(
                        self.error(start, format!("unrecognized character in action: {ch:?}"))
                    );
                }
            };
            self.tokens.push(Token {
                kind,
                pos: start,
                end: self.pos,
            });
        }
    }

    /// A string token for the text `s`. Sources are below 4 GiB (the parser checks) and each string takes at least
    /// two bytes, so the index fits a `u32`.
    fn string(&mut self, s: Arc<str>) -> Tok {
        self.strings.push(s);
        Tok::String((self.strings.len() - 1) as u32)
    }

    /// Moves past a name and returns it.
    fn take_alnum(&mut self) -> &'a str {
        let start = self.pos;
        self.skip_alnum();
        let src: &'a str = self.src;
        &src[start..self.pos]
    }

    /// Moves past a name (letters, digits, `_`): fields and variables need only where it ends.
    fn skip_alnum(&mut self) {
        let start = self.pos;
        let src: &'a str = self.src;
        let bytes = src.as_bytes();
        // A plain indexed loop: the iterator's `position` cost twice as many instructions per name.
        let mut ascii_end = start;
        while let Some(&b) = bytes.get(ascii_end)
            && IDENT_BYTE[usize::from(b)]
        {
            ascii_end += 1;
        }
        if bytes.get(ascii_end).is_none_or(|&b| b < 0x80) {
            self.pos = ascii_end;
            return;
        }
        self.pos = src[start..]
            .char_indices()
            .find(|&(_, ch)| !(ch == '_' || ch.is_alphanumeric()))
            .map_or(src.len(), |(i, _)| start + i);
    }

    /// Moves past a number literal.
    fn take_number(&mut self) {
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let mut i = self.pos;
        if matches!(bytes.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        while let Some(&c) = bytes.get(i) {
            let prev = if i > start { bytes[i - 1] } else { 0 };
            let exp_sign = (c == b'+' || c == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P');
            if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exp_sign {
                i += 1;
            } else {
                break;
            }
        }
        self.pos = i;
    }

    fn lex_quoted(&mut self) -> Result<Arc<str>, TemplateError> {
        let start = self.pos;
        // Most strings have no escapes: take them straight from the source.
        let body = &self.src[start + 1..];
        if let Some(end) = memchr::memchr3(b'"', b'\\', b'\n', body.as_bytes())
            && body.as_bytes()[end] == b'"'
        {
            self.pos = start + 1 + end + 1;
            return Ok(Arc::from(&body[..end]));
        }
        let mut out = String::new();
        let mut chars = self.src[self.pos + 1..].char_indices();
        while let Some((i, ch)) = chars.next() {
            match ch {
                '"' => {
                    self.pos = start + 1 + i + 1;
                    return Ok(Arc::from(out));
                }
                '\n' => break,
                '\\' => {
                    let Some((_, esc)) = chars.next() else { break };
                    match esc {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'a' => out.push('\x07'),
                        'b' => out.push('\x08'),
                        'f' => out.push('\x0c'),
                        'v' => out.push('\x0b'),
                        '\\' => out.push('\\'),
                        '"' => out.push('"'),
                        '\'' => out.push('\''),
                        'x' | 'u' | 'U' => {
                            let n = match esc {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = (0..n)
                                .filter_map(|_| chars.next().map(|(_, c)| c))
                                .collect();
                            let code = u32::from_str_radix(&hex, 16).map_err(|_| {
                                self.error(start, "invalid escape in quoted string")
                            })?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        '0'..='7' => {
                            let mut oct = esc.to_string();
                            for _ in 0..2 {
                                if let Some((_, c)) = chars.next() {
                                    oct.push(c);
                                }
                            }
                            let code = u32::from_str_radix(&oct, 8).map_err(|_| {
                                self.error(start, "invalid escape in quoted string")
                            })?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error(start, "invalid syntax in quoted string")),
                    }
                }
                c => out.push(c),
            }
        }
        Err(self.error(start, "unterminated quoted string"))
    }

    fn lex_char(&mut self) -> Result<char, TemplateError> {
        let start = self.pos;
        let rest = &self.src[self.pos + 1..];
        let Some(end) = memchr::memchr(b'\'', rest.as_bytes()) else {
            return Err(self.error(start, "unterminated character constant"));
        };
        let body = &rest[..end];
        let ch = match body {
            "\\n" => '\n',
            "\\t" => '\t',
            "\\\\" => '\\',
            "\\'" => '\'',
            _ => {
                let mut it = body.chars();
                match (it.next(), it.next()) {
                    (Some(c), None) => c,
                    _ => return Err(self.error(start, "malformed character constant")),
                }
            }
        };
        self.pos += end + 2;
        Ok(ch)
    }
}

/// A function named in a template, resolved while lexing (Go resolves it while parsing): the function table's own spelling of the
/// name, and the function unless the evaluator binds it itself ([`crate::funcs::Funcs::late_bound`]).
#[derive(Debug, Clone, Copy)]
pub struct FunctionRef {
    pub name: &'static str,
    pub func: Option<crate::call::Func>,
}

/// Function references are equal when they name the same function (one name, one function).
impl PartialEq for FunctionRef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// `name` resolved against `funcs`, if it is a function there.
pub fn function_name(name: &str, funcs: &'static Funcs) -> Option<FunctionRef> {
    if let Some(late) = funcs.late_bound(name) {
        return Some(FunctionRef {
            name: late,
            func: None,
        });
    }
    funcs.resolve(name).map(|(name, func)| FunctionRef {
        name,
        func: Some(func),
    })
}
