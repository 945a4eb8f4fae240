//! YAML as Helm sees it. Reading: YAML 1.1 through serde-saphyr, then — like `sigs.k8s.io/yaml` — through JSON, so
//! every number becomes a Go float64. Writing: Helm's `toYaml` (`sigs.k8s.io/yaml.Marshal`: JSON first, then
//! go-yaml v2's emitter): sorted keys with go-yaml's natural ordering, indentless sequences, go-yaml's quoting and
//! block-scalar rules, and folding of long scalars at 80 columns.
//!
//! Stopgap until `fleet_yaml::emit::helm::to_yaml` and `fleet_yaml::parse` are published by their owner.

use std::cmp::Ordering;

use crate::funcs::encoding::go_json_float;
use crate::gofmt::format_float_g;
use crate::value::{Value, as_f64, as_list, as_map, from_json};
use minijinja::value::ValueKind;

const BEST_WIDTH: usize = 80;

fn saphyr_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.legacy_octal_numbers = true;
    o.duplicate_keys = serde_saphyr::options::DuplicateKeyPolicy::LastWins;
    o
}

/// Parses one YAML document into JSON data (YAML 1.1 rules). An empty document is `null`.
pub fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    if text.trim().is_empty() {
        return Ok(serde_json::Value::Null);
    }
    // Like go-yaml v2's `Unmarshal`, only the first document counts.
    let docs: Vec<Option<serde_json::Value>> =
        serde_saphyr::from_multiple_with_options(text, saphyr_options())
            .map_err(|e| format!("error converting YAML to JSON: {e}"))?;
    Ok(docs
        .into_iter()
        .next()
        .flatten()
        .unwrap_or(serde_json::Value::Null))
}

/// Parses YAML into template values with Go's JSON number semantics (every number a float64).
pub fn parse_value(text: &str) -> Result<Value, String> {
    Ok(crate::funcs::encoding::from_json_floats(&parse_json(text)?))
}

/// Parses YAML into template values keeping integers (for data that is not round-tripped through JSON).
pub fn parse_value_exact(text: &str) -> Result<Value, String> {
    Ok(from_json(&parse_json(text)?))
}

/// Helm's `toYaml`: the YAML text, ending in a newline.
pub fn to_yaml(v: &Value) -> Result<String, String> {
    // sigs.k8s.io/yaml marshals to JSON first; reject what JSON rejects.
    crate::value::to_json(v)?;
    let mut e = Emitter { out: String::new() };
    e.node(v, 0, Ctx::Top, 0)?;
    if !e.out.ends_with('\n') {
        e.out.push('\n');
    }
    Ok(e.out)
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Top,
    /// After `key:` (the value of a mapping entry).
    MapValue,
    /// After `- ` (an item of a sequence).
    SeqItem,
}

struct Emitter {
    out: String,
}

fn column(out: &str) -> usize {
    match out.rfind('\n') {
        Some(i) => out[i + 1..].chars().count(),
        None => out.chars().count(),
    }
}

impl Emitter {
    /// Emits `v` whose block children are indented at `indent`; the cursor is after `key:`, `- ` or at the start.
    fn node(&mut self, v: &Value, indent: usize, ctx: Ctx, depth: usize) -> Result<(), String> {
        if depth > crate::value::MAX_DEPTH {
            return Err("value nesting too deep".into());
        }
        match v.kind() {
            ValueKind::Map => {
                let m = as_map(v).map(|m| m.snapshot()).unwrap_or_default();
                if m.is_empty() {
                    self.inline(ctx, "{}");
                    return Ok(());
                }
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort_by(|a, b| natural_cmp(a, b));
                for (i, k) in keys.into_iter().enumerate() {
                    match (ctx, i) {
                        (Ctx::SeqItem, 0) => {}
                        (Ctx::Top, 0) => {}
                        _ => {
                            self.out.push('\n');
                            self.out.push_str(&" ".repeat(indent));
                        }
                    }
                    self.key(k);
                    self.out.push(':');
                    let child = &m[k];
                    let child_indent = match child.kind() {
                        ValueKind::Seq => indent,
                        _ => indent + 2,
                    };
                    self.node(child, child_indent, Ctx::MapValue, depth + 1)?;
                }
            }
            ValueKind::Seq => {
                let items = as_list(v).unwrap_or_default();
                if items.is_empty() {
                    self.inline(ctx, "[]");
                    return Ok(());
                }
                for (i, item) in items.iter().enumerate() {
                    match (ctx, i) {
                        (Ctx::SeqItem, 0) | (Ctx::Top, 0) => {}
                        _ => {
                            self.out.push('\n');
                            self.out.push_str(&" ".repeat(indent));
                        }
                    }
                    self.out.push_str("- ");
                    self.node(item, indent + 2, Ctx::SeqItem, depth + 1)?;
                }
            }
            _ => {
                // go-yaml indents a top-level scalar's continuation lines (and block scalar body) by 2.
                let scalar_indent = match ctx {
                    Ctx::Top => 2,
                    Ctx::MapValue => indent,
                    Ctx::SeqItem => indent,
                };
                if ctx == Ctx::MapValue {
                    self.out.push(' ');
                }
                self.scalar(v, scalar_indent);
            }
        }
        Ok(())
    }

