//! Scalars as go-yaml's encoder writes them: the text of numbers after the JSON round trip, whether a string
//! would read back as another type (then it is quoted), and libyaml's analysis that picks plain, single-quoted,
//! double-quoted or literal style.

use serde_json::Number;

use crate::{gofmt, resolve};

/// The style a scalar is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// A number as go-yaml prints it after `json.Marshal` and go-yaml's re-read: integers stay digits, other JSON
/// numbers become float64 printed with `%g` (`1e+06` never happens for integral floats below 1e21: they are ints).
pub(crate) fn number(n: &Number) -> String {
    let n = resolve::go_json_number(n);
    match n.as_f64().filter(|_| n.is_f64()) {
        Some(f) => gofmt::format_g(f, false),
        None => n.to_string(),
    }
}

/// Whether a plain scalar with this text would read back as something other than a string (so it needs quotes).
pub(crate) fn reads_as_non_string(s: &str) -> bool {
    let reserved = [
        &resolve::V2_BOOLEANS[..],
        &resolve::NULLS,
        &resolve::NON_FINITE,
    ];
    if reserved.iter().any(|words| words.contains(&s)) {
        return true;
    }
    if !resolve::starts_like_number(s) {
        return false;
    }
    base60_float(s) || crate::timestamp::parse(s).is_some() || resolve::number(s).is_some()
}

/// YAML 1.1 sexagesimal numbers (`190:20:30`), which go-yaml quotes for older readers.
fn base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, fraction) = s.split_once('.').unwrap_or((s, ""));
    if !fraction.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return false;
    }
    let mut parts = main.split(':');
    let head = parts.next().unwrap_or("");
    if !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let mut sixties = 0;
    for part in parts {
        sixties += 1;
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    sixties > 0
}

/// Whether a character is a line break for YAML (CR, LF, NEL, LS, PS).
pub(crate) fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable set (the emitter runs in unicode mode).
pub(crate) fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        && c != '\u{feff}'
}

/// What libyaml's scalar analysis allows for a text.
#[derive(Debug, PartialEq, Eq)]
struct Allowed {
    multiline: bool,
    block_plain: bool,
    single_quoted: bool,
    block: bool,
}

/// What libyaml's scalar analysis finds in a text, before it decides the styles ([`Findings::allowed`]).
struct Findings {
    /// A line break anywhere.
    line_breaks: bool,
    /// A character outside libyaml's printable set.
    special: bool,
    /// An indicator that plain block style cannot start with or contain (`- `, `: `, ` #`, `[`, ...).
    block_indicators: bool,
    /// A space or line break first or last.
    edges: bool,
    /// A space last.
    trailing_space: bool,
    /// A space right after a line break.
    break_space: bool,
    /// A line break right after a space.
    space_break: bool,
}

impl Findings {
    /// libyaml's verdict from its findings: the one place both analyses turn flags into styles.
    fn allowed(&self) -> Allowed {
        Allowed {
            multiline: self.line_breaks,
            block_plain: !(self.edges
                || self.break_space
                || self.space_break
                || self.special
                || self.line_breaks
                || self.block_indicators),
            single_quoted: !(self.break_space || self.space_break || self.special),
            block: !(self.trailing_space || self.space_break || self.special),
        }
    }
}

fn analyze(s: &str) -> Allowed {
    if !s.is_empty() && s.is_ascii() {
        analyze_ascii(s.as_bytes())
    } else {
        analyze_chars(s)
    }
}

/// [`analyze_chars`] for a non-empty ASCII text, a byte at a time: each flag is a test of a byte and its neighbours.
fn analyze_ascii(s: &[u8]) -> Allowed {
    if memchr::memchr2(b'\n', b'\r', s).is_none() {
        return analyze_one_line(s);
    }
    let is_break = |b: u8| b == b'\n' || b == b'\r';
    let n = s.len();
    let followed_by_whitespace =
        |i: usize| i + 1 >= n || matches!(s[i + 1], b' ' | b'\t' | b'\n' | b'\r');
    let (first, last) = (s[0], s[n - 1]);
    let mut block_indicators = s.starts_with(b"---") || s.starts_with(b"...");
    match first {
        b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\''
        | b'"' | b'%' | b'@' | b'`' => block_indicators = true,
        b'?' | b':' | b'-' if followed_by_whitespace(0) => block_indicators = true,
        _ => {}
    }
    let (mut line_breaks, mut special, mut break_space, mut space_break) =
        (false, false, false, false);
    let mut previous = first;
    for (i, &c) in s.iter().enumerate() {
        if i > 0 {
            match c {
                b':' if followed_by_whitespace(i) => block_indicators = true,
                b'#' if matches!(previous, b' ' | b'\t' | b'\n' | b'\r' | 0) => {
                    block_indicators = true
                }
                _ => {}
            }
            break_space |= c == b' ' && is_break(previous);
            space_break |= is_break(c) && previous == b' ';
        }
        special |= !(c == b'\n' || (0x20..=0x7e).contains(&c));
        line_breaks |= is_break(c);
        previous = c;
    }
    let (trailing_space, trailing_break) = (last == b' ', is_break(last));
    Findings {
        line_breaks,
        special,
        block_indicators,
        edges: first == b' ' || is_break(first) || trailing_space || trailing_break,
        trailing_space,
        break_space,
        space_break,
    }
    .allowed()
}

