//! A JSON text without its indentation, so the schema reader does not step over it one byte at a time
//! (pretty-printed schemas are more than half spaces).
//!
//! Only the spaces and tabs that follow a line break are dropped; the line break stays. A raw line break cannot
//! be inside a string of a valid text, so in a valid text every dropped byte is whitespace between tokens, and
//! the kept line break still separates the tokens on either side: the compact text reads to the same value.
//! An invalid text stays invalid (a line break inside a string is still one), but its errors must be reported
//! against the original text, whose lines and columns they name.

/// Eight spaces, as one word.
const SPACES: u64 = u64::from_le_bytes([b' '; 8]);

/// The eight bytes at `i` as one word (the first byte lowest), when there are eight.
fn eight(b: &[u8], i: usize) -> Option<u64> {
    b.get(i..)?
        .first_chunk::<8>()
        .map(|w| u64::from_le_bytes(*w))
}

/// The end of the spaces and tabs starting at `i` (runs of spaces are stepped over eight bytes at a time).
fn skip_indent(b: &[u8], mut i: usize) -> usize {
    loop {
        if let Some(word) = eight(b, i) {
            // The spaces that start the word: all eight when it is nothing else.
            let others = word ^ SPACES;
            i += (others.trailing_zeros() / 8) as usize;
            if others == 0 {
                continue;
            }
        }
        match b.get(i) {
            Some(b' ' | b'\t') => i += 1,
            _ => return i,
        }
    }
}

/// The first line break at or after `i`.
fn line_break(b: &[u8], i: usize) -> Option<usize> {
    memchr::memchr(b'\n', b.get(i..)?).map(|p| i + p)
}

/// `text` without the spaces and tabs that start its lines.
pub(super) fn compact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    // `b[copied..]` is still to be written.
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = line_break(b, from) {
        let start = at + 1;
        let end = skip_indent(b, start);
        if end > start {
            out.extend_from_slice(&b[copied..start]);
            copied = end;
        }
        from = end;
    }
    out.extend_from_slice(&b[copied..]);
    // Only ASCII spaces and tabs were dropped: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::{compact, line_break};

    #[test]
    fn line_breaks_are_found_at_any_offset() {
        let text = "a\x0b\x0bé\n\x09\x0a\u{8a}{\"\n\n0123456789abcdef\x0b\n xyz\u{10a0a}\n";
        let b = text.as_bytes();
        for from in 0..=b.len() + 1 {
            let want = b
                .get(from..)
                .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
                .map(|p| from + p);
            assert_eq!(line_break(b, from), want, "from {from}");
        }
    }

    #[test]
    fn drops_the_indentation_of_lines_only() {
        assert_eq!(
            compact("{\n    \"a b\" : [ 1 ,\n\t 2 ],\r\n  \"c\": \"é\"\n\n  }\n   "),
            "{\n\"a b\" : [ 1 ,\n2 ],\r\n\"c\": \"é\"\n\n}\n"
        );
        assert_eq!(compact("        x"), "        x");
        // A line break inside a string is kept, so the string stays invalid.
        assert_eq!(compact("\"a\n   b\""), "\"a\nb\"");
        assert!(serde_json::from_str::<String>(&compact("\"a\n   b\"")).is_err());
    }
}
