//! The value model templates run on: minijinja's [`Value`] (nil is `none`, Go ints are `i64`, floats `f64`, slices
//! are sequences) plus [`GoMap`], a sorted, shared, mutable map object, because Go maps are references that Sprig's
//! `set`/`unset`/`merge` mutate in place and that `range`/`toYaml` visit in key order. Also: Go truthiness, Go type
//! names, conversion from and to `serde_json::Value` (with how Go's `encoding/json` reads a value, [`json_node`]),
//! and building values straight from YAML ([`GoValues`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr, ValueKind};

/// A Go `map[string]interface{}`: keys sorted, shared by reference, mutable.
#[derive(Debug, Default)]
pub struct GoMap {
    entries: Mutex<BTreeMap<String, Value>>,
}

impl GoMap {
    pub fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Value>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub fn get(&self, key: &str) -> Option<Value> {
        self.lock().get(key).cloned()
    }
    pub fn insert(&self, key: impl Into<String>, value: Value) {
        self.lock().insert(key.into(), value);
    }
    pub fn remove(&self, key: &str) -> Option<Value> {
        self.lock().remove(key)
    }
    pub fn contains_key(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }
    /// A copy of the entries (values are shared, not deep-copied).
    pub fn snapshot(&self) -> BTreeMap<String, Value> {
        self.lock().clone()
    }
    pub fn len(&self) -> usize {
        self.lock().len()
    }
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

impl Object for GoMap {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        key.as_str().and_then(|k| self.get(k))
    }
    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys: Vec<Value> = self
            .lock()
            .keys()
            .map(|k| Value::from(k.as_str()))
            .collect();
        Enumerator::Values(keys)
    }
    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len())
    }
    fn is_true(self: &Arc<Self>) -> bool {
        !self.is_empty()
    }
}

/// A Go string whose bytes are not valid UTF-8, such as Sprig's `b64dec` and `b32dec` make from binary data. It is a
/// `string` to templates (`typeOf`, `kindOf`); byte-level functions (`b64enc`, `b32enc`, the `*sum` digests, `len`)
/// see its bytes, text functions see it with each invalid sequence replaced by U+FFFD (as Go's `strings`
/// functions and `encoding/json` treat invalid bytes), and printing it into a manifest fails as Helm's YAML parser
/// does.
#[derive(Debug)]
pub struct GoByteString(pub Vec<u8>);

impl Object for GoByteString {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl GoByteString {
    /// What go-yaml's reader reports for the first invalid UTF-8 sequence of these bytes (when they are printed into
    /// a manifest, Helm fails with it).
    pub fn yaml_error(&self) -> &'static str {
        let b = &self.0;
        let mut i = 0;
        while i < b.len() {
            let lead = b[i];
            let width = match lead {
                _ if lead & 0x80 == 0 => 1,
                _ if lead & 0xE0 == 0xC0 => 2,
                _ if lead & 0xF0 == 0xE0 => 3,
                _ if lead & 0xF8 == 0xF0 => 4,
                _ => return "invalid leading UTF-8 octet",
            };
            if i + width > b.len() {
                return "incomplete UTF-8 octet sequence";
            }
            if b[i + 1..i + width].iter().any(|t| t & 0xC0 != 0x80) {
                return "invalid trailing UTF-8 octet";
            }
            if std::str::from_utf8(&b[i..i + width]).is_err() {
                return "invalid Unicode character";
            }
            i += width;
        }
        "invalid leading UTF-8 octet"
    }
}

/// A Go string made from bytes: an ordinary string when they are UTF-8, else a [`GoByteString`].
pub fn string_from_bytes(bytes: Vec<u8>) -> Value {
    match String::from_utf8(bytes) {
        Ok(s) => Value::from(s),
        Err(e) => Value::from_object(GoByteString(e.into_bytes())),
    }
}

/// The bytes of a string-like value as Go holds them: a [`GoByteString`]'s or a `[]byte`'s own bytes, else `None`
/// (the caller uses the value's text).
pub fn raw_bytes(v: &Value) -> Option<Vec<u8>> {
    if let Some(s) = v.downcast_object_ref::<GoByteString>() {
        return Some(s.0.clone());
    }
    v.as_bytes().map(<[u8]>::to_vec)
}

fn is_byte_string(v: &Value) -> bool {
    v.downcast_object_ref::<GoByteString>().is_some()
}

