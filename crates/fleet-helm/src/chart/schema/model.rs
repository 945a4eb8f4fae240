//! A `values.schema.json` read into only the keywords validation uses, borrowing names from the text: descriptions,
//! defaults and other annotations are checked as JSON and dropped, not built into a tree. Reading follows
//! `serde_json::Value`'s rules exactly (the same parser, the same nesting limit and error texts; a repeated key's
//! last occurrence wins), so what validation sees is what a full JSON tree would give it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A whole schema text read into flat tables: every object schema is one [`Keywords`] in `nodes`, and its
/// strings, properties and enums are spans of the shared tables, so reading a schema allocates a handful of
/// growing vectors instead of a box and several vectors per subschema.
#[derive(Debug, Default)]
pub(super) struct Schema<'a> {
    /// The schema the text is (the document's root value).
    pub root: Node,
    nodes: Vec<Keywords>,
    /// The strings of `type`, `required` and `pattern`, in spans.
    texts: Vec<Cow<'a, str>>,
    /// The entries of every `properties` object, one span each, in the object's order.
    properties: Vec<(Cow<'a, str>, Node)>,
    enums: Vec<Vec<serde_json::Value>>,
}

/// One schema: the keywords of a JSON object (an index into [`Schema`]'s nodes), or any other JSON value (which
/// constrains nothing).
#[derive(Debug, Default, Clone, Copy)]
pub(super) enum Node {
    #[default]
    Other,
    /// `false` (kept apart for `additionalProperties`).
    False,
    Object(u32),
}

/// A run of entries in one of [`Schema`]'s tables.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The keywords validation reads, each as `serde_json::Value`'s accessors would give it.
#[derive(Debug, Default)]
pub(super) struct Keywords {
    /// `type`: a string, or the strings of an array (empty: no type check).
    types: Span,
    /// `enum`, when it is an array.
    enumeration: Option<u32>,
    /// `minimum` and `maximum`, when they are numbers.
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    /// `pattern`, when it is a string.
    pattern: Option<u32>,
    /// The strings of `required`, when it is an array.
    required: Option<Span>,
    /// `properties`, when it is an object, in order (look up with [`Schema::property`]).
    properties: Option<Span>,
    pub additional: Additional,
    /// `items`, whatever it is.
    pub items: Option<Node>,
}

/// `additionalProperties`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) enum Additional {
    /// Absent, `true`, or anything else that allows every property unchecked.
    #[default]
    Allowed,
    /// `false`.
    Forbidden,
    /// An object: the schema of every property not in `properties`.
    Schema(Node),
}

impl<'a> Schema<'a> {
    /// The keywords of `node`, when it is an object schema.
    pub fn keywords(&self, node: Node) -> Option<&Keywords> {
        match node {
            Node::Object(i) => self.nodes.get(i as usize),
            _ => None,
        }
    }

    /// `type`'s strings (empty: no type check).
    pub fn types(&self, k: &Keywords) -> &[Cow<'a, str>] {
        &self.texts[k.types.range()]
    }

    /// `enum`'s options, when it is an array.
    pub fn enumeration(&self, k: &Keywords) -> Option<&[serde_json::Value]> {
        k.enumeration.map(|i| self.enums[i as usize].as_slice())
    }

    /// `pattern`, when it is a string.
    pub fn pattern(&self, k: &Keywords) -> Option<&str> {
        k.pattern.map(|i| self.texts[i as usize].as_ref())
    }

    /// `required`'s strings, when it is an array.
    pub fn required(&self, k: &Keywords) -> Option<&[Cow<'a, str>]> {
        k.required.map(|s| &self.texts[s.range()])
    }

    /// The schema of property `name` (the last one, if the object names it twice).
    pub fn property(&self, k: &Keywords, name: &str) -> Option<Node> {
        self.properties[k.properties?.range()]
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, n)| *n)
    }
}

/// The most entries one of a [`Schema`]'s tables holds (its indices and spans are `u32`). A schema text needs
/// gigabytes to reach it; one that does is an error at the place it passes the limit, never a wrong index.
const MAX_ENTRIES: usize = u32::MAX as usize;

/// Reads a schema text; errors are `serde_json`'s, as reading it into a `serde_json::Value` reports them.
pub(super) fn parse(text: &str) -> Result<Schema<'_>, serde_json::Error> {
    parse_within(text, MAX_ENTRIES)
}

