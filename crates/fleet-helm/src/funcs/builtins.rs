//! Go `text/template`'s builtin functions (`not`, `eq`…`ge`, `len`, `index`, `slice`, `print*`, `html`, `js`,
//! `urlquery`, `call`) and Helm's control functions (`required`, `fail`, `lookup`).

use std::cmp::Ordering;

use minijinja::value::ValueKind;

use super::{FuncError, FuncResult, Table, arity, at_least, err, strval};
use crate::call::Call;
use crate::gofmt::{sprint, sprintf, sprintln};
use crate::value::{
    Value, as_f64, as_list, as_map, is_nil, list_value, map_value, truthy, type_name,
};

pub(super) fn register(t: &mut Table) {
    t.insert("not", not);
    t.insert("eq", eq);
    t.insert("ne", ne);
    t.insert("lt", lt);
    t.insert("le", le);
    t.insert("gt", gt);
    t.insert("ge", ge);
    t.insert("len", len);
    t.insert("index", index);
    t.insert("slice", slice);
    t.insert("mustSlice", slice);
    t.insert("print", |_, a| Ok(Value::from(sprint(a))));
    t.insert("println", |_, a| Ok(Value::from(sprintln(a))));
    t.insert("printf", printf);
    t.insert("html", |_, a| Ok(Value::from(html_escape(&sprint_args(a)))));
    t.insert("js", |_, a| Ok(Value::from(js_escape(&sprint_args(a)))));
    t.insert("urlquery", |_, a| {
        Ok(Value::from(query_escape(&sprint_args(a))))
    });
    t.insert("call", |_, _| err("call of a non-function value"));
    t.insert("required", required);
    t.insert("fail", |_, a| {
        arity("fail", a, 1)?;
        Err(FuncError::Fail(strval(&a[0])))
    });
    t.insert("lookup", |_, a| {
        arity("lookup", a, 4)?;
        Ok(map_value(Default::default()))
    });
}

/// Go's `evalArgs` for `html`/`js`/`urlquery`: a single string is used as is, otherwise `fmt.Sprint`.
fn sprint_args(a: &[Value]) -> String {
    if let [only] = a
        && let Some(s) = only.as_str()
    {
        return s.to_string();
    }
    sprint(a)
}

fn not(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("not", a, 1)?;
    Ok(Value::from(!truthy(&a[0])))
}

#[derive(PartialEq, Clone, Copy)]
enum BasicKind {
    Invalid,
    Bool,
    Int,
    Float,
    String,
    Other,
}

fn basic_kind(v: &Value) -> BasicKind {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => BasicKind::Invalid,
        ValueKind::Bool => BasicKind::Bool,
        ValueKind::Number if v.is_integer() => BasicKind::Int,
        ValueKind::Number => BasicKind::Float,
        ValueKind::String => BasicKind::String,
        _ => BasicKind::Other,
    }
}

/// Go's `eq arg1 arg2…`: true if arg1 equals any of the others.
fn eq_values(a: &Value, b: &Value) -> Result<bool, FuncError> {
    let (k1, k2) = (basic_kind(a), basic_kind(b));
    if k1 != k2 {
        if k1 != BasicKind::Invalid && k2 != BasicKind::Invalid {
            return err("incompatible types for comparison");
        }
        return Ok(false);
    }
    Ok(match k1 {
        BasicKind::Invalid => true,
        BasicKind::Bool => a.is_true() == b.is_true(),
        BasicKind::Int => a.as_i64() == b.as_i64(),
        BasicKind::Float => as_f64(a) == as_f64(b),
        BasicKind::String => a.as_str() == b.as_str(),
        BasicKind::Other => {
            if matches!(a.kind(), ValueKind::Seq | ValueKind::Map) {
                return err(format!(
                    "non-comparable type {}: {}",
                    crate::gofmt::to_go_string(a),
                    type_name(a)
                ));
            }
            a == b
        }
    })
}

fn eq(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    if a.len() < 2 {
        return err("missing argument for comparison");
    }
    for b in &a[1..] {
        if eq_values(&a[0], b)? {
            return Ok(Value::from(true));
        }
    }
    Ok(Value::from(false))
}

