//! A quick reader for the block YAML that Helm values files and `Chart.yaml` files are nearly always written in: block
//! mappings and sequences, plain scalars on one line (or plain words folded over several lines), quoted scalars on one
//! line, `|`/`|-` literal block scalars, `[]` and `{}`, comments, anchors on one-line scalars and their aliases, a bare
//! `---` before the document or with only blank lines after it. Anything else — other anchors and aliases, tags, other
//! flow collections, folded or other multi-line scalars, several documents, tabs, duplicate keys, and plain scalars
//! whose reading is not plainly a string, an integer or a decimal — makes it give up (`None`), and the caller reads the
//! text with the full parser. Where it answers, the answer is the full parser's, built through [`Build`]: scalars
//! resolve by the same rules, numbers as Go reads them back from JSON (checked against it on every corpus file in the
//! tests).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Number, Value};

use super::build::Build;
#[cfg(test)]
use super::build::JsonTree;
use crate::resolve;

/// Deepest nesting handled here (the full parser's limit is far above anything it meets).
const MAX_DEPTH: usize = 128;
/// Most nodes read here (the full parser's default limit is 2,000,000).
const MAX_NODES: usize = 1_000_000;
/// Most aliases read here (each repeats one scalar).
const MAX_ALIASES: usize = 10_000;

/// The first document of `text` as the full reader returns it, or `None` when the text is outside the subset read
/// here.
#[cfg(test)]
pub(crate) fn first_value(text: &str) -> Option<Value> {
    first_value_with(text, &mut JsonTree)
}

/// The first document of `text` built by `build`, numbers as Go reads them back from JSON (integral floats as
/// integers), or `None` when the text is outside the subset read here.
pub(crate) fn first_value_with<B: Build>(text: &str, build: &mut B) -> Option<B::Node> {
    if memchr::memchr2(b'\t', b'\r', text.as_bytes()).is_some()
        || memchr::memmem::find(text.as_bytes(), "\u{feff}".as_bytes()).is_some()
    {
        return None;
    }
    let mut lines = Vec::new();
    let mut raws = split_lines(text);
    while let Some(raw) = raws.next() {
        let indent = raw.bytes().take_while(|&b| b == b' ').count();
        let content = &raw[indent..];
        if content.starts_with("---") || content.starts_with("...") || content.starts_with('%') {
            // Only a bare `---` before any content, or after it with nothing but blank lines to follow (an empty
            // second document), is accepted: other documents, directives and markers go to the full reader.
            if indent == 0 && content == "---" && lines.iter().all(|l: &Line| l.is_blank()) {
                lines.clear();
                continue;
            }
            if indent == 0 && content == "---" && raws.clone().all(|r| r.bytes().all(|b| b == b' '))
            {
                // The first document ends with the line break before the marker.
                lines.push(Line {
                    indent: 0,
                    content: "",
                });
                break;
            }
            if indent == 0 {
                return None;
            }
        }
        lines.push(Line { indent, content });
    }
    let mut reader = Reader {
        lines,
        at: 0,
        depth: 0,
        nodes: 0,
        anchors: HashMap::new(),
        aliases: 0,
        build,
    };
    reader.skip_blank();
    if reader.at >= reader.lines.len() {
        return Some(reader.build.scalar(Value::Null));
    }
    let first = reader.lines[reader.at];
    let value = if first.content.starts_with(['{', '[']) {
        // A flow collection as the whole document (`{}` is what templates most often hand `fromYaml`).
        reader.at += 1;
        reader.inline_scalar(first.content, first.indent)?
    } else {
        reader.node(first.indent)?
    };
    reader.skip_blank();
    (reader.at >= reader.lines.len()).then_some(value)
}

#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    content: &'a str,
}

impl Line<'_> {
    /// Empty, spaces only, or a comment.
    fn is_blank(&self) -> bool {
        self.content.is_empty() || self.content.starts_with('#')
    }
}