/// [`parse`], with at most `max_entries` entries in each table. The quick reader reads nearly every schema; a text
/// it leaves (an invalid one above all) is read by `serde_json`, whose errors are the ones reported.
fn parse_within(text: &str, max_entries: usize) -> Result<Schema<'_>, serde_json::Error> {
    let mut quick = super::quick::Reader::new(text);
    if let Ok(schema) = build(&mut quick, max_entries)
        && quick.end().is_ok()
    {
        return Ok(schema);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let schema = build(&mut de, max_entries)?;
    de.end()?;
    Ok(schema)
}

/// The schema `d` reads, into tables of at most `max_entries` entries.
fn build<'de, D: Deserializer<'de>>(d: D, max_entries: usize) -> Result<Schema<'de>, D::Error> {
    let mut builder = Builder {
        schema: Schema::default(),
        pending: Vec::new(),
        max_entries,
    };
    builder.schema.root = NodeSeed(&mut builder).deserialize(d)?;
    Ok(builder.schema)
}

/// A [`Schema`] being read.
struct Builder<'a> {
    schema: Schema<'a>,
    /// The entries of the `properties` objects being read, innermost last; each moves to the schema's table as a
    /// span when its object closes.
    pending: Vec<(Cow<'a, str>, Node)>,
    /// [`MAX_ENTRIES`], or fewer in tests.
    max_entries: usize,
}

impl<'a> Builder<'a> {
    /// A position in a table, or an error past [`MAX_ENTRIES`].
    fn index<E: de::Error>(&self, position: usize) -> Result<u32, E> {
        match u32::try_from(position) {
            Ok(i) if position <= self.max_entries => Ok(i),
            _ => Err(E::custom(format_args!(
                "schema too large: more than {} entries in one table",
                self.max_entries
            ))),
        }
    }

    /// The span of a table's entries from `start` to `end`.
    fn span_from<E: de::Error>(&self, start: usize, end: usize) -> Result<Span, E> {
        Ok(Span {
            start: self.index(start)?,
            end: self.index(end)?,
        })
    }

    /// Adds one string to the texts, as a span of one.
    fn text<E: de::Error>(&mut self, t: Cow<'a, str>) -> Result<Span, E> {
        let start = self.schema.texts.len();
        self.schema.texts.push(t);
        self.span_from(start, start + 1)
    }
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
    /// `false`, the one boolean a keyword here gives a meaning (`additionalProperties`).
    False,
    Other,
}

impl<'de> Deserialize<'de> for Shaped<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Classify)
    }
}

/// Reads any JSON value as a [`Shaped`] (arrays and objects are checked and dropped).
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
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Shaped::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Shaped::Other)
    }
}

/// Reads a schema into the builder: an object's keywords; any other value is checked and dropped.
struct NodeSeed<'b, 'a>(&'b mut Builder<'a>);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, 'de> {
    type Value = Node;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(self)
    }
}