fn ne(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("ne", a, 2)?;
    Ok(Value::from(!eq_values(&a[0], &a[1])?))
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, FuncError> {
    let (k1, k2) = (basic_kind(a), basic_kind(b));
    if k1 != k2 {
        return err("incompatible types for comparison");
    }
    match k1 {
        BasicKind::Int => Ok(a.as_i64().cmp(&b.as_i64())),
        BasicKind::Float => Ok(as_f64(a).partial_cmp(&as_f64(b)).unwrap_or(Ordering::Equal)),
        BasicKind::String => Ok(a.as_str().cmp(&b.as_str())),
        _ => err("invalid type for comparison"),
    }
}

fn cmp_fn(name: &str, a: &[Value], pred: fn(Ordering) -> bool) -> FuncResult {
    arity(name, a, 2)?;
    Ok(Value::from(pred(compare(&a[0], &a[1])?)))
}

fn lt(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    cmp_fn("lt", a, |o| o == Ordering::Less)
}
fn le(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    cmp_fn("le", a, |o| o != Ordering::Greater)
}
fn gt(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    cmp_fn("gt", a, |o| o == Ordering::Greater)
}
fn ge(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    cmp_fn("ge", a, |o| o != Ordering::Less)
}

fn len(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("len", a, 1)?;
    let v = &a[0];
    if let Some(s) = v.downcast_object_ref::<crate::value::GoByteString>() {
        return Ok(Value::from(s.0.len() as i64));
    }
    match v.kind() {
        ValueKind::String => Ok(Value::from(v.as_str().unwrap_or_default().len() as i64)),
        ValueKind::Bytes => Ok(Value::from(v.as_bytes().unwrap_or_default().len() as i64)),
        ValueKind::Seq | ValueKind::Map => Ok(Value::from(v.len().unwrap_or(0) as i64)),
        ValueKind::None | ValueKind::Undefined => err("len of nil pointer"),
        _ => err(format!("len of type {}", type_name(v))),
    }
}

fn index_of(v: &Value, len: usize, name: &str) -> Result<usize, FuncError> {
    if !matches!(v.kind(), ValueKind::Number) || !v.is_integer() {
        return err(format!(
            "cannot index slice/array with type {}",
            type_name(v)
        ));
    }
    let i = v.as_i64().unwrap_or(-1);
    if i < 0 || i as usize >= len {
        return err(format!("{name} out of range: {i}"));
    }
    Ok(i as usize)
}

fn index(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    at_least("index", a, 1)?;
    let mut item = a[0].clone();
    for key in &a[1..] {
        item = match item.kind() {
            ValueKind::Map => {
                let Some(k) = key.as_str() else {
                    return err(format!(
                        "value has type {}; should be string",
                        type_name(key)
                    ));
                };
                as_map(&item).and_then(|m| m.get(k)).unwrap_or_default()
            }
            ValueKind::Seq => {
                let items = as_list(&item).unwrap_or_default();
                let i = index_of(key, items.len(), "index")?;
                items[i].clone()
            }
            ValueKind::String => {
                let s = item.as_str().unwrap_or_default().as_bytes();
                let i = index_of(key, s.len(), "index")?;
                Value::from(s[i] as i64)
            }
            ValueKind::None | ValueKind::Undefined => return err("index of untyped nil"),
            _ => return err(format!("can't index item of type {}", type_name(&item))),
        };
    }
    Ok(item)
}

fn slice(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    at_least("slice", a, 1)?;
    let item = &a[0];
    // Helm registers Sprig's `slice`, which replaces Go's builtin and only takes lists.
    let len = match item.kind() {
        ValueKind::Seq => item.len().unwrap_or(0),
        _ => {
            return err(format!(
                "list should be type of slice or array but {}",
                crate::value::kind_name(item).replace("invalid", "<nil>")
            ));
        }
    };
    if a.len() > 4 {
        return err(format!("too many slice indexes: {}", a.len() - 1));
    }
    let mut idx = [0usize, len, len];
    for (i, v) in a[1..].iter().enumerate() {
        idx[i] = index_of(v, len + 1, "slice index")?;
    }
    if idx[0] > idx[1] {
        return err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    match item.kind() {
        ValueKind::String => {
            let s = item.as_str().unwrap_or_default();
            Ok(Value::from(
                String::from_utf8_lossy(&s.as_bytes()[idx[0]..idx[1]]).into_owned(),
            ))
        }
        _ => Ok(list_value(
            as_list(item).unwrap_or_default()[idx[0]..idx[1]].to_vec(),
        )),
    }
}

fn printf(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    at_least("printf", a, 1)?;
    let format = strval(&a[0]);
    Ok(Value::from(sprintf(&format, &a[1..])))
}

fn required(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("required", a, 2)?;
    let v = &a[1];
    let missing =
        is_nil(v) || (v.kind() == ValueKind::String && v.as_str().unwrap_or_default().is_empty());
    if missing {
        return Err(FuncError::Fail(strval(&a[0])));
    }
    Ok(v.clone())
}

/// Go's `template.HTMLEscapeString`.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            '\0' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
