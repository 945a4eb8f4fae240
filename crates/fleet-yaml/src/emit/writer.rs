//! The block-style document writer: libyaml's emitter rules (as go-yaml runs them with 2-space indents, width 80
//! and unicode output) for the node shapes a JSON value can have.

use serde_json::{Map, Value};

use super::keys::{self, KeyOrder};
use super::scalar::{self, Style};

/// Indent step and line width of go-yaml's encoder.
const INDENT: usize = 2;
const WIDTH: usize = 80;

/// Writes one document in go-yaml's block style, ending with a newline.
pub(crate) fn marshal(value: &Value, order: KeyOrder) -> String {
    let mut w = Writer {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
        order,
    };
    match value {
        Value::Object(map) if !map.is_empty() => w.mapping(map, 0),
        Value::Array(items) if !items.is_empty() => w.sequence(items, 0),
        // A root scalar continues at one indent step, as libyaml's flow indent for the root.
        scalar => w.scalar_node(scalar, INDENT, false),
    }
    // Document end: finish the last line.
    w.write_indent(0);
    w.out
}

struct Writer {
    out: String,
    /// Characters on the current line.
    column: usize,
    /// The last character written was whitespace (no separating space needed).
    whitespace: bool,
    /// Only indentation (and indicators like `- `) is on the current line so far.
    indention: bool,
    order: KeyOrder,
}

impl Writer {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// A line break inside a scalar: LF as a new line, other breaks (LS, PS, NEL, CR) written as they are.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// A block mapping whose keys start at column `indent`.
    fn mapping(&mut self, map: &Map<String, Value>, indent: usize) {
        for key in keys::sorted(self.order, map.keys()) {
            let value = &map[key];
            if scalar::simple_key(key) {
                self.write_indent(indent);
                self.string(key, indent + INDENT, true);
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indent(indent);
                self.write_indicator("?", true, false, true);
                self.string(key, indent + INDENT, false);
                self.write_indent(indent);
                self.write_indicator(":", true, false, true);
            }
            self.value(value, indent, true);
        }
    }

    /// A block sequence whose `- ` indicators start at column `indent`.
    fn sequence(&mut self, items: &[Value], indent: usize) {
        for item in items {
            self.write_indent(indent);
            self.write_indicator("-", true, false, true);
            self.value(item, indent, false);
        }
    }

    /// A mapping value or sequence item inside a collection at `indent`.
    fn value(&mut self, value: &Value, indent: usize, in_mapping: bool) {
        match value {
            Value::Object(map) if !map.is_empty() => self.mapping(map, indent + INDENT),
            // Sequences under a mapping key are not indented (unless the key line holds only indentation).
            Value::Array(items) if !items.is_empty() => {
                let indentless = in_mapping && !self.indention;
                self.sequence(items, if indentless { indent } else { indent + INDENT });
            }
            scalar => self.scalar_node(scalar, indent + INDENT, false),
        }
    }

    /// A scalar or empty collection; `indent` is where continuation lines start.
    fn scalar_node(&mut self, value: &Value, indent: usize, simple_key: bool) {
        match value {
            Value::Null => self.plain("null", indent, !simple_key),
            Value::Bool(b) => self.plain(if *b { "true" } else { "false" }, indent, !simple_key),
            Value::Number(n) => self.plain(&scalar::number(n), indent, !simple_key),
            Value::String(s) => self.string(s, indent, simple_key),
            Value::Object(_) => {
                self.write_indicator("{", true, true, false);
                self.write_indicator("}", false, false, false);
            }
            Value::Array(_) => {
                self.write_indicator("[", true, true, false);
                self.write_indicator("]", false, false, false);
            }
        }
    }

    fn string(&mut self, s: &str, indent: usize, simple_key: bool) {
        let allow_breaks = !simple_key;
        match scalar::string_style(s, simple_key) {
            Style::Plain => self.plain(s, indent, allow_breaks),
            Style::Single => self.single_quoted(s, indent, allow_breaks),
            Style::Double => self.double_quoted(s, indent, allow_breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        // A line break can only replace a space written past the width: without one, the text goes out whole.
        let count = s.chars().count();
        if !allow_breaks || self.column + count <= WIDTH + 1 || !s.contains(' ') {
            self.out.push_str(s);
            self.column += count;
            self.whitespace = false;
            self.indention = false;
            return;
        }
        let mut chars = s.chars().peekable();
        let mut spaces = false;
        while let Some(c) = chars.next() {
            if c == ' ' {
                if allow_breaks && !spaces && self.column > WIDTH && chars.peek() != Some(&' ') {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let inner = i > 0 && i + 1 < chars.len();
                if allow_breaks
                    && !spaces
                    && self.column > WIDTH
                    && inner
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if scalar::is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !scalar::is_printable(c)
                || c == '\u{feff}'
                || scalar::is_break(c)
                || c == '"'
                || c == '\\'
            {
                self.escape(c);
                spaces = false;
            } else if c == ' ' {
                let inner = i > 0 && i + 1 < chars.len();
                if allow_breaks && !spaces && self.column > WIDTH && inner {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn escape(&mut self, c: char) {
        self.put('\\');
        let short = match c {
            '\0' => Some('0'),
            '\u{7}' => Some('a'),
            '\u{8}' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\u{b}' => Some('v'),
            '\u{c}' => Some('f'),
            '\r' => Some('r'),
            '\u{1b}' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{a0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        if let Some(s) = short {
            self.put(s);
            return;
        }
        let code = u32::from(c);
        let (marker, width) = match code {
            0..=0xff => ('x', 2),
            0x100..=0xffff => ('u', 4),
            _ => ('U', 8),
        };
        self.put(marker);
        for c in format!("{code:0width$X}").chars() {
            self.put(c);
        }
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.write_indicator("|", true, false, false);
        if s.chars()
            .next()
            .is_some_and(|c| c == ' ' || scalar::is_break(c))
        {
            self.write_indicator(&INDENT.to_string(), false, false, false);
        }
        let mut back = s.chars().rev();
        let chomp = match (back.next(), back.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !scalar::is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before)) if scalar::is_break(before) => Some("+"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(chomp, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        // Each line's text is written whole; the break after it as libyaml writes breaks.
        let mut rest = s;
        while !rest.is_empty() {
            let (cut, line_break) =
                next_break(rest).map_or((rest.len(), None), |(at, c)| (at, Some(c)));
            let text = &rest[..cut];
            if !text.is_empty() {
                if breaks {
                    self.write_indent(indent);
                    breaks = false;
                }
                self.out.push_str(text);
                self.column += text.chars().count();
                self.indention = false;
            }
            rest = &rest[cut..];
            if let Some(c) = line_break {
                self.write_break(c);
                self.indention = true;
                breaks = true;
                rest = &rest[c.len_utf8()..];
            }
        }
    }
}

/// The first line break in `s` (see [`scalar::is_break`]) and where it is: a byte scan for the bytes a break can
/// start with (`\n`, `\r`, and the lead bytes of NEL, LS and PS), each candidate then read as a character.
fn next_break(s: &str) -> Option<(usize, char)> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes[from..]
        .iter()
        .position(|&b| matches!(b, b'\n' | b'\r' | 0xC2 | 0xE2))
    {
        let at = from + offset;
        let c = s[at..].chars().next()?;
        if scalar::is_break(c) {
            return Some((at, c));
        }
        from = at + c.len_utf8();
    }
    None
}