struct Reader<'a, 'b, B: Build> {
    lines: Vec<Line<'a>>,
    at: usize,
    depth: usize,
    /// Nodes read so far (bounded well below the full parser's node limit).
    nodes: usize,
    /// Anchored scalars so far, by name (a later anchor of the same name replaces an earlier one). A map, so a
    /// hostile text with many anchors and aliases costs one lookup per alias, not a search of every anchor.
    anchors: HashMap<&'a str, Value>,
    /// Aliases read so far (bounded well below the full parser's alias replay limit).
    aliases: usize,
    build: &'b mut B,
}

impl<'a, B: Build> Reader<'a, '_, B> {
    /// A scalar node, its number read as Go reads it back from JSON.
    fn scalar(&mut self, value: Value) -> B::Node {
        let value = match value {
            Value::Number(n) => Value::Number(resolve::go_json_number(&n)),
            other => other,
        };
        self.build.scalar(value)
    }

    fn skip_blank(&mut self) {
        while self.at < self.lines.len() && self.lines[self.at].is_blank() {
            self.at += 1;
        }
    }

    /// The next non-blank line, if any.
    fn peek(&mut self) -> Option<Line<'a>> {
        self.skip_blank();
        self.lines.get(self.at).copied()
    }

    /// A block node starting at the current line, which has indentation `indent`.
    fn node(&mut self, indent: usize) -> Option<B::Node> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.count()?;
        let line = self.peek()?;
        let v = if is_item(line.content) {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        };
        self.depth -= 1;
        v
    }

    fn sequence(&mut self, indent: usize) -> Option<B::Node> {
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            if !is_item(line.content) {
                // A key of the mapping this sequence is the value of (or, at the top, an error).
                break;
            }
            let rest = &line.content[1..];
            let body = rest.trim_start_matches(' ');
            if body.is_empty() || body.starts_with('#') {
                self.at += 1;
                items.push(self.nested(indent, false)?);
                continue;
            }
            // The item's content starts mid-line: read it as a line of its own at its column.
            let column = indent + 1 + (rest.len() - body.len());
            self.lines[self.at] = Line {
                indent: column,
                content: body,
            };
            if is_item(body) || is_mapping_entry(body) {
                items.push(self.node(column)?);
            } else {
                self.at += 1;
                items.push(self.inline_scalar(body, indent)?);
            }
        }
        Some(self.build.sequence(items))
    }

    /// The value of a key or item whose line ends after the indicator: a more indented block node, a sequence at
    /// the key's own indentation (for mapping values), or null.
    fn nested(&mut self, indent: usize, mapping_value: bool) -> Option<B::Node> {
        match self.peek() {
            Some(next)
                if next.indent > indent
                    && !is_item(next.content)
                    && !is_mapping_entry(next.content)
                    && !next.content.starts_with('|') =>
            {
                // A scalar on a line of its own.
                self.at += 1;
                self.inline_scalar(next.content, indent)
            }
            Some(next) if next.indent > indent => self.node(next.indent),
            Some(next) if mapping_value && next.indent == indent && is_item(next.content) => {
                self.node(indent)
            }
            _ => Some(self.scalar(Value::Null)),
        }
    }

    fn mapping(&mut self, indent: usize) -> Option<B::Node> {
        let mut map = self.build.new_map();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let (key, rest) = split_key(line.content)?;
            self.at += 1;
            let body = rest.trim_start_matches(' ');
            let value = if body.is_empty() || body.starts_with('#') {
                self.nested(indent, true)?
            } else if rest.len() == body.len() {
                return None;
            } else {
                self.inline_scalar(body, indent)?
            };
            // A duplicate key is left to the full parser (which knows the policy for it).
            if !self.build.insert(&mut map, key.into_owned(), value) {
                return None;
            }
        }
        Some(self.build.mapping(map))
    }

    fn count(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    /// A scalar (or `[]`/`{}`) written after a key or item indicator on a line already consumed; `indent` is the
    /// indentation of the entry it belongs to.
    fn inline_scalar(&mut self, body: &'a str, indent: usize) -> Option<B::Node> {
        self.count()?;
        let value = match body.as_bytes()[0] {
            b'"' => self.scalar(Value::String(after_scalar(double_quoted(body)?)?)),
            b'\'' => self.scalar(Value::String(after_scalar(single_quoted(body)?)?)),
            b'|' => return self.literal(body, indent),
            b'[' => {
                let items = flow_sequence(body)?
                    .into_iter()
                    .map(|item| self.scalar(item))
                    .collect();
                self.build.sequence(items)
            }
            b'{' => match strip_comment(body).strip_prefix('{')?.strip_suffix('}') {
                Some(inner) if inner.trim_matches(' ').is_empty() => {
                    let map = self.build.new_map();
                    self.build.mapping(map)
                }
                _ => return None,
            },
            b'&' => {
                // An anchored one-line scalar (`&name value`), kept for the aliases that repeat it.
                let (name, rest) = body[1..].split_once(' ')?;
                let rest = rest.trim_start_matches(' ');
                let value = match rest.as_bytes().first()? {
                    b'"' => Value::String(after_scalar(double_quoted(rest)?)?),
                    b'\'' => Value::String(after_scalar(single_quoted(rest)?)?),
                    _ => plain(strip_comment(rest))?,
                };
                if !is_anchor_name(name) || rest.starts_with('#') {
                    return None;
                }
                self.anchors.insert(name, value.clone());
                self.scalar(value)
            }
            b'*' => {
                // An alias of an anchored scalar.
                let name = strip_comment(&body[1..]);
                self.aliases += 1;
                if !is_anchor_name(name) || self.aliases > MAX_ALIASES {
                    return None;
                }
                let value = self.anchors.get(name)?.clone();
                self.scalar(value)
            }
            _ => {
                let text = strip_comment(body);
                let commented = text.len() < body.trim_end_matches(' ').len();
                match self.lines.get(self.at) {
                    Some(next) if !commented && !next.is_blank() && next.indent > indent => {
                        let value = self.multi_line_plain(text, indent)?;
                        self.scalar(value)
                    }
                    _ => match plain_reading(text)? {
                        Plain::Text => self.build.string(text),
                        Plain::Other(value) => self.scalar(value),
                    },
                }
            }
        };
        // A more indented line after a one-line scalar would continue it (or be an error): not read here.
        match self.peek() {
            Some(next) if next.indent > indent => None,
            _ => Some(value),
        }
    }

    /// A plain scalar whose first line `first` was consumed and which continues on the following, more indented
    /// lines (each line break folds to a space). Only lines of plain words are taken: a blank or comment line, or
    /// one with an indicator or `: `/` #`, is left to the full parser, and so is any result but a string.
    fn multi_line_plain(&mut self, first: &str, indent: usize) -> Option<Value> {
        let mut text = first.to_string();
        while let Some(&line) = self.lines.get(self.at) {
            if line.is_blank() {
                // A blank or comment line ends the scalar if what follows is not more indented; else it is a line
                // break inside it (or an error), left to the full parser.
                match self.peek() {
                    Some(next) if next.indent > indent => return None,
                    _ => break,
                }
            }
            if line.indent <= indent {
                break;
            }
            let words = line.content.trim_end_matches(' ');
            if !words.starts_with(|c: char| c.is_ascii_alphanumeric())
                || has_pair(words, b':', b' ')
                || has_pair(words, b' ', b'#')
                || words.ends_with(':')
            {
                return None;
            }
            text.push(' ');
            text.push_str(words);
            self.at += 1;
        }
        match plain(&text)? {
            Value::String(s) => Some(Value::String(s)),
            _ => None,
        }
    }

    /// A `|` or `|-` block scalar whose header is `header`; the content follows the current line.
    fn literal(&mut self, header: &str, indent: usize) -> Option<B::Node> {
        let strip = match strip_comment(header) {
            "|" => false,
            "|-" => true,
            _ => return None,
        };
        // Content lines are read raw: comments and blank lines belong to the scalar.
        let start = self.at;
        let mut content_indent = None;
        let mut end = start;
        while end < self.lines.len() {
            let l = self.lines[end];
            if l.content.is_empty() {
                end += 1;
                continue;
            }
            match content_indent {
                None if l.indent > indent => content_indent = Some(l.indent),
                None => break,
                Some(ci) if l.indent >= ci => {}
                Some(_) => break,
            }
            end += 1;
        }
        let Some(ci) = content_indent else {
            // No content: the scalar is empty; blank lines up to here are just blank.
            self.at = end;
            return Some(self.scalar(Value::String(String::new())));
        };
        // A kept final line break (`|`) needs one at the end of the text; else the scalar is left to the parser.
        if !strip
            && end == self.lines.len()
            && self.lines.last().is_some_and(|l| !l.content.is_empty())
        {
            return None;
        }
        let mut out = String::new();
        let mut seen_content = false;
        for l in &self.lines[start..end] {
            if l.content.is_empty() {
                if l.indent > ci {
                    // Leading blank lines longer than the content indentation are an error for YAML.
                    if !seen_content {
                        return None;
                    }
                    out.push_str(&" ".repeat(l.indent - ci));
                }
            } else {
                seen_content = true;
                out.push_str(&" ".repeat(l.indent - ci));
                out.push_str(l.content);
            }
            out.push('\n');
        }
        self.at = end;
        let trimmed = out.trim_end_matches('\n');
        let value = if strip || trimmed.is_empty() {
            trimmed.to_string()
        } else {
            format!("{trimmed}\n")
        };
        Some(self.scalar(Value::String(value)))
    }
}

