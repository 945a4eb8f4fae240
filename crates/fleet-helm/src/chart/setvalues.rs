//! Helm's `--set`, `--set-string`, `--set-json` and `--set-file` syntax (`strvals`): `a.b=c,d[0].e=f`, `{x,y}`
//! lists, `\`-escapes, `null`, and `--set`'s typing (`true`/`false`, integers without leading zeros → int64).

use std::collections::BTreeMap;

use super::ChartError;
use crate::value::{Value, as_list, as_map, is_map, list_value, map_value, nil};

/// How the right-hand side of `key=value` is turned into a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKind {
    /// `--set`: booleans, `null` and integers are typed, everything else is a string.
    Typed,
    /// `--set-string`: always a string.
    String,
    /// `--set-json`: the value is JSON.
    Json,
}

fn typed(s: &str) -> Value {
    if s.eq_ignore_ascii_case("true") {
        return Value::from(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return Value::from(false);
    }
    if s.eq_ignore_ascii_case("null") {
        return nil();
    }
    if s == "0" {
        return Value::from(0i64);
    }
    if !s.is_empty()
        && !s.starts_with('0')
        && let Ok(i) = s.parse::<i64>()
    {
        return Value::from(i);
    }
    Value::from(s)
}

enum Seg {
    Key(String),
    Index(usize),
}

const MAX_INDEX: usize = 65536;

/// Parses one `--set`-style argument and merges it into `into` (a map value).
pub fn apply_set(into: &Value, arg: &str, kind: SetKind) -> Result<(), ChartError> {
    let err = |m: &str| ChartError::Values {
        origin: format!("--set {arg}"),
        message: m.to_string(),
    };
    let chars: Vec<char> = arg.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // Key path up to '='.
        let mut segs = Vec::new();
        let mut cur = String::new();
        loop {
            let Some(&c) = chars.get(i) else {
                return Err(err(&format!("key {cur:?} has no value")));
            };
            i += 1;
            match c {
                '\\' => {
                    if let Some(&n) = chars.get(i) {
                        cur.push(n);
                        i += 1;
                    }
                }
                '.' => {
                    if !cur.is_empty() {
                        segs.push(Seg::Key(std::mem::take(&mut cur)));
                    }
                }
                '[' => {
                    if !cur.is_empty() {
                        segs.push(Seg::Key(std::mem::take(&mut cur)));
                    }
                    let end = chars[i..]
                        .iter()
                        .position(|c| *c == ']')
                        .ok_or_else(|| err("missing ] in index"))?;
                    let idx: String = chars[i..i + end].iter().collect();
                    let n: usize = idx
                        .trim()
                        .parse()
                        .map_err(|_| err(&format!("failed to parse index {idx:?}")))?;
                    if n > MAX_INDEX {
                        return Err(err(&format!(
                            "index of {n} is greater than maximum supported index of {MAX_INDEX}"
                        )));
                    }
                    segs.push(Seg::Index(n));
                    i += end + 1;
                }
                '=' => break,
                ',' => {
                    return Err(err(&format!(
                        "key {cur:?} has no value (cannot end with ,)"
                    )));
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            segs.push(Seg::Key(cur));
        }
        // Value up to an unescaped ',' (not inside {…} for typed lists).
        let value = if kind == SetKind::Json {
            let rest: String = chars[i..].iter().collect();
            let mut de = serde_json::Deserializer::from_str(&rest).into_iter::<serde_json::Value>();
            let v = de
                .next()
                .ok_or_else(|| err("missing JSON value"))?
                .map_err(|e| err(&e.to_string()))?;
            i += rest[..de.byte_offset()].chars().count();
            if chars.get(i) == Some(&',') {
                i += 1;
            }
            crate::value::from_json(&v)
        } else if chars.get(i) == Some(&'{') && kind == SetKind::Typed {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '}')
                .ok_or_else(|| err("missing } in list"))?;
            let body: String = chars[i + 1..i + end].iter().collect();
            i += end + 1;
            if chars.get(i) == Some(&',') {
                i += 1;
            }
            let items = if body.is_empty() {
                vec![]
            } else {
                body.split(',').map(typed).collect()
            };
            list_value(items)
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.get(i) {
                i += 1;
                match c {
                    '\\' => {
                        if let Some(&n) = chars.get(i) {
                            s.push(n);
                            i += 1;
                        }
                    }
                    ',' => break,
                    c => s.push(c),
                }
            }
            if kind == SetKind::Typed {
                typed(&s)
            } else {
                Value::from(s)
            }
        };
        set_path(into, &segs, value).map_err(|e| err(&e.to_string()))?;
    }
    Ok(())
}

/// Why a parsed `--set` path cannot be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum PathError {
    #[error("empty key")]
    EmptyKey,
    #[error("not a map")]
    NotAMap,
    #[error("index without a key")]
    IndexWithoutKey,
    #[error("expected index")]
    ExpectedIndex,
}

