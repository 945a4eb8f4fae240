//! JSON pointers (RFC 6901): parsing with `~0`/`~1` unescaping, array index rules, and lookups in a
//! `serde_json::Value`.

use serde_json::Value;

/// A parsed JSON pointer: the sequence of unescaped reference tokens. The empty pointer `""` is the whole document.
/// Why a JSON pointer, or one of its tokens as an array index, is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// A non-empty pointer must start with `/`.
    #[error("a JSON pointer must be empty or start with '/'")]
    NoLeadingSlash,
    /// `~` must be followed by `0` or `1`.
    #[error("'~' must be followed by '0' or '1' in a JSON pointer")]
    BadEscape,
    /// The token is not `-` or a decimal index without leading zeros.
    #[error("{token:?} is not an array index")]
    NotAnIndex { token: String },
    /// The index does not fit in memory's address range.
    #[error("array index {token} is too large")]
    IndexTooLarge { token: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    tokens: Vec<String>,
}

/// Where an array reference token points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayIndex {
    /// An existing or insertion position given as a decimal index.
    At(usize),
    /// `-`: the position after the last element.
    End,
}

impl Pointer {
    /// Parses a pointer such as `/a~1b/0/-`. It must be empty or start with `/`, and `~` must be followed by `0`
    /// or `1`.
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if text.is_empty() {
            return Ok(Self { tokens: Vec::new() });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PointerError::NoLeadingSlash);
        };
        let tokens = rest.split('/').map(unescape).collect::<Result<_, _>>()?;
        Ok(Self { tokens })
    }

    /// The unescaped reference tokens, outermost first.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// True for the empty pointer, which designates the whole document.
    pub fn is_root(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Splits into the parent pointer and the last token; `None` for the root.
    pub fn split_last(&self) -> Option<(Pointer, &str)> {
        let (last, parent) = self.tokens.split_last()?;
        Some((
            Pointer {
                tokens: parent.to_vec(),
            },
            last,
        ))
    }

    /// True when `self` is a proper prefix of `other` (e.g. `/a` of `/a/b`).
    pub fn is_proper_prefix_of(&self, other: &Pointer) -> bool {
        self.tokens.len() < other.tokens.len() && other.tokens.starts_with(&self.tokens)
    }

    /// The value this pointer designates in `doc`, if it exists.
    pub fn get<'v>(&self, doc: &'v Value) -> Option<&'v Value> {
        self.tokens.iter().try_fold(doc, |node, token| match node {
            Value::Object(map) => map.get(token),
            Value::Array(items) => match parse_array_index(token).ok()? {
                ArrayIndex::At(i) => items.get(i),
                ArrayIndex::End => None,
            },
            _ => None,
        })
    }

    /// The value this pointer designates in `doc`, mutably, if it exists.
    pub fn get_mut<'v>(&self, doc: &'v mut Value) -> Option<&'v mut Value> {
        self.tokens.iter().try_fold(doc, |node, token| match node {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => match parse_array_index(token).ok()? {
                ArrayIndex::At(i) => items.get_mut(i),
                ArrayIndex::End => None,
            },
            _ => None,
        })
    }
}

/// Parses an array reference token: `-`, or a decimal index without leading zeros.
pub fn parse_array_index(token: &str) -> Result<ArrayIndex, PointerError> {
    if token == "-" {
        return Ok(ArrayIndex::End);
    }
    let well_formed = !token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    if !well_formed {
        return Err(PointerError::NotAnIndex {
            token: token.to_owned(),
        });
    }
    token
        .parse()
        .map(ArrayIndex::At)
        .map_err(|_| PointerError::IndexTooLarge {
            token: token.to_owned(),
        })
}

fn unescape(token: &str) -> Result<String, PointerError> {
    if !token.contains('~') {
        return Ok(token.to_owned());
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => return Err(PointerError::BadEscape),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc6901_examples_resolve() {
        let doc = json!({
            "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
            "k\"l": 6, " ": 7, "m~n": 8
        });
        let cases = [
            ("", doc.clone()),
            ("/foo", json!(["bar", "baz"])),
            ("/foo/0", json!("bar")),
            ("/", json!(0)),
            ("/a~1b", json!(1)),
            ("/c%d", json!(2)),
            ("/e^f", json!(3)),
            ("/g|h", json!(4)),
            ("/i\\j", json!(5)),
            ("/k\"l", json!(6)),
            ("/ ", json!(7)),
            ("/m~0n", json!(8)),
        ];
        for (pointer, expected) in cases {
            let parsed = Pointer::parse(pointer).unwrap();
            assert_eq!(parsed.get(&doc), Some(&expected), "pointer {pointer:?}");
        }
    }

    #[test]
    fn tilde_escapes_unescape_in_order() {
        assert_eq!(Pointer::parse("/~01").unwrap().tokens(), ["~1"]);
        assert_eq!(Pointer::parse("/~10").unwrap().tokens(), ["/0"]);
    }

    #[test]
    fn malformed_pointers_are_rejected() {
        assert!(Pointer::parse("foo").is_err());
        assert!(Pointer::parse("/a~2").is_err());
        assert!(Pointer::parse("/a~").is_err());
    }

    #[test]
    fn array_indexes_follow_rfc6901() {
        assert_eq!(parse_array_index("0"), Ok(ArrayIndex::At(0)));
        assert_eq!(parse_array_index("12"), Ok(ArrayIndex::At(12)));
        assert_eq!(parse_array_index("-"), Ok(ArrayIndex::End));
        for bad in ["01", "", "-1", "1a", "+1", "99999999999999999999999"] {
            assert!(parse_array_index(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn missing_targets_resolve_to_none() {
        let doc = json!({"a": [1], "s": "x"});
        for pointer in ["/b", "/a/1", "/a/-", "/s/0", "/a/x"] {
            assert_eq!(
                Pointer::parse(pointer).unwrap().get(&doc),
                None,
                "{pointer}"
            );
        }
    }

    #[test]
    fn proper_prefix_is_detected() {
        let a = Pointer::parse("/a").unwrap();
        let ab = Pointer::parse("/a/b").unwrap();
        assert!(a.is_proper_prefix_of(&ab));
        assert!(!ab.is_proper_prefix_of(&a));
        assert!(!a.is_proper_prefix_of(&a));
    }
}