/// Whether `name` is an anchor name taken here (ASCII letters, digits, `_`, `-` and `.`; the full parser reads
/// any other).
fn is_anchor_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// Whether a line's content is a block sequence item (`-` then a space or the end).
fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// Whether a line's content starts with a `key:` (a plain or quoted key followed by `: ` or a line end).
fn is_mapping_entry(content: &str) -> bool {
    split_key(content).is_some()
}

/// The key of a mapping entry line and what follows its `:`.
fn split_key(content: &str) -> Option<(Cow<'_, str>, &str)> {
    let first = content.as_bytes()[0];
    if first == b'"' || first == b'\'' {
        let (key, rest) = if first == b'"' {
            double_quoted(content)?
        } else {
            single_quoted(content)?
        };
        // Quoted keys that read like numbers are converted by the full reader; leave those to it.
        if crate::resolve::starts_like_number(&key) {
            return None;
        }
        let rest = rest.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((Cow::Owned(key), rest));
    }
    let colon = memchr::memchr_iter(b':', content.as_bytes())
        .find(|&i| matches!(content.as_bytes().get(i + 1), None | Some(b' ')))?;
    let key = &content[..colon];
    // A ` #` in the key (a comment) makes plain_reading give up too.
    if key.is_empty() || key.ends_with(' ') || key == "<<" {
        return None;
    }
    let key = match plain_reading(key)? {
        Plain::Text => Cow::Borrowed(key),
        Plain::Other(Value::Number(n)) if n.is_u64() => Cow::Owned(n.to_string()),
        _ => return None,
    };
    Some((key, &content[colon + 1..]))
}

