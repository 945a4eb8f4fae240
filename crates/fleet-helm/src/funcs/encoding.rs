//! Encodings: Helm's `toYaml`/`fromYaml`/`toJson`/`fromJson` families (JSON written exactly as Go's
//! `encoding/json` writes it, HTML-escaped unless raw), `toToml`, base64, hashes, and URL helpers.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::{FuncError, FuncResult, Table, arity, err, str_arg};
use crate::gofmt::format_float_g;
use crate::value::{
    Value, as_f64, as_list, as_map, from_json, is_nil, list_value, map_value, to_json,
};
use minijinja::value::ValueKind;

pub(super) fn register(t: &mut Table) {
    t.insert("toYaml", |_, a| {
        arity("toYaml", &a, 1)?;
        Ok(Value::from(
            crate::yaml::to_yaml(&a[0])
                .unwrap_or_default()
                .trim_end_matches('\n')
                .to_string(),
        ))
    });
    t.insert("mustToYaml", |_, a| {
        arity("mustToYaml", &a, 1)?;
        let y = crate::yaml::to_yaml(&a[0]).map_err(FuncError::Msg)?;
        Ok(Value::from(y.trim_end_matches('\n').to_string()))
    });
    t.insert("toYamlPretty", |_, a| {
        arity("toYamlPretty", &a, 1)?;
        Ok(Value::from(
            crate::yaml::to_yaml(&a[0])
                .unwrap_or_default()
                .trim_end_matches('\n')
                .to_string(),
        ))
    });
    t.insert("fromYaml", |_, a| {
        arity("fromYaml", &a, 1)?;
        Ok(match crate::yaml::parse_value(&str_arg(&a[0])) {
            Ok(v) if v.kind() == ValueKind::Map => v,
            Ok(v) if is_nil(&v) => map_value(Default::default()),
            Ok(_) => error_map("error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {}"),
            Err(e) => error_map(&e),
        })
    });
    t.insert("fromYamlArray", |_, a| {
        arity("fromYamlArray", &a, 1)?;
        Ok(match crate::yaml::parse_value(&str_arg(&a[0])) {
            Ok(v) if v.kind() == ValueKind::Seq => v,
            Ok(v) if is_nil(&v) => list_value(vec![]),
            Ok(_) => list_value(vec![Value::from(
                "error unmarshaling JSON: cannot unmarshal into []interface {}",
            )]),
            Err(e) => list_value(vec![Value::from(e)]),
        })
    });
    t.insert("toJson", |_, a| json_fn("toJson", a, true, false, false));
    t.insert("mustToJson", |_, a| {
        json_fn("mustToJson", a, true, false, true)
    });
    t.insert("toRawJson", |_, a| {
        json_fn("toRawJson", a, false, false, false)
    });
    t.insert("mustToRawJson", |_, a| {
        json_fn("mustToRawJson", a, false, false, true)
    });
    t.insert("toPrettyJson", |_, a| {
        json_fn("toPrettyJson", a, true, true, false)
    });
    t.insert("mustToPrettyJson", |_, a| {
        json_fn("mustToPrettyJson", a, true, true, true)
    });
    t.insert("fromJson", |_, a| {
        arity("fromJson", &a, 1)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
                Ok(v @ serde_json::Value::Object(_)) => from_json_floats(&v),
                Ok(_) => error_map(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ),
                Err(e) => error_map(&e.to_string()),
            },
        )
    });
    t.insert("mustFromJson", |_, a| {
        arity("mustFromJson", &a, 1)?;
        match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
            Ok(v) => Ok(from_json_floats(&v)),
            Err(e) => err(e.to_string()),
        }
    });
    t.insert("fromJsonArray", |_, a| {
        arity("fromJsonArray", &a, 1)?;
        Ok(
            match serde_json::from_str::<serde_json::Value>(&str_arg(&a[0])) {
                Ok(v @ serde_json::Value::Array(_)) => from_json_floats(&v),
                Ok(_) => list_value(vec![Value::from(
                    "json: cannot unmarshal into Go value of type []interface {}",
                )]),
                Err(e) => list_value(vec![Value::from(e.to_string())]),
            },
        )
    });
    t.insert("toToml", |_, a| {
        arity("toToml", &a, 1)?;
        Ok(Value::from(to_toml(&a[0])))
    });
    t.insert("b64enc", |_, a| {
        arity("b64enc", &a, 1)?;
        Ok(Value::from(STANDARD.encode(str_arg(&a[0]))))
    });
    t.insert("b64dec", |_, a| {
        arity("b64dec", &a, 1)?;
        Ok(Value::from(match STANDARD.decode(str_arg(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e.to_string(),
        }))
    });
    t.insert("sha256sum", |_, a| {
        arity("sha256sum", &a, 1)?;
        Ok(Value::from(hex::encode(sha2::Sha256::digest(
            str_arg(&a[0]).as_bytes(),
        ))))
    });
    t.insert("sha512sum", |_, a| {
        arity("sha512sum", &a, 1)?;
        Ok(Value::from(hex::encode(sha2::Sha512::digest(
            str_arg(&a[0]).as_bytes(),
        ))))
    });
    t.insert("urlJoin", |_, a| {
        arity("urlJoin", &a, 1)?;
        let m = as_map(&a[0]).map(|m| m.snapshot()).unwrap_or_default();
        let get = |k: &str| m.get(k).map(super::strval).unwrap_or_default();
        let mut out = String::new();
        if !get("scheme").is_empty() {
            out.push_str(&get("scheme"));
            out.push_str("://");
        }
        if !get("userinfo").is_empty() {
            out.push_str(&get("userinfo"));
            out.push('@');
        }
        out.push_str(&get("host"));
        out.push_str(&get("path"));
        if !get("query").is_empty() {
            out.push('?');
            out.push_str(&get("query"));
        }
        if !get("fragment").is_empty() {
            out.push('#');
            out.push_str(&get("fragment"));
        }
        Ok(Value::from(out))
    });
}

