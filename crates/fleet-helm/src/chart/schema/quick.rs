//! A quick JSON reader for schema texts: a serde [`Deserializer`] for [`super::model`]'s visitors that steps over
//! indentation eight bytes at a time and finds the end of a string with a byte search (pretty-printed schemas are
//! more than half spaces, and most of the rest is descriptions). It reads a valid text exactly as `serde_json` does:
//! numbers, and strings with escapes, are handed to `serde_json` itself, and nesting stops below its limit. Anything
//! else (an invalid text above all) stops it with [`Unread`], and the caller reads the text with `serde_json`,
//! whose error names the line and column.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Deepest nesting read here: below `serde_json`'s limit (128), so a text it refuses is never read here.
const MAX_DEPTH: usize = 100;

/// A byte in each of a word's eight lanes.
const fn lanes(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// The end of the run of spaces at `i`, stepped over a word at a time.
fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while let Some(word) = b.get(i..).and_then(|r| r.first_chunk::<8>()) {
        let others = u64::from_le_bytes(*word) ^ lanes(b' ');
        i += (others.trailing_zeros() / 8) as usize;
        if others != 0 {
            return i;
        }
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// Where the first `"`, `\` or control character at or after `i` is, a word at a time: a lane is flagged where
/// `lane - 1` (or `lane - 0x20`) borrows from a lane without its top bit, i.e. a zero lane (a control character);
/// flags above the lowest may be false, so only the lowest is taken.
fn string_stop(b: &[u8], mut i: usize) -> Option<usize> {
    const TOPS: u64 = lanes(0x80);
    while let Some(word) = b.get(i..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*word);
        let (quote, slash) = (w ^ lanes(b'"'), w ^ lanes(b'\\'));
        let flags = ((quote.wrapping_sub(lanes(1)) & !quote)
            | (slash.wrapping_sub(lanes(1)) & !slash)
            | (w.wrapping_sub(lanes(0x20)) & !w))
            & TOPS;
        if flags != 0 {
            return Some(i + (flags.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = b.get(i..)?;
    rest.iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
}

/// The reader stopped: the text is for `serde_json` to read (and, when it is invalid, to report).
#[derive(Debug)]
pub(super) struct Unread;

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Unread {}

impl de::Error for Unread {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Unread
    }
}

/// A JSON text being read.
pub(super) struct Reader<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Self {
        Reader {
            text,
            at: 0,
            depth: 0,
        }
    }

    /// Only whitespace is left.
    pub fn end(&mut self) -> Result<(), Unread> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(Unread),
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        let b = self.text.as_bytes();
        loop {
            match *b.get(self.at)? {
                b' ' | b'\n' | b'\r' | b'\t' => {
                    self.at += 1;
                    if b.get(self.at) == Some(&b' ') {
                        self.at = skip_spaces(b, self.at);
                    }
                }
                c => return Some(c),
            }
        }
    }

    /// Consumes `byte`, the next one after whitespace.
    fn expect(&mut self, byte: u8) -> Result<(), Unread> {
        if self.peek() != Some(byte) {
            return Err(Unread);
        }
        self.at += 1;
        Ok(())
    }

    /// The string whose opening quote is the next byte: borrowed from the text when it has no escapes, else as
    /// `serde_json` decodes it.
    fn string(&mut self) -> Result<Cow<'a, str>, Unread> {
        let b = self.text.as_bytes();
        let open = self.at;
        let (mut i, mut escaped) = (open + 1, false);
        loop {
            i = string_stop(b, i).ok_or(Unread)?;
            match b[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                // A raw control character is an error for JSON.
                _ => return Err(Unread),
            }
        }
        self.at = i + 1;
        if !escaped {
            return Ok(Cow::Borrowed(&self.text[open + 1..i]));
        }
        serde_json::from_str::<String>(&self.text[open..=i])
            .map(Cow::Owned)
            .map_err(|_| Unread)
    }

    /// The number that starts at the next byte, read by `serde_json` (the same visit, the same value).
    fn number<V: Visitor<'a>>(&mut self, visitor: V) -> Result<V::Value, Unread> {
        let b = self.text.as_bytes();
        let start = self.at;
        let mut end = start;
        while b
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            end += 1;
        }
        self.at = end;
        let mut de = serde_json::Deserializer::from_str(&self.text[start..end]);
        let value = de.deserialize_any(visitor).map_err(|_| Unread)?;
        de.end().map_err(|_| Unread)?;
        Ok(value)
    }

    /// `true`, `false` or `null`, whose first byte is next.
    fn word(&mut self, word: &str) -> Result<(), Unread> {
        if !self.text[self.at..].starts_with(word) {
            return Err(Unread);
        }
        self.at += word.len();
        Ok(())
    }

    /// One more level of nesting, within [`MAX_DEPTH`].
    fn enter(&mut self) -> Result<(), Unread> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unread);
        }
        self.at += 1;
        Ok(())
    }
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = Unread;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unread> {
        match self.peek().ok_or(Unread)? {
            b'{' => {
                self.enter()?;
                let value = visitor.visit_map(Entries {
                    reader: &mut *self,
                    first: true,
                })?;
                self.depth -= 1;
                self.expect(b'}')?;
                Ok(value)
            }
            b'[' => {
                self.enter()?;
                let value = visitor.visit_seq(Entries {
                    reader: &mut *self,
                    first: true,
                })?;
                self.depth -= 1;
                self.expect(b']')?;
                Ok(value)
            }
            b'"' => match self.string()? {
                Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
                Cow::Owned(s) => visitor.visit_string(s),
            },
            b't' => self.word("true").and_then(|()| visitor.visit_bool(true)),
            b'f' => self.word("false").and_then(|()| visitor.visit_bool(false)),
            b'n' => self.word("null").and_then(|()| visitor.visit_unit()),
            b'-' | b'0'..=b'9' => self.number(visitor),
            _ => Err(Unread),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unread> {
        if self.peek() != Some(b'"') {
            return Err(Unread);
        }
        match self.string()? {
            Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
            Cow::Owned(s) => visitor.visit_string(s),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// The entries of an object or the items of an array, after its opening bracket.
struct Entries<'r, 'a> {
    reader: &'r mut Reader<'a>,
    first: bool,
}

impl Entries<'_, '_> {
    /// Whether another entry follows (a `,` after the first one, and no `,` before the closing bracket).
    fn more(&mut self, close: u8) -> Result<bool, Unread> {
        let next = self.reader.peek().ok_or(Unread)?;
        if self.first {
            self.first = false;
            return Ok(next != close);
        }
        if next == close {
            return Ok(false);
        }
        self.reader.expect(b',')?;
        match self.reader.peek() {
            Some(c) if c != close => Ok(true),
            _ => Err(Unread),
        }
    }
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = Unread;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Unread> {
        if !self.more(b'}')? {
            return Ok(None);
        }
        if self.reader.peek() != Some(b'"') {
            return Err(Unread);
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Unread> {
        self.reader.expect(b':')?;
        seed.deserialize(&mut *self.reader)
    }
}

impl<'de> SeqAccess<'de> for Entries<'_, 'de> {
    type Error = Unread;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Unread> {
        if !self.more(b']')? {
            return Ok(None);
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time searches find what a byte-at-a-time search finds: each stop byte (and bytes around the
    /// lane bounds: 0x1f, 0x20, 0x7f, 0x80, UTF-8) at every position of texts up to 20 bytes, after any start.
    #[test]
    fn word_searches_are_byte_searches() {
        let stops = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        let others = [
            b'a', b' ', 0x20, 0x21, 0x7f, 0x80, 0xe2, 0xff, b'!', b'#', b']',
        ];
        for len in 0..20 {
            for at in 0..len {
                for &stop in &stops {
                    for &other in &others {
                        let mut text = vec![other; len];
                        text[at] = stop;
                        for start in 0..=len {
                            let naive = text[start..]
                                .iter()
                                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                                .map(|p| start + p);
                            assert_eq!(string_stop(&text, start), naive, "{text:?} {start}");
                        }
                    }
                }
                let mut spaces = vec![b' '; len];
                spaces[at] = b'x';
                for start in 0..=len {
                    let naive = spaces[start..]
                        .iter()
                        .position(|&c| c != b' ')
                        .map_or(len, |p| start + p);
                    assert_eq!(skip_spaces(&spaces, start), naive, "{at} {start}");
                }
            }
        }
    }
}