/// A one-line flow sequence of scalars (`[a, "b", 'c']`); nested collections and empty entries are left to the
/// full parser.
fn flow_sequence(body: &str) -> Option<Vec<Value>> {
    let mut rest = body.strip_prefix('[')?.trim_start_matches(' ');
    let mut items = Vec::new();
    if let Some(after) = rest.strip_prefix(']') {
        return after_flow(after, items);
    }
    loop {
        let (item, after) = match rest.as_bytes().first()? {
            b'"' => {
                let (v, after) = double_quoted(rest)?;
                (Value::String(v), after)
            }
            b'\'' => {
                let (v, after) = single_quoted(rest)?;
                (Value::String(v), after)
            }
            _ => {
                let end = rest.find([',', ']'])?;
                let text = rest[..end].trim_end_matches(' ');
                if text.is_empty() || text.contains(['[', '{', '}', '#', ':']) {
                    return None;
                }
                (plain(text)?, &rest[end..])
            }
        };
        items.push(item);
        let after = after.trim_start_matches(' ');
        if let Some(after) = after.strip_prefix(']') {
            return after_flow(after, items);
        }
        rest = after.strip_prefix(',')?.trim_start_matches(' ');
    }
}

/// What may follow a flow collection on its line: spaces and a comment.
fn after_flow(after: &str, items: Vec<Value>) -> Option<Vec<Value>> {
    let trimmed = after.trim_start_matches(' ');
    let ok = trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < after.len());
    ok.then_some(items)
}