/// Go's nil.
pub fn nil() -> Value {
    Value::from(())
}

pub fn is_nil(v: &Value) -> bool {
    v.is_none() || v.is_undefined()
}

/// A new map value holding `entries`.
pub fn map_value(entries: BTreeMap<String, Value>) -> Value {
    Value::from_object(GoMap {
        entries: Mutex::new(entries),
    })
}

/// The map behind `v`, if it is one. Maps not built by us (e.g. minijinja's own) are copied into a [`GoMap`].
pub fn as_map(v: &Value) -> Option<Arc<GoMap>> {
    if let Some(m) = v.downcast_object::<GoMap>() {
        return Some(m);
    }
    if v.kind() == ValueKind::Map {
        let mut entries = BTreeMap::new();
        for key in v.try_iter().ok()? {
            let val = v.get_item(&key).unwrap_or_default();
            entries.insert(key.to_string(), val);
        }
        return Some(Arc::new(GoMap {
            entries: Mutex::new(entries),
        }));
    }
    None
}

pub fn is_map(v: &Value) -> bool {
    v.kind() == ValueKind::Map
}

pub fn is_list(v: &Value) -> bool {
    v.kind() == ValueKind::Seq
}

/// The elements of a list value.
pub fn as_list(v: &Value) -> Option<Vec<Value>> {
    if v.kind() != ValueKind::Seq {
        return None;
    }
    v.try_iter().ok().map(|it| it.collect())
}

pub fn list_value(items: Vec<Value>) -> Value {
    Value::from(items)
}

pub fn is_float(v: &Value) -> bool {
    v.kind() == ValueKind::Number && !v.is_integer()
}

pub fn is_int(v: &Value) -> bool {
    v.kind() == ValueKind::Number && v.is_integer()
}

pub fn as_f64(v: &Value) -> Option<f64> {
    if v.kind() != ValueKind::Number {
        return None;
    }
    if v.is_integer() {
        return v.as_i64().map(|i| i as f64);
    }
    f64::try_from(v.clone()).ok()
}

/// Go's truth: false for nil, false, zero numbers and empty strings, slices and maps.
pub fn truthy(v: &Value) -> bool {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => false,
        ValueKind::Bool => v.is_true(),
        ValueKind::Number => as_f64(v).is_some_and(|f| f != 0.0),
        ValueKind::String => v.as_str().is_some_and(|s| !s.is_empty()),
        ValueKind::Bytes => v.as_bytes().is_some_and(|b| !b.is_empty()),
        ValueKind::Seq | ValueKind::Map => v.len().unwrap_or(0) > 0,
        _ => true,
    }
}

/// The Go type name of a value as Helm sees it (`typeOf`).
pub fn type_name(v: &Value) -> &'static str {
    if is_byte_string(v) {
        return "string";
    }
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => "<nil>",
        ValueKind::Bool => "bool",
        ValueKind::Number => number_type(v),
        ValueKind::String => "string",
        ValueKind::Bytes => "[]uint8",
        ValueKind::Seq => "[]interface {}",
        ValueKind::Map => "map[string]interface {}",
        _ => "*struct",
    }
}

/// A number's Go type, which is also its reflect kind: integers are `int`, the rest `float64`.
fn number_type(v: &Value) -> &'static str {
    if v.is_integer() { "int" } else { "float64" }
}

/// The Go reflect kind of a value (`kindOf`, `kindIs`).
pub fn kind_name(v: &Value) -> &'static str {
    if is_byte_string(v) {
        return "string";
    }
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => "invalid",
        ValueKind::Bool => "bool",
        ValueKind::Number => number_type(v),
        ValueKind::String => "string",
        ValueKind::Bytes | ValueKind::Seq => "slice",
        ValueKind::Map => "map",
        _ => "ptr",
    }
}