fn error_map(msg: &str) -> Value {
    let mut m = std::collections::BTreeMap::new();
    m.insert("Error".to_string(), Value::from(msg));
    map_value(m)
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

fn json_fn(name: &str, a: Vec<Value>, escape_html: bool, pretty: bool, must: bool) -> FuncResult {
    arity(name, &a, 1)?;
    let mut out = String::new();
    match write_json(
        &mut out,
        &a[0],
        escape_html,
        if pretty { Some(0) } else { None },
        0,
    ) {
        Ok(()) => Ok(Value::from(out)),
        Err(e) if must => err(e),
        Err(_) => Ok(Value::from("")),
    }
}

/// Go's `json.Marshal` float formatting.
pub(crate) fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", e.abs())
            .replace("e+0", "e+")
            .replace("e-0", "e-")
    } else {
        let s = format!("{f}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    }
}

fn write_json_string(out: &mut String, s: &str, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' if escape_html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn newline_indent(out: &mut String, indent: Option<usize>) {
    if let Some(n) = indent {
        out.push('\n');
        out.push_str(&"  ".repeat(n));
    }
}

/// Writes a value as Go's `encoding/json` does (`indent` = `Some(level)` for `MarshalIndent(v, "", "  ")`).
pub(crate) fn write_json(
    out: &mut String,
    v: &Value,
    escape_html: bool,
    indent: Option<usize>,
    depth: usize,
) -> Result<(), String> {
    if depth > crate::value::MAX_DEPTH {
        return Err("json: unsupported value: encountered a cycle".into());
    }
    let inner = indent.map(|n| n + 1);
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if v.is_integer() {
                out.push_str(&v.to_string());
            } else {
                let f = as_f64(v).unwrap_or(0.0);
                if !f.is_finite() {
                    return Err(format!(
                        "json: unsupported value: {}",
                        format_float_g(f, None)
                    ));
                }
                out.push_str(&go_json_float(f));
            }
        }
        ValueKind::String => write_json_string(out, v.as_str().unwrap_or_default(), escape_html),
        ValueKind::Bytes => {
            let b = v.as_bytes().unwrap_or_default();
            write_json_string(out, &STANDARD.encode(b), escape_html);
        }
        ValueKind::Seq => {
            let items = as_list(v).unwrap_or_default();
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(out, inner);
                write_json(out, x, escape_html, inner, depth + 1)?;
            }
            if !items.is_empty() {
                newline_indent(out, indent);
            }
            out.push(']');
        }
        ValueKind::Map => {
            let m = as_map(v).map(|m| m.snapshot()).unwrap_or_default();
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(out, inner);
                write_json_string(out, k, escape_html);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(out, x, escape_html, inner, depth + 1)?;
            }
            if !m.is_empty() {
                newline_indent(out, indent);
            }
            out.push('}');
        }
        _ => write_json_string(out, &v.to_string(), escape_html),
    }
    Ok(())
}

/// A simple TOML rendering of a map (Helm's `toToml`); nested maps become tables.
fn to_toml(v: &Value) -> String {
    fn scalar(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => format!("{s:?}"),
            serde_json::Value::Array(a) => {
                format!("[{}]", a.iter().map(scalar).collect::<Vec<_>>().join(", "))
            }
            other => other.to_string(),
        }
    }
    fn table(out: &mut String, prefix: &str, m: &serde_json::Map<String, serde_json::Value>) {
        for (k, x) in m {
            if !x.is_object() {
                out.push_str(&format!("{k} = {}\n", scalar(x)));
            }
        }
        for (k, x) in m {
            if let serde_json::Value::Object(sub) = x {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push_str(&format!("\n[{name}]\n"));
                table(out, &name, sub);
            }
        }
    }
    let mut out = String::new();
    if let Ok(serde_json::Value::Object(m)) = to_json(v) {
        table(&mut out, "", &m);
    }
    out
}
