//! A `values.schema.json` read into only the keywords validation uses, borrowing names from the text: descriptions,
//! defaults and other annotations are checked as JSON and dropped, not built into a tree. Reading follows
//! `serde_json::Value`'s rules exactly (the same parser, the same nesting limit and error texts; a repeated key's
//! last occurrence wins), so what validation sees is what a full JSON tree would give it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One schema: the keywords of a JSON object, or any other JSON value (which constrains nothing).
#[derive(Debug, Default)]
pub(super) enum Node<'a> {
    #[default]
    Other,
    /// `false` (kept apart for `additionalProperties`).
    False,
    Object(Box<Keywords<'a>>),
}

/// The keywords validation reads, each as `serde_json::Value`'s accessors would give it.
#[derive(Debug, Default)]
pub(super) struct Keywords<'a> {
    /// `type`: a string, or the strings of an array (empty: no type check).
    pub types: Vec<Cow<'a, str>>,
    /// `enum`, when it is an array.
    pub enumeration: Option<Vec<serde_json::Value>>,
    /// `minimum` and `maximum`, when they are numbers.
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    /// `pattern`, when it is a string.
    pub pattern: Option<Cow<'a, str>>,
    /// The strings of `required`, when it is an array.
    pub required: Option<Vec<Cow<'a, str>>>,
    /// `properties`, when it is an object, in order (look up with [`Keywords::property`]).
    pub properties: Option<Vec<(Cow<'a, str>, Node<'a>)>>,
    pub additional: Additional<'a>,
    /// `items`, whatever it is.
    pub items: Option<Node<'a>>,
}

/// `additionalProperties`.
#[derive(Debug, Default)]
pub(super) enum Additional<'a> {
    /// Absent, `true`, or anything else that allows every property unchecked.
    #[default]
    Allowed,
    /// `false`.
    Forbidden,
    /// An object: the schema of every property not in `properties`.
    Schema(Node<'a>),
}

impl<'a> Keywords<'a> {
    /// The schema of property `name` (the last one, if the object names it twice).
    pub fn property(&self, name: &str) -> Option<&Node<'a>> {
        self.properties
            .as_ref()?
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, n)| n)
    }
}

/// Reads a schema text; errors are `serde_json`'s, as reading it into a `serde_json::Value` reports them.
pub(super) fn parse(text: &str) -> Result<Node<'_>, serde_json::Error> {
    serde_json::from_str(text)
}

/// A JSON string, borrowed from the text when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Any JSON value, checked and dropped. Unlike `serde::de::IgnoredAny` it goes through `deserialize_any`, so
/// numbers are range-checked and nesting counts toward the parser's limit, as when reading a `serde_json::Value`.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Classify).map(|_| Skip)
    }
}

/// What a keyword's value is, for keywords that only use some JSON types.
enum Shaped<'a> {
    Text(Cow<'a, str>),
    Number(f64),
    /// An array's strings (other items dropped).
    Texts(Vec<Cow<'a, str>>),
    /// `false`, the one boolean a keyword here gives a meaning (`additionalProperties`).
    False,
    Other,
}

impl<'de> Deserialize<'de> for Shaped<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Classify)
    }
}

/// Reads any JSON value as a [`Shaped`] (objects are checked and dropped).
struct Classify;

impl<'de> Visitor<'de> for Classify {
    type Value = Shaped<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(if b { Shaped::Other } else { Shaped::False })
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Shaped::Number(n as f64))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Shaped::Number(n as f64))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        Ok(Shaped::Number(n))
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Shaped::Text(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Shaped::Text(Cow::Owned(s.to_string())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Shaped::Text(Cow::Owned(s)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(item) = seq.next_element::<Shaped>()? {
            if let Shaped::Text(t) = item {
                texts.push(t);
            }
        }
        Ok(Shaped::Texts(texts))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Shaped::Other)
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

/// Reads a schema: an object's keywords; any other value is checked and dropped.
struct NodeVisitor;

/// Every non-object JSON value, as [`Classify`] reads it, is a [`Node::Other`] (or [`Node::False`]).
macro_rules! scalar_nodes {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(fn $name<E: de::Error>(self, $($arg: $ty),*) -> Result<Self::Value, E> {
            Classify.$name($($arg),*).map(node)
        })*
    };
}

fn node(shaped: Shaped<'_>) -> Node<'_> {
    match shaped {
        Shaped::False => Node::False,
        _ => Node::Other,
    }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON schema")
    }
    scalar_nodes!(
        visit_bool(b: bool),
        visit_i64(n: i64),
        visit_u64(n: u64),
        visit_f64(n: f64),
        visit_str(s: &str),
        visit_unit(),
    );
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Classify.visit_seq(seq).map(node)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut k = Keywords::default();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            match key.as_ref() {
                "type" => {
                    k.types = match map.next_value::<Shaped>()? {
                        Shaped::Text(t) => vec![t],
                        Shaped::Texts(ts) => ts,
                        _ => Vec::new(),
                    }
                }
                "enum" => {
                    k.enumeration = match map.next_value::<serde_json::Value>()? {
                        serde_json::Value::Array(options) => Some(options),
                        _ => None,
                    }
                }
                "minimum" => k.minimum = number(map.next_value()?),
                "maximum" => k.maximum = number(map.next_value()?),
                "pattern" => {
                    k.pattern = match map.next_value::<Shaped>()? {
                        Shaped::Text(t) => Some(t),
                        _ => None,
                    }
                }
                "required" => {
                    k.required = match map.next_value::<Shaped>()? {
                        Shaped::Texts(ts) => Some(ts),
                        _ => None,
                    }
                }
                "properties" => k.properties = map.next_value::<Properties>()?.0,
                "additionalProperties" => {
                    k.additional = match map.next_value::<Node>()? {
                        Node::False => Additional::Forbidden,
                        object @ Node::Object(_) => Additional::Schema(object),
                        Node::Other => Additional::Allowed,
                    }
                }
                "items" => k.items = Some(map.next_value()?),
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(Node::Object(Box::new(k)))
    }
}

fn number(s: Shaped<'_>) -> Option<f64> {
    match s {
        Shaped::Number(n) => Some(n),
        _ => None,
    }
}

/// `properties`: its entries when it is an object.
struct Properties<'a>(Option<Vec<(Cow<'a, str>, Node<'a>)>>);

impl<'de> Deserialize<'de> for Properties<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Properties<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(Text(key)) = map.next_key::<Text>()? {
                    entries.push((key, map.next_value::<Node>()?));
                }
                Ok(Properties(Some(entries)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Classify.visit_seq(seq).map(|_| Properties(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Properties(None))
            }
        }
        d.deserialize_any(V)
    }
}