    fn inline(&mut self, ctx: Ctx, text: &str) {
        if ctx == Ctx::MapValue {
            self.out.push(' ');
        }
        self.out.push_str(text);
    }

    fn key(&mut self, k: &str) {
        match string_style(k, true) {
            Style::Plain => self.out.push_str(k),
            Style::Single => self.single_quoted(k, 0, false),
            _ => self.double_quoted(k, 0, false),
        }
    }

    fn scalar(&mut self, v: &Value, indent: usize) {
        match v.kind() {
            ValueKind::Undefined | ValueKind::None => self.out.push_str("null"),
            ValueKind::Bool => self
                .out
                .push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                if v.is_integer() {
                    self.out.push_str(&v.to_string());
                } else {
                    self.out.push_str(&yaml_float(as_f64(v).unwrap_or(0.0)));
                }
            }
            _ => {
                let s = match v.as_str() {
                    Some(s) => s.to_string(),
                    None => match v.as_bytes() {
                        Some(b) => base64_std(b),
                        None => v.to_string(),
                    },
                };
                match string_style(&s, false) {
                    Style::Plain => self.plain(&s, indent),
                    Style::Single => self.single_quoted(&s, indent, true),
                    Style::Double => self.double_quoted(&s, indent, true),
                    Style::Literal => self.literal(&s, indent),
                }
            }
        }
    }

    fn newline_indent(&mut self, indent: usize) {
        self.out.push('\n');
        self.out.push_str(&" ".repeat(indent));
    }

    fn plain(&mut self, s: &str, indent: usize) {
        let chars: Vec<char> = s.chars().collect();
        let mut col = column(&self.out);
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if !spaces && col > BEST_WIDTH && chars.get(i + 1).is_some_and(|n| *n != ' ') {
                    self.newline_indent(indent);
                    col = indent;
                } else {
                    self.out.push(c);
                    col += 1;
                }
                spaces = true;
            } else {
                self.out.push(c);
                col += 1;
                spaces = false;
            }
        }
    }

    fn single_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.out.push('\'');
        let chars: Vec<char> = s.chars().collect();
        let mut col = column(&self.out);
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && col > BEST_WIDTH
                    && i != 0
                    && i != chars.len() - 1
                    && chars.get(i + 1).is_some_and(|n| *n != ' ')
                {
                    self.newline_indent(indent);
                    col = indent;
                } else {
                    self.out.push(c);
                    col += 1;
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.out.push('\'');
                    col += 1;
                }
                self.out.push(c);
                col += 1;
                spaces = false;
            }
        }
        self.out.push('\'');
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.out.push('"');
        let chars: Vec<char> = s.chars().collect();
        let mut col = column(&self.out);
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                let esc = match c {
                    '\0' => "\\0".to_string(),
                    '\x07' => "\\a".into(),
                    '\x08' => "\\b".into(),
                    '\t' => "\\t".into(),
                    '\n' => "\\n".into(),
                    '\x0b' => "\\v".into(),
                    '\x0c' => "\\f".into(),
                    '\r' => "\\r".into(),
                    '\x1b' => "\\e".into(),
                    '"' => "\\\"".into(),
                    '\\' => "\\\\".into(),
                    '\u{85}' => "\\N".into(),
                    '\u{a0}' => "\\_".into(),
                    '\u{2028}' => "\\L".into(),
                    '\u{2029}' => "\\P".into(),
                    c if (c as u32) <= 0xff => format!("\\x{:02X}", c as u32),
                    c if (c as u32) <= 0xffff => format!("\\u{:04X}", c as u32),
                    c => format!("\\U{:08X}", c as u32),
                };
                col += esc.len();
                self.out.push_str(&esc);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && col > BEST_WIDTH && i != 0 && i != chars.len() - 1 {
                    self.newline_indent(indent);
                    col = indent;
                    if chars.get(i + 1) == Some(&' ') {
                        self.out.push('\\');
                        col += 1;
                    }
                } else {
                    self.out.push(' ');
                    col += 1;
                }
                spaces = true;
            } else {
                self.out.push(c);
                col += 1;
                spaces = false;
            }
        }
        self.out.push('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.out.push('|');
        if s.starts_with(' ') || s.starts_with('\n') {
            self.out.push('2');
        }
        if !s.ends_with('\n') {
            self.out.push('-');
        } else if s.len() == 1 || s[..s.len() - 1].ends_with('\n') {
            self.out.push('+');
        }
        let body = s.strip_suffix('\n').unwrap_or(s);
        for line in body.split('\n') {
            self.out.push('\n');
            if !line.is_empty() {
                self.out.push_str(&" ".repeat(indent));
                self.out.push_str(line);
            }
        }
        if s.ends_with("\n\n") || s == "\n" {
            // `|+` keeps trailing newlines: each extra one is already an empty line above.
        }
    }
}