/// Every non-object JSON value, as [`Classify`] reads it, is a [`Node::Other`] (or [`Node::False`]).
macro_rules! scalar_nodes {
    ($($name:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {
        $(fn $name<E: de::Error>(self, $($arg: $ty),*) -> Result<Self::Value, E> {
            Classify.$name($($arg),*).map(node)
        })*
    };
}

fn node(shaped: Shaped<'_>) -> Node {
    match shaped {
        Shaped::False => Node::False,
        _ => Node::Other,
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, 'de> {
    type Value = Node;
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
        let b = self.0;
        let mut k = Keywords::default();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            match key.as_ref() {
                "type" => {
                    k.types = map
                        .next_value_seed(TextsSeed {
                            builder: b,
                            one_string: true,
                        })?
                        .unwrap_or_default()
                }
                "enum" => {
                    k.enumeration = match map.next_value::<serde_json::Value>()? {
                        serde_json::Value::Array(options) => {
                            b.schema.enums.push(options);
                            Some(b.index(b.schema.enums.len())? - 1)
                        }
                        _ => None,
                    }
                }
                "minimum" => k.minimum = number(map.next_value()?),
                "maximum" => k.maximum = number(map.next_value()?),
                "pattern" => {
                    k.pattern = match map.next_value::<Shaped>()? {
                        Shaped::Text(t) => {
                            b.schema.texts.push(t);
                            Some(b.index(b.schema.texts.len())? - 1)
                        }
                        _ => None,
                    }
                }
                "required" => {
                    k.required = map.next_value_seed(TextsSeed {
                        builder: b,
                        one_string: false,
                    })?
                }
                "properties" => k.properties = map.next_value_seed(PropertiesSeed(b))?,
                "additionalProperties" => {
                    k.additional = match map.next_value_seed(NodeSeed(b))? {
                        Node::False => Additional::Forbidden,
                        object @ Node::Object(_) => Additional::Schema(object),
                        Node::Other => Additional::Allowed,
                    }
                }
                "items" => k.items = Some(map.next_value_seed(NodeSeed(b))?),
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        b.schema.nodes.push(k);
        Ok(Node::Object(b.index(b.schema.nodes.len())? - 1))
    }
}

fn number(s: Shaped<'_>) -> Option<f64> {
    match s {
        Shaped::Number(n) => Some(n),
        _ => None,
    }
}

/// A keyword whose value means something as an array of strings (`type`, `required`) and, with `one_string`, as
/// one string (`type`): the span of its strings in the builder's texts (a string is a span of one; an array's
/// other items are dropped), `None` for any other value.
struct TextsSeed<'b, 'a> {
    builder: &'b mut Builder<'a>,
    one_string: bool,
}

impl<'de> DeserializeSeed<'de> for TextsSeed<'_, 'de> {
    type Value = Option<Span>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The parts of a [`Visitor`] for a seed that takes a span from some values only ([`TextsSeed`], [`PropertiesSeed`]):
/// what it expects, and `None` for every number, boolean and null (plus the other visits named), checked as
/// [`Classify`] checks them (range checks and nesting included).
macro_rules! no_span {
    (@visits $($name:ident($arg:ident: $ty:ty)),* $(,)?) => {
        $(fn $name<E: de::Error>(self, $arg: $ty) -> Result<Self::Value, E> {
            Classify.$name($arg).map(|_| None)
        })*
    };
    ($($name:ident($arg:ident: $ty:ty)),* $(,)?) => {
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Classify.visit_unit().map(|_| None)
        }
        no_span!(@visits visit_bool(b: bool), visit_i64(n: i64), visit_u64(n: u64), visit_f64(n: f64),
            $($name($arg: $ty)),*);
    };
}

impl<'de> Visitor<'de> for TextsSeed<'_, 'de> {
    type Value = Option<Span>;
    no_span!();
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        self.one_string
            .then(|| self.builder.text(Cow::Borrowed(s)))
            .transpose()
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        self.one_string
            .then(|| self.builder.text(Cow::Owned(s.to_string())))
            .transpose()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let texts = &mut self.builder.schema.texts;
        let start = texts.len();
        while let Some(item) = seq.next_element::<Shaped>()? {
            if let Shaped::Text(t) = item {
                texts.push(t);
            }
        }
        let end = texts.len();
        self.builder.span_from(start, end).map(Some)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Classify.visit_map(map).map(|_| None)
    }
}

/// `properties`: the span of its entries when it is an object, `None` for any other value.
struct PropertiesSeed<'b, 'a>(&'b mut Builder<'a>);

impl<'de> DeserializeSeed<'de> for PropertiesSeed<'_, 'de> {
    type Value = Option<Span>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PropertiesSeed<'_, 'de> {
    type Value = Option<Span>;
    no_span!(visit_str(s: &str));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Classify.visit_seq(seq).map(|_| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let b = self.0;
        let start = b.pending.len();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            let node = map.next_value_seed(NodeSeed(b))?;
            b.pending.push((key, node));
        }
        let properties = &mut b.schema.properties;
        let first = properties.len();
        properties.extend(b.pending.drain(start..));
        let end = properties.len();
        b.span_from(first, end).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema the quick reader reads from `text` (`None` where it leaves the text to `serde_json`), and the one
    /// `serde_json` reads.
    fn both_readings(text: &str) -> (Option<String>, Result<String, String>) {
        let mut quick = super::super::quick::Reader::new(text);
        let quick = build(&mut quick, MAX_ENTRIES)
            .ok()
            .filter(|_| quick.end().is_ok())
            .map(|s| format!("{s:?}"));
        let mut de = serde_json::Deserializer::from_str(text);
        let full = build(&mut de, MAX_ENTRIES)
            .and_then(|s| de.end().map(|()| s))
            .map(|s| format!("{s:?}"))
            .map_err(|e| e.to_string());
        (quick, full)
    }

    /// The quick reader reads real, pretty-printed schemas, and what it reads is what `serde_json` reads: the same
    /// keywords, strings (escapes included), numbers (as `serde_json` reads them: the reader hands them over) and
    /// enums. Every text `serde_json` refuses, it leaves to `serde_json`, so errors are `serde_json`'s.
    #[test]
    fn the_quick_reader_reads_what_serde_json_reads() {
        let testdata = [
            include_str!("../../../../../testdata/helm/charts/external-dns/values.schema.json"),
            include_str!("../../../../../testdata/helm/charts/fleet-agent/values.schema.json"),
            include_str!("../../../../../testdata/helm/charts/fleet/values.schema.json"),
            include_str!("../../../../../testdata/helm/charts/postgresql/values.schema.json"),
        ];
        let deep = |n: usize| format!("{}{{}}{}", "{\"items\": ".repeat(n - 1), "}".repeat(n - 1));
        let read_quickly = [
            "{}",
            " \n\t\r{ }\n\n",
            r#"{"type": "object", "properties": {"a": {"type": ["string", "null"], "pattern": "^a\\d+$"}}}"#,
            r#"{"properties": {"\u00e9t\u00e9": {"enum": [1, -2, 3.5, 1e3, -0, 18446744073709551615, 1.7e308, "x\ny", null, true, {"k": [false]}]}}}"#,
            r#"{"minimum": 0.1, "maximum": 12345678901234567890123, "type": "integer"}"#,
            r#"{"minimum": -1e-400, "maximum": 2E+2, "required": ["a", "b\"c", 1, null], "additionalProperties": false}"#,
            r#"{"items": [{"type": "string"}, true], "additionalProperties": {"type": "number"}, "properties": {"x": false}}"#,
            r#"{"type": "a", "type": "b", "properties": {"p": {}, "p": {"type": "null"}}, "description": "long\t\u263a"}"#,
            "{\"a\":        \n                           \"b\",\n  \"c\" :[ 1 , 2 ]  }",
            "[1, \"two\", {\"type\": \"x\"}]",
            "\"just a string\"",
            "12",
            "null",
        ];
        let invalid = [
            "",
            "{",
            "{\"a\": 1,}",
            "[1, 2,]",
            "{\"a\" 1}",
            "{1: 2}",
            "{\"a\": 01}",
            "{\"a\": 1.}",
            "{\"a\": -}",
            "{\"a\": 1e400}",
            "{\"a\": 1.2.3}",
            "{\"a\": tru}",
            "{\"a\": truex}",
            "{\"a\": \"tab\there\"}",
            "{\"a\": \"bad \\q escape\"}",
            "{\"a\": \"\\ud800\"}",
            "{\"a\": \"unterminated}",
            "{\"a\": \"ends in a backslash\\",
            "{} {}",
            "{}x",
            "[1 2]",
            "{\"a\": 1 \"b\": 2}",
        ];
        for text in testdata.iter().chain(&read_quickly) {
            let (quick, full) = both_readings(text);
            assert_eq!(quick.as_ref(), Some(full.as_ref().unwrap()), "{text}");
        }
        for text in invalid {
            let (quick, full) = both_readings(text);
            assert_eq!(quick, None, "{text}");
            assert!(full.is_err(), "{text}");
        }
        // Nesting up to 100 levels is read here; deeper texts go to serde_json, which reads them up to its limit.
        for (n, quick_reads) in [(100, true), (101, false), (127, false), (200, false)] {
            let (quick, full) = both_readings(&deep(n));
            assert_eq!(quick.is_some(), quick_reads, "{n}");
            if let Some(quick) = quick {
                assert_eq!(Ok(quick), full);
            }
        }
        assert!(
            both_readings(&deep(200))
                .1
                .unwrap_err()
                .contains("recursion limit")
        );
    }

    /// A table past its limit is an error where the text passes it, not a wrong index; at the limit it reads.
    /// (The real limit, [`MAX_ENTRIES`], is `u32::MAX`; the same check runs with a small one here.)
    #[test]
    fn a_table_past_its_limit_is_an_error() {
        let within = r#"{"type": ["a", "b"], "properties": {"x": {}, "y": {}}, "required": ["c"]}"#;
        assert!(parse_within(within, 4).is_ok());
        for text in [
            r#"{"properties": {"x": {}, "y": {}, "z": {}}}"#,
            r#"{"required": ["a", "b", "c", "d", "e"]}"#,
            r#"{"type": "a", "pattern": "b", "required": ["c", "d", "e"]}"#,
            r#"{"properties": {"x": {"items": {"items": {"items": {}}}}}}"#,
            r#"{"enum": [1], "enum": [2], "enum": [3], "enum": [4]}"#,
        ] {
            let err = parse_within(text, 3).err().map(|e| e.to_string());
            assert!(
                err.as_deref()
                    .is_some_and(|e| e.starts_with("schema too large: more than 3 entries")
                        && e.contains(" at line 1 column ")),
                "{text}: {err:?}"
            );
        }
    }
}