/// Converts JSON data (e.g. parsed values files) into template values.
pub fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => nil(),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(0.0))
            }
        }
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => list_value(items.iter().map(from_json).collect()),
        serde_json::Value::Object(m) => {
            map_value(m.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// Maximum nesting followed when converting or printing values (guards against cycles made with `set`).
pub const MAX_DEPTH: usize = 512;

/// Why a template value has no JSON form (worded as Go's `encoding/json` words it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// NaN or an infinity, as Go prints it.
    #[error("json: unsupported value: {shown}")]
    UnsupportedFloat { shown: String },
    /// Nesting deeper than [`MAX_DEPTH`], taken for a cycle made with `set`.
    #[error("json: unsupported value: encountered a cycle")]
    Cycle,
    /// More than [`MAX_JSON_NODES`] values.
    #[error("value too large (more than {MAX_JSON_NODES} elements)")]
    TooLarge,
}

/// Converts a template value into JSON data as Go's `encoding/json` sees it (keys sorted, `[]byte` as base64).
/// Fails on cycles or excessive nesting, and on NaN and infinities as Go does.
pub fn to_json(v: &Value) -> Result<serde_json::Value, JsonError> {
    let mut budget = MAX_JSON_NODES;
    to_json_depth(v, 0, &mut budget)
}

/// Most values one conversion visits: values that share parts (`$x = list $x $x` thirty times) are trees of
/// exponential size once converted (found by fuzzing).
pub const MAX_JSON_NODES: usize = 1 << 20;

/// One value as Go's `encoding/json` reads it, one level deep: the reading [`to_json`] writes out, and the one
/// schema validation checks in place.
pub enum JsonNode<'v> {
    Null,
    Bool(bool),
    /// A Go int (or uint64).
    Integer(serde_json::Number),
    /// A float64; JSON cannot carry it unless finite ([`json_float`]).
    Float(f64),
    /// A string; a `[]byte` reads as its base64 text, a value of no JSON kind as its printed text.
    String(std::borrow::Cow<'v, str>),
    Array,
    Object(Arc<GoMap>),
}

/// How `encoding/json` reads `v` (see [`JsonNode`]).
pub fn json_node(v: &Value) -> JsonNode<'_> {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => JsonNode::Null,
        ValueKind::Bool => JsonNode::Bool(v.is_true()),
        ValueKind::Number if v.is_integer() => match v.as_i64() {
            Some(i) => JsonNode::Integer(serde_json::Number::from(i)),
            None => match u64::try_from(v.clone()) {
                Ok(u) => JsonNode::Integer(serde_json::Number::from(u)),
                // Helm never holds a wider integer (values are float64, Sprig's arithmetic wraps in int64); a
                // values file's huge integer is the float64 nearest to it, so that is what such a number becomes.
                Err(_) => JsonNode::Float(f64::try_from(v.clone()).unwrap_or(0.0)),
            },
        },
        ValueKind::Number => JsonNode::Float(as_f64(v).unwrap_or(0.0)),
        ValueKind::String => {
            JsonNode::String(std::borrow::Cow::Borrowed(v.as_str().unwrap_or_default()))
        }
        // Go's `encoding/json` writes a `[]byte` as base64 text.
        ValueKind::Bytes => {
            use base64::Engine as _;
            let b = v.as_bytes().unwrap_or_default();
            JsonNode::String(std::borrow::Cow::Owned(
                base64::engine::general_purpose::STANDARD.encode(b),
            ))
        }
        ValueKind::Seq => JsonNode::Array,
        ValueKind::Map => JsonNode::Object(as_map(v).unwrap_or_default()),
        _ => JsonNode::String(std::borrow::Cow::Owned(v.to_string())),
    }
}

/// A float as a JSON number, or Go's error for NaN and the infinities.
pub fn json_float(f: f64) -> Result<serde_json::Number, JsonError> {
    serde_json::Number::from_f64(f).ok_or_else(|| JsonError::UnsupportedFloat {
        shown: crate::gofloat::format_float_g(f, None),
    })
}

/// Counts one more value visited at nesting `depth` against the limits [`to_json`] keeps: [`MAX_DEPTH`] (deeper
/// is taken for a cycle, as Go reports one) and [`MAX_JSON_NODES`] values in all.
pub fn json_visit(depth: usize, budget: &mut usize) -> Result<(), JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError::Cycle);
    }
    if *budget == 0 {
        return Err(JsonError::TooLarge);
    }
    *budget -= 1;
    Ok(())
}