fn base64_std(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A float as `toYaml` writes it after the JSON round trip: integral values become integers.
fn yaml_float(f: f64) -> String {
    let j = go_json_float(f);
    if j.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return j;
    }
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    format_float_g(f, None)
}

#[derive(Debug, PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0a
        || (0x20..=0x7e).contains(&u)
        || (0xa0..=0xd7ff).contains(&u)
        || ((0xe000..=0xfffd).contains(&u) && u != 0xfeff)
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blankz(c: Option<char>) -> bool {
    matches!(
        c,
        None | Some(' ')
            | Some('\t')
            | Some('\r')
            | Some('\n')
            | Some('\u{85}')
            | Some('\u{2028}')
            | Some('\u{2029}')
    )
}

/// go-yaml v2's choice of scalar style for a string (`encoder.stringv` + `yaml_emitter_select_scalar_style`).
fn string_style(s: &str, simple_key: bool) -> Style {
    let requested_literal = s.contains('\n');
    let can_use_plain = resolves_to_str(s) && !is_base60_float(s);
    // Analysis (yaml_emitter_analyze_scalar).
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Style::Double;
    }
    let mut flow_indicators = false;
    let mut block_indicators = false;
    let mut special = false;
    let mut line_breaks = false;
    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;
    let mut prev_space = false;
    let mut prev_break = false;
    if s.starts_with("---") || s.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let mut preceded_by_ws = true;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = is_blankz(chars.get(i + 1).copied());
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_ws {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_ws => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_ws {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_ws => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if !is_printable(c) || c == '\u{feff}' {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == chars.len() - 1 {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if i == chars.len() - 1 {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blankz(Some(c));
    }
    let mut flow_plain = true;
    let mut block_plain = true;
    let mut single_allowed = true;
    let mut block_allowed = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        flow_plain = false;
        block_plain = false;
    }
    if trailing_space {
        block_allowed = false;
    }
    if break_space {
        flow_plain = false;
        block_plain = false;
        single_allowed = false;
    }
    if space_break || special {
        flow_plain = false;
        block_plain = false;
        single_allowed = false;
        block_allowed = false;
    }
    if line_breaks {
        flow_plain = false;
        block_plain = false;
    }
    if flow_indicators {
        flow_plain = false;
    }
    if block_indicators {
        block_plain = false;
    }
    let _ = flow_plain;
    let mut style = if requested_literal {
        Style::Literal
    } else if can_use_plain {
        Style::Plain
    } else {
        Style::Double
    };
    if style == Style::Plain && (!block_plain || (simple_key && line_breaks)) {
        style = Style::Single;
    }
    if style == Style::Single && !single_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!block_allowed || simple_key) {
        style = Style::Double;
    }
    style
}

/// Does go-yaml v2 resolve this plain scalar to a string (not null, bool, int, float, timestamp, merge)?
fn resolves_to_str(s: &str) -> bool {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return false,
        "y" | "Y" | "yes" | "Yes" | "YES" | "n" | "N" | "no" | "No" | "NO" | "true" | "True"
        | "TRUE" | "false" | "False" | "FALSE" | "on" | "On" | "ON" | "off" | "Off" | "OFF" => {
            return false;
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" | "<<" => return false,
        _ => {}
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return true;
    }
    let plain: String = s.chars().filter(|c| *c != '_').collect();
    if crate::funcs::parse_go_int(&plain).is_some() {
        return false;
    }
    if is_yaml_float(&plain) {
        return false;
    }
    if is_timestamp(s) {
        return false;
    }
    true
}

/// go-yaml v2's float pattern `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2 base-60 floats (`1:20`), which it quotes for YAML 1.1 readers.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_digit() || b[0] == b'+' || b[0] == b'-') || !s.contains(':')
    {
        return false;
    }
    let body = s.trim_start_matches(['+', '-']);
    let mut parts = body.split(':');
    let first = parts.next().unwrap_or("");
    if first.is_empty()
        || !first.bytes().all(|c| c.is_ascii_digit() || c == b'_')
        || !first.as_bytes()[0].is_ascii_digit()
    {
        return false;
    }
    let rest: Vec<&str> = parts.collect();
    for (i, p) in rest.iter().enumerate() {
        let last = i == rest.len() - 1;
        let (int, frac) = if last {
            p.split_once('.').unwrap_or((p, ""))
        } else {
            (*p, "")
        };
        if int.is_empty() || int.len() > 2 || !int.bytes().all(|c| c.is_ascii_digit()) {
            return false;
        }
        if int.len() == 2 && int.as_bytes()[0] > b'5' {
            return false;
        }
        if !frac.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
            return false;
        }
    }
    !rest.is_empty()
}