/// [`analyze_ascii`] for a text without line breaks (most are): no flag about breaks can be set, specials are found
/// in one pass over the bytes, and indicators by searching for `:` and `#` only.
fn analyze_one_line(s: &[u8]) -> Allowed {
    let n = s.len();
    let (first, last) = (s[0], s[n - 1]);
    let followed_by_whitespace = |i: usize| i + 1 >= n || matches!(s[i + 1], b' ' | b'\t');
    let block_indicators = s.starts_with(b"---")
        || s.starts_with(b"...")
        || matches!(
            first,
            b'#' | b','
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
        )
        || (matches!(first, b'?' | b':' | b'-') && followed_by_whitespace(0))
        || memchr::memchr2_iter(b':', b'#', &s[1..]).any(|j| {
            let i = j + 1;
            match s[i] {
                b':' => followed_by_whitespace(i),
                _ => matches!(s[i - 1], b' ' | b'\t' | 0),
            }
        });
    let special = s
        .iter()
        .fold(false, |seen, &c| seen | !(0x20..=0x7e).contains(&c));
    Findings {
        line_breaks: false,
        special,
        block_indicators,
        edges: first == b' ' || last == b' ',
        trailing_space: last == b' ',
        break_space: false,
        space_break: false,
    }
    .allowed()
}

/// libyaml's analysis, character by character.
fn analyze_chars(s: &str) -> Allowed {
    if s.is_empty() {
        return Allowed {
            multiline: false,
            block_plain: true,
            single_quoted: true,
            block: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let mut chars = s.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let last = next.is_none();
        let followed_by_whitespace = next.is_none_or(|n| n == ' ' || n == '\t' || is_break(n));
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    block_indicators = true;
                }
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c) || c == '\0';
        first = false;
    }
    Findings {
        line_breaks,
        special,
        block_indicators,
        edges: leading_space || leading_break || trailing_space || trailing_break,
        trailing_space,
        break_space,
        space_break,
    }
    .allowed()
}