/// The lines of `text` without their `\n` (as `text.split('\n')`, a last empty line included), found with a
/// vectorised byte search: values files are mostly long comment lines.
pub(super) fn split_lines(text: &str) -> impl Iterator<Item = &str> + Clone {
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    ends.scan(0, move |start, end| {
        let line = &text[*start..end];
        *start = end + 1;
        Some(line)
    })
}

/// Where the two-byte sequence `first` `second` (e.g. `: ` or ` #`) first starts in `s`: a vectorised search for the
/// rarer of the two bytes (the one that is not a space), each hit checked against its neighbour.
fn find_pair(s: &str, first: u8, second: u8) -> Option<usize> {
    let b = s.as_bytes();
    if first == b' ' {
        memchr::memchr_iter(second, b)
            .find(|&i| i > 0 && b[i - 1] == b' ')
            .map(|i| i - 1)
    } else {
        memchr::memchr_iter(first, b).find(|&i| b.get(i + 1) == Some(&second))
    }
}

fn has_pair(s: &str, first: u8, second: u8) -> bool {
    find_pair(s, first, second).is_some()
}

/// Whether `s` has a `: `, a final `:` or a ` #`, which a plain scalar cannot hold: one search for both bytes.
fn breaks_plain(s: &str) -> bool {
    let b = s.as_bytes();
    memchr::memchr2_iter(b':', b'#', b).any(|i| match b[i] {
        b':' => b.get(i + 1).is_none_or(|&n| n == b' '),
        _ => i > 0 && b[i - 1] == b' ',
    })
}

/// A plain scalar's text with a trailing comment and spaces removed.
fn strip_comment(s: &str) -> &str {
    let cut = find_pair(s, b' ', b'#').unwrap_or(s.len());
    s[..cut].trim_end_matches(' ')
}

/// The rest of a line after a quoted scalar must be empty or a comment.
fn after_scalar((value, rest): (String, &str)) -> Option<String> {
    let trimmed = rest.trim_start_matches(' ');
    let ok = trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len());
    ok.then_some(value)
}

/// A one-line double-quoted scalar at the start of `s`: its value and the text after the closing quote.
fn double_quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 2..])),
            '\\' => {
                let (_, e) = chars.next()?;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    '"' => '"',
                    '\\' => '\\',
                    _ => return None,
                });
            }
            c => out.push(c),
        }
    }
    None
}

/// A one-line single-quoted scalar at the start of `s`: its value and the text after the closing quote.
fn single_quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let body = &s[1..];
    let mut i = 0;
    while let Some(off) = body[i..].find('\'') {
        out.push_str(&body[i..i + off]);
        let q = i + off;
        if body[q + 1..].starts_with('\'') {
            out.push('\'');
            i = q + 2;
        } else {
            return Some((out, &body[q + 1..]));
        }
    }
    None
}

/// A one-line plain scalar as the full reader resolves it, when that is plain to see: null, a YAML 1.1 boolean
/// word, a decimal integer or decimal fraction, or text that no number or boolean reading can take. `None` for
/// everything else (radix and exponent numbers, `.inf`, sexagesimal, merge keys, indicators…).
fn plain(s: &str) -> Option<Value> {
    plain_reading(s).map(|reading| match reading {
        Plain::Text => Value::String(s.to_string()),
        Plain::Other(v) => v,
    })
}