/// go-yaml v2's timestamp forms: `2006-1-2`, `2006-1-2T15:4:5.999999999Z07:00`, with space or `t` separators.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let date_end = s[5..]
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .map(|i| i + 5)
        .unwrap_or(s.len());
    let date = &s[..date_end];
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3
        || parts[1].is_empty()
        || parts[1].len() > 2
        || parts[2].is_empty()
        || parts[2].len() > 2
    {
        return false;
    }
    if date_end == s.len() {
        return true;
    }
    let rest = &s[date_end..];
    let rest = rest.strip_prefix(['T', 't', ' ']).unwrap_or("");
    let time_part: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ':' || *c == '.')
        .collect();
    let hms: Vec<&str> = time_part
        .split('.')
        .next()
        .unwrap_or("")
        .split(':')
        .collect();
    hms.len() == 3 && hms.iter().all(|p| !p.is_empty() && p.len() <= 2)
}

/// go-yaml v2's ordering of map keys: numbers inside strings compare numerically, letters after non-letters.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(text: &str) -> String {
        to_yaml(&parse_value(text).unwrap()).unwrap()
    }

    #[test]
    fn emits_like_helm_to_yaml() {
        assert_eq!(
            y("b: 1\na: [x, {c: d, e: []}]\nf: {}\n"),
            "a:\n- x\n- c: d\n  e: []\nb: 1\nf: {}\n"
        );
        assert_eq!(
            y("a: 'yes'\nb: '1.0'\nc: ''\nd: '- x'\ne: 'a: b'\nf: 1000000\ng: 1.5\n"),
            "a: \"yes\"\nb: \"1.0\"\nc: \"\"\nd: '- x'\ne: 'a: b'\nf: 1000000\ng: 1.5\n"
        );
        assert_eq!(to_yaml(&Value::from("x\ny\n")).unwrap(), "|\n  x\n  y\n");
        assert_eq!(
            y("a: \"x\\ny\\n\"\nb: \"x\\ny\"\n"),
            "a: |\n  x\n  y\nb: |-\n  x\n  y\n"
        );
        assert_eq!(
            y("a:\n  b:\n  - - 1\n    - 2\n"),
            "a:\n  b:\n  - - 1\n    - 2\n"
        );
    }

    #[test]
    fn key_order_is_go_yaml_natural() {
        let mut keys = vec!["a10", "a9", "B", "a", "_x", "1"];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(keys, vec!["_x", "1", "B", "a", "a9", "a10"]);
    }
}