fn to_json_depth(
    v: &Value,
    depth: usize,
    budget: &mut usize,
) -> Result<serde_json::Value, JsonError> {
    json_visit(depth, budget)?;
    Ok(match json_node(v) {
        JsonNode::Null => serde_json::Value::Null,
        JsonNode::Bool(b) => serde_json::Value::Bool(b),
        JsonNode::Integer(n) => serde_json::Value::Number(n),
        JsonNode::Float(f) => serde_json::Value::Number(json_float(f)?),
        JsonNode::String(s) => serde_json::Value::String(s.into_owned()),
        JsonNode::Array => serde_json::Value::Array(
            as_list(v)
                .unwrap_or_default()
                .iter()
                .map(|x| to_json_depth(x, depth + 1, budget))
                .collect::<Result<_, _>>()?,
        ),
        JsonNode::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, x) in m.snapshot() {
                out.insert(k, to_json_depth(&x, depth + 1, budget)?);
            }
            serde_json::Value::Object(out)
        }
    })
}

/// A deep copy: maps and lists are duplicated so mutations of the copy do not show in the original.
pub fn deep_copy(v: &Value) -> Value {
    deep_copy_depth(v, 0)
}

fn deep_copy_depth(v: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return nil();
    }
    match v.kind() {
        ValueKind::Map => match as_map(v) {
            Some(m) => {
                // A copy of the tree as it is now (keys copied, values shared), then each map or list in it copied
                // in place (and, past the depth limit, everything, as below); the lock is not held while copying
                // those (a map may hold itself).
                let mut entries = m.lock().clone();
                for x in entries.values_mut() {
                    if depth + 1 > MAX_DEPTH || matches!(x.kind(), ValueKind::Map | ValueKind::Seq)
                    {
                        *x = deep_copy_depth(x, depth + 1);
                    }
                }
                map_value(entries)
            }
            None => v.clone(),
        },
        ValueKind::Seq => list_value(match v.try_iter() {
            Ok(items) => items.map(|x| deep_copy_depth(&x, depth + 1)).collect(),
            Err(_) => Vec::new(),
        }),
        _ => v.clone(),
    }
}

/// [`deep_copy`] of a value the caller owns and gives up: the same values, but what nothing else can reach is kept
/// instead of copied. A map that nothing else holds keeps its place, its entries taken the same way in turn; a list of
/// scalars is kept as it is (lists do not change); anything shared is deep-copied. Past [`MAX_DEPTH`] values are nil,
/// as in `deep_copy`.
pub fn deep_take(v: Value) -> Value {
    deep_take_depth(v, 0)
}

fn deep_take_depth(v: Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return nil();
    }
    match v.kind() {
        ValueKind::Map => match v.downcast_object::<GoMap>() {
            // `v` and `m` are the only holders: nothing else reaches the map (nor can it hold itself).
            Some(m) if Arc::strong_count(&m) == 2 => {
                for x in m.lock().values_mut() {
                    if depth + 1 > MAX_DEPTH || matches!(x.kind(), ValueKind::Map | ValueKind::Seq)
                    {
                        *x = deep_take_depth(std::mem::take(x), depth + 1);
                    }
                }
                v
            }
            _ => deep_copy_depth(&v, depth),
        },
        ValueKind::Seq
            if depth < MAX_DEPTH
                && v.downcast_object_ref::<Vec<Value>>().is_some_and(|items| {
                    items
                        .iter()
                        .all(|x| !matches!(x.kind(), ValueKind::Map | ValueKind::Seq))
                }) =>
        {
            v
        }
        _ => deep_copy_depth(&v, depth),
    }
}

/// Builds template values straight from YAML text ([`fleet_yaml::parse::build_first_value`]) as Helm holds what it
/// read through JSON: every number a Go float64, maps as [`GoMap`]s. The same values as converting the parsed JSON
/// with `from_json_floats`, without building the JSON first.
pub struct GoValues;

impl fleet_yaml::parse::Build for GoValues {
    type Node = Value;
    type Map = BTreeMap<String, Value>;

    fn scalar(&mut self, value: serde_json::Value) -> Value {
        match value {
            serde_json::Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0)),
            other => from_json(&other),
        }
    }

    fn string(&mut self, text: &str) -> Value {
        Value::from(text)
    }

    fn sequence(&mut self, items: Vec<Value>) -> Value {
        list_value(items)
    }

    fn new_map(&mut self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }

    fn insert(&mut self, map: &mut BTreeMap<String, Value>, key: String, value: Value) -> bool {
        map.insert(key, value).is_none()
    }

    fn mapping(&mut self, map: BTreeMap<String, Value>) -> Value {
        map_value(map)
    }

    fn json(&mut self, value: serde_json::Value) -> Value {
        from_json_floats_owned(value)
    }
}