/// How a plain scalar reads: as its own text, or as another value.
enum Plain {
    Text,
    Other(Value),
}

/// [`plain`], without copying a text that reads as itself.
fn plain_reading(s: &str) -> Option<Plain> {
    if s.is_empty() || s == "~" || s.eq_ignore_ascii_case("null") {
        return Some(Plain::Other(Value::Null));
    }
    if breaks_plain(s) {
        return None;
    }
    let first = s.as_bytes()[0];
    if first.is_ascii_alphabetic() {
        let word = ["y", "yes", "true", "on", "n", "no", "false", "off"]
            .iter()
            .any(|w| s.eq_ignore_ascii_case(w));
        if word {
            return Some(match resolve::V2_BOOLEANS.iter().position(|b| *b == s) {
                Some(i) => Plain::Other(Value::Bool(i < 11)),
                None => Plain::Text,
            });
        }
        // `inf`, `infinity` and `nan` stay text too: only `.inf`-style spellings and digits are YAML floats.
        return Some(Plain::Text);
    }
    if first.is_ascii_digit() {
        return digits_first(s);
    }
    if first == b'-' {
        let rest = &s[1..];
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return match digits_first(rest)? {
                Plain::Other(Value::Number(n)) => negate(&n).map(Plain::Other),
                // `-1.2.3`, `-2024-01-01`: text either way.
                _ => (!rest.contains(['e', 'E'])).then_some(Plain::Text),
            };
        }
        if rest.starts_with('-') || rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Some(Plain::Text);
        }
        return None;
    }
    let second = s.as_bytes().get(1).copied().unwrap_or(b' ');
    if matches!(first, b'/' | b'$' | b'(' | b'^')
        || (first == b'_' && (second == b'_' || second.is_ascii_alphabetic()))
    {
        return Some(Plain::Text);
    }
    None
}

/// A plain scalar starting with a digit: a decimal integer or fraction, or text that cannot be a number.
fn digits_first(s: &str) -> Option<Plain> {
    let b = s.as_bytes();
    if b.iter().all(u8::is_ascii_digit) {
        if (b[0] == b'0' && b.len() > 1) || b.len() > 18 {
            return None;
        }
        return s
            .parse::<u64>()
            .ok()
            .map(|n| Plain::Other(Value::Number(n.into())));
    }
    if let Some((whole, frac)) = s.split_once('.')
        && !whole.is_empty()
        && !frac.is_empty()
        && whole
            .bytes()
            .chain(frac.bytes())
            .all(|c| c.is_ascii_digit())
    {
        if (whole.starts_with('0') && whole.len() > 1) || whole.len() + frac.len() > 15 {
            return None;
        }
        return s
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(|n| Plain::Other(Value::Number(n)));
    }
    // Digits with dots (`1.2.3`, `10.0.0.1`) or inner dashes (`2024-01-01`) only: no reading takes them as numbers.
    let dotted = s.bytes().filter(|&c| c == b'.').count() >= 2
        && s.bytes().all(|c| c.is_ascii_digit() || c == b'.');
    let dashed = s.bytes().all(|c| c.is_ascii_digit() || c == b'-');
    if dotted || dashed {
        return Some(Plain::Text);
    }
    // Any character no decimal number spelling uses (`128Mi`, `10s`, `30d`): text, unless a radix prefix
    // (`0x1F`, `0o17`, `0b1`) makes letters digits.
    const NUMERIC: &[u8] = b"0123456789_.+-eE:";
    let radix =
        s.len() > 1 && b[0] == b'0' && matches!(b[1], b'x' | b'X' | b'o' | b'O' | b'b' | b'B');
    if !radix && s.bytes().any(|c| !NUMERIC.contains(&c)) {
        return Some(Plain::Text);
    }
    None
}

fn negate(n: &Number) -> Option<Value> {
    if let Some(u) = n.as_u64() {
        return i64::try_from(u).ok().map(|i| Value::Number((-i).into()));
    }
    n.as_f64()
        .and_then(|f| Number::from_f64(-f))
        .map(Value::Number)
}
