//! A YAML document as serde-saphyr reads it: a tree of nodes, each with the position it is used at.
//!
//! Keys that are not strings become strings the way sigs.k8s.io/yaml turns go-yaml into JSON: integers in
//! decimal, floats as Go's `%g` at 32-bit precision, booleans as `true`/`false`; null keys are errors.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use serde_saphyr::Spanned;

use crate::error::Location;
use crate::gofmt;

/// One YAML node with the place it is used in the text.
pub(crate) type Node = Spanned<Kind>;

/// A mapping key, already converted to its JSON string.
pub(crate) type Key = Spanned<KeyText>;

/// The content of a node.
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Sequence(Vec<Node>),
    Mapping(Vec<(Key, Node)>),
}

/// A mapping key: text, or a boolean whose spelling is checked against the source before it becomes `true`/`false`.
pub(crate) enum KeyText {
    Text(String),
    Bool(bool),
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_none<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        Kind::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Kind, E> {
        Ok(Kind::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Kind, E> {
        Ok(Kind::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Kind, E> {
        Ok(Kind::Number(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Kind, E> {
        match i64::try_from(v) {
            Ok(i) => Ok(Kind::Number(i.into())),
            Err(_) => u64::try_from(v)
                .map(|u| Kind::Number(u.into()))
                .or_else(|_| self.visit_f64(v as f64)),
        }
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Kind, E> {
        match u64::try_from(v) {
            Ok(u) => Ok(Kind::Number(u.into())),
            Err(_) => self.visit_f64(v as f64),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kind, E> {
        Number::from_f64(v)
            .map(Kind::Number)
            .ok_or_else(|| E::custom(format!("{v} cannot be represented in JSON")))
    }
    fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
        Ok(Kind::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Kind, E> {
        Ok(Kind::String(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Kind, E> {
        String::from_utf8(v.to_vec())
            .map(Kind::String)
            .map_err(|_| E::custom("binary value is not UTF-8 text"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Kind::Sequence(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(Kind::Mapping(entries))
    }
}

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

/// sigs.k8s.io/yaml (Helm, kubectl) rejects null keys ("unsupported map key"); so do we.
const NULL_KEY: &str = "a null mapping key (`~`, `null` or empty) is not supported";

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = KeyText;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }
    fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
        Err(E::custom(NULL_KEY))
    }
    fn visit_none<E: de::Error>(self) -> Result<KeyText, E> {
        Err(E::custom(NULL_KEY))
    }
    fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
        Ok(KeyText::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
        Ok(KeyText::Text(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
        Ok(KeyText::Text(v.to_string()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<KeyText, E> {
        Ok(KeyText::Text(v.to_string()))
    }
    fn visit_u128<E>(self, v: u128) -> Result<KeyText, E> {
        Ok(KeyText::Text(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
        Ok(KeyText::Text(gofmt::yaml_key_float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
        Ok(KeyText::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<KeyText, E> {
        Ok(KeyText::Text(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<KeyText, E> {
        String::from_utf8(v.to_vec())
            .map(KeyText::Text)
            .map_err(|_| E::custom("binary mapping key is not UTF-8 text"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<KeyText, A::Error> {
        Err(de::Error::custom(
            "a sequence cannot be a mapping key here: keys must be scalars",
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<KeyText, A::Error> {
        Err(de::Error::custom(
            "a mapping cannot be a mapping key here: keys must be scalars",
        ))
    }
}

/// Converts a saphyr position into ours (`None` when unknown).
pub(crate) fn location(loc: &serde_saphyr::Location) -> Option<Location> {
    let (line, column) = (loc.line(), loc.column());
    (line > 0).then(|| Location {
        line: usize::try_from(line).unwrap_or(usize::MAX),
        column: usize::try_from(column).unwrap_or(usize::MAX),
    })
}

/// Positions by RFC 6901 JSON pointer ("" is the document root).
pub(crate) type Positions = HashMap<String, Location>;