/// [`from_json_floats`] consuming the data: map keys move into the new maps instead of being copied (a large
/// values file has thousands).
pub(crate) fn from_json_floats_owned(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Array(items) => {
            list_value(items.into_iter().map(from_json_floats_owned).collect())
        }
        serde_json::Value::Object(m) => map_value(
            m.into_iter()
                .map(|(k, v)| (k, from_json_floats_owned(v)))
                .collect(),
        ),
        other => from_json_floats(&other),
    }
}

/// JSON numbers decode to Go float64, as `encoding/json` does into `interface{}`.
pub(crate) fn from_json_floats(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::Array(items) => list_value(items.iter().map(from_json_floats).collect()),
        serde_json::Value::Object(m) => map_value(
            m.iter()
                .map(|(k, v)| (k.clone(), from_json_floats(v)))
                .collect(),
        ),
        other => from_json(other),
    }
}

#[cfg(test)]
mod deep_take_tests {
    use super::*;

    fn map_of(entries: &[(&str, Value)]) -> Value {
        map_value(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn same(a: &Value, b: &Value) -> bool {
        match (a.downcast_object::<GoMap>(), b.downcast_object::<GoMap>()) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
            _ => false,
        }
    }

    /// `deep_take` gives `deep_copy`'s values; it keeps the maps nothing else holds and copies the shared ones, so
    /// a change through the result never shows through another holder.
    #[test]
    fn deep_take_keeps_what_nothing_else_holds_and_copies_the_rest() {
        let shared = map_of(&[("s", Value::from(1))]);
        let own = map_of(&[("o", Value::from(2))]);
        let scalars = list_value(vec![Value::from("a"), Value::from(3)]);
        let with_map = list_value(vec![map_of(&[("in", Value::from(4))])]);
        let root = map_of(&[
            ("shared", shared.clone()),
            ("own", own),
            ("scalars", scalars),
            ("with_map", with_map),
            ("n", Value::from(5)),
        ]);
        let expected = format!("{:?}", deep_copy(&root));
        let address = |v: &Value| Arc::as_ptr(&as_map(v).unwrap()) as usize;
        let (root_at, own_at) = (
            address(&root),
            address(&as_map(&root).unwrap().get("own").unwrap()),
        );
        let root_again = root.clone();
        // `root` is held twice here: it is copied whole.
        let copied = deep_take(root);
        assert_eq!(format!("{copied:?}"), expected);
        assert!(!same(&copied, &root_again));
        // Held once: the root and `own` are kept, `shared` (also held by the test) is copied.
        let taken = deep_take(root_again);
        assert_eq!(format!("{taken:?}"), expected);
        let m = as_map(&taken).unwrap();
        let own_after = m.get("own").unwrap();
        assert_eq!((address(&taken), address(&own_after)), (root_at, own_at));
        assert!(!same(&m.get("shared").unwrap(), &shared));
        as_map(&m.get("shared").unwrap())
            .unwrap()
            .insert("s", Value::from(9));
        assert_eq!(as_map(&shared).unwrap().get("s").unwrap(), Value::from(1));
    }
}

#[cfg(test)]
mod json_node_tests {
    use super::*;

    /// Helm holds no integer wider than Go's int64 (values are float64; Sprig's arithmetic wraps), so an integer
    /// beyond u64 reads as the float64 nearest to it, as a values file's `123456789012345678901234567890` does in
    /// Helm (`toJson` gives `1.2345678901234568e+29`), never as 0. Integers within i64 and u64 stay exact.
    #[test]
    fn integers_beyond_u64_read_as_go_float64s() {
        let go_json = |v: Value| fleet_yaml::gojson::to_json_go(&to_json(&v).unwrap());
        assert_eq!(
            go_json(Value::from(123_456_789_012_345_678_901_234_567_890_i128)),
            "1.2345678901234568e+29"
        );
        assert_eq!(
            go_json(Value::from(-9_223_372_036_854_775_809_i128)),
            "-9223372036854776000"
        );
        assert_eq!(
            go_json(Value::from(u128::from(u64::MAX) + 1)),
            "18446744073709552000"
        );
        assert_eq!(go_json(Value::from(u64::MAX)), "18446744073709551615");
        assert_eq!(go_json(Value::from(i64::MIN)), "-9223372036854775808");
    }
}