fn set_path(root: &Value, segs: &[Seg], value: Value) -> Result<(), PathError> {
    let Some((first, rest)) = segs.split_first() else {
        return Err(PathError::EmptyKey);
    };
    match first {
        Seg::Key(k) => {
            let m = as_map(root).ok_or(PathError::NotAMap)?;
            if rest.is_empty() {
                m.insert(k.clone(), value);
                return Ok(());
            }
            let child = match (m.get(k), &rest[0]) {
                (Some(c), Seg::Key(_)) if is_map(&c) => c,
                (Some(c), Seg::Index(_)) if as_list(&c).is_some() => c,
                (_, Seg::Key(_)) => {
                    let c = map_value(BTreeMap::new());
                    m.insert(k.clone(), c.clone());
                    c
                }
                (_, Seg::Index(_)) => list_value(vec![]),
            };
            if matches!(rest[0], Seg::Index(_)) {
                let updated = set_in_list(&child, rest, value)?;
                m.insert(k.clone(), updated);
                Ok(())
            } else {
                set_path(&child, rest, value)
            }
        }
        Seg::Index(_) => Err(PathError::IndexWithoutKey),
    }
}

fn set_in_list(list: &Value, segs: &[Seg], value: Value) -> Result<Value, PathError> {
    let Some((Seg::Index(n), rest)) = segs.split_first() else {
        return Err(PathError::ExpectedIndex);
    };
    let mut items = as_list(list).unwrap_or_default();
    while items.len() <= *n {
        items.push(nil());
    }
    if rest.is_empty() {
        items[*n] = value;
    } else if matches!(rest[0], Seg::Index(_)) {
        items[*n] = set_in_list(&items[*n], rest, value)?;
    } else {
        if !is_map(&items[*n]) {
            items[*n] = map_value(BTreeMap::new());
        }
        set_path(&items[*n], rest, value)?;
    }
    Ok(list_value(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(args: &[(&str, SetKind)]) -> String {
        let v = map_value(BTreeMap::new());
        for (a, k) in args {
            apply_set(&v, a, *k).unwrap();
        }
        serde_json::to_string(&crate::value::to_json(&v).unwrap()).unwrap()
    }

    #[test]
    fn parses_like_strvals() {
        assert_eq!(
            set(&[("a.b=1,c=true,d=x,e=010", SetKind::Typed)]),
            r#"{"a":{"b":1},"c":true,"d":"x","e":"010"}"#
        );
        assert_eq!(
            set(&[("l[1].n=v,m={a,2}", SetKind::Typed)]),
            r#"{"l":[null,{"n":"v"}],"m":["a",2]}"#
        );
        assert_eq!(
            set(&[("a=1", SetKind::String), ("b\\.c=x\\,y", SetKind::Typed)]),
            r#"{"a":"1","b.c":"x,y"}"#
        );
        assert_eq!(
            set(&[("j={\"x\":[1,2]}", SetKind::Json)]),
            r#"{"j":{"x":[1,2]}}"#
        );
        assert_eq!(set(&[("n=null", SetKind::Typed)]), r#"{"n":null}"#);
    }
}