/// The style go-yaml writes a string in, in block context; `simple_key` for mapping keys written inline.
pub(crate) fn string_style(s: &str, simple_key: bool) -> Style {
    let requested = if s.contains('\n') {
        Style::Literal
    } else if reads_as_non_string(s) {
        Style::Double
    } else {
        Style::Plain
    };
    let allowed = analyze(s);
    let mut style = requested;
    if simple_key && allowed.multiline {
        style = Style::Double;
    }
    if style == Style::Plain && (!allowed.block_plain || (s.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && !allowed.single_quoted {
        style = Style::Double;
    }
    if style == Style::Literal && (!allowed.block || simple_key) {
        style = Style::Double;
    }
    style
}

/// Whether a key can be written inline (`key: value`) rather than as `? key`: one line, at most 128 bytes.
pub(crate) fn simple_key(s: &str) -> bool {
    s.len() <= 128 && !s.chars().any(is_break)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-wise analysis of ASCII text is the character-wise one: on every text of up to four characters
    /// from the characters the analysis tells apart, and on longer texts that mix them.
    #[test]
    fn ascii_analysis_is_the_character_analysis() {
        let alphabet = [
            ' ', '\n', '\r', '\t', '#', ':', '-', '?', ',', '[', '\'', '"', '.', 'a', '0', '\0',
            '\x7f',
        ];
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.chars().count() == texts.last().map_or(0, |l| l.chars().count()))
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        texts.extend(
            [
                "---x",
                "...",
                "a: b",
                "a :b",
                "a #b",
                "a#b",
                "x\n y",
                "x \ny",
                "#!/bin/bash\necho 1\n",
                "key: value # c\n",
                "- a",
                "-a",
                "? x",
                "?x",
                "a long plain text without breaks, but: with a colon",
                "a long text # with a comment marker and \u{7f} inside",
                "tab\tbefore #hash and a trailing colon:",
                "\0#nul before a hash, then a long tail of ordinary words",
            ]
            .map(String::from),
        );
        let mut checked = 0;
        for t in texts.iter().filter(|t| !t.is_empty()) {
            assert_eq!(analyze_ascii(t.as_bytes()), analyze_chars(t), "{t:?}");
            checked += 1;
        }
        assert!(checked > 80_000, "{checked}");
    }

    #[test]
    fn strings_that_read_as_other_types() {
        for s in [
            "yes",
            "On",
            "N",
            "",
            "~",
            "null",
            ".inf",
            "-.Inf",
            ".nan",
            "0755",
            "0o17",
            "0x1F",
            "0b101",
            "+1",
            "-0",
            "1_000",
            "1e3",
            "12e03",
            "1.5",
            ".5",
            "5.",
            "0.",
            "+.5",
            "08",
            "1:20",
            "190:20:30",
            "2024-01-01",
            "2024-1-1",
            "2001-12-14 21:59:43.10",
            "2024-01-01T10:00:00Z",
            "2024-01-01t10:00:00+01:00",
            "20240101",
        ] {
            assert!(reads_as_non_string(s), "{s:?}");
        }
        for s in [
            "yEs",
            "oN",
            "1e",
            "1,000",
            "<<",
            "=",
            "-",
            "a1",
            "0x",
            "1.2.3",
            "2024-13-01",
            "2024-02-30",
            "1e999",
            "2024-01-01T10:00:00",
            "abc",
            "12:60",
        ] {
            assert!(!reads_as_non_string(s), "{s:?}");
        }
    }

    #[test]
    fn styles() {
        assert_eq!(string_style("plain text", false), Style::Plain);
        assert_eq!(string_style("yes", false), Style::Double);
        assert_eq!(string_style("- a", false), Style::Single);
        assert_eq!(string_style("a: b", false), Style::Single);
        assert_eq!(string_style("tab\there", false), Style::Double);
        assert_eq!(string_style("a\nb", false), Style::Literal);
        assert_eq!(string_style("a\nb", true), Style::Double);
        assert_eq!(string_style("trailing \nx", false), Style::Double);
        assert_eq!(string_style("", true), Style::Double);
        assert_eq!(string_style("😀", false), Style::Double);
        // First, last and neighbouring characters of libyaml's analysis.
        assert_eq!(string_style(" lead", false), Style::Single);
        assert_eq!(string_style("trail ", false), Style::Single);
        assert_eq!(string_style("x:", false), Style::Single);
        assert_eq!(string_style("x:y", false), Style::Plain);
        assert_eq!(string_style("?x", false), Style::Plain);
        assert_eq!(string_style("? x", false), Style::Single);
        assert_eq!(string_style("a #b", false), Style::Single);
        assert_eq!(string_style("a#b", false), Style::Plain);
        assert_eq!(string_style("#a", false), Style::Single);
        assert_eq!(string_style("-", false), Style::Single);
        assert_eq!(string_style("a\n b", false), Style::Literal);
        assert_eq!(string_style("a \nb", false), Style::Double);
        assert_eq!(string_style("\nlead", false), Style::Literal);
        assert_eq!(string_style("end\n", true), Style::Double);
        assert_eq!(string_style("_1", false), Style::Plain);
        assert_eq!(string_style("+x", false), Style::Plain);
        assert_eq!(string_style("1_0.5", false), Style::Double);
        assert!(simple_key("plain key"));
        assert!(!simple_key("two\nlines"));
        assert!(!simple_key("nel\u{85}"));
        assert!(!simple_key(&"k".repeat(129)));
    }

    #[test]
    fn numbers_after_the_json_round_trip() {
        let n = |v: serde_json::Value| number(v.as_number().unwrap());
        assert_eq!(n(serde_json::json!(1e6)), "1000000");
        assert_eq!(n(serde_json::json!(1e21)), "1e+21");
        assert_eq!(n(serde_json::json!(123456789.5)), "1.234567895e+08");
        assert_eq!(n(serde_json::json!(-0.0)), "0");
        assert_eq!(
            n(serde_json::json!(1.8446744073709552e19)),
            "1.8446744073709552e+19"
        );
        assert_eq!(n(serde_json::json!(u64::MAX)), "18446744073709551615");
        assert_eq!(n(serde_json::json!(1e-7)), "1e-07");
    }
}
