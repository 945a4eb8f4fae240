//! Sprig's defaults (`default`, `empty`, `coalesce`, `ternary`, `all`, `any`), lists (`list`, `append`, `first`,
//! `uniq`, `until`, …), dicts (`dict`, `get`, `set`, `merge` with mergo's rules, `pick`, `dig`, …), type tests
//! (`typeOf`, `kindIs`, …) and `deepCopy`.

use minijinja::value::ValueKind;

use super::{FuncError, FuncResult, Table, arity, at_least, err, is_empty, strval, to_i64};
use crate::call::Call;
use crate::value::{
    GoMap, Value, as_list, as_map, deep_copy, is_nil, kind_name, list_value, map_value, nil,
    type_name,
};

pub(super) fn register(t: &mut Table) {
    t.insert("default", |_, a| {
        at_least("default", a, 1)?;
        if a.len() < 2 || is_empty(&a[1]) {
            Ok(a[0].clone())
        } else {
            Ok(a[1].clone())
        }
    });
    t.insert("empty", |_, a| {
        arity("empty", a, 1)?;
        Ok(Value::from(is_empty(&a[0])))
    });
    t.insert("coalesce", |_, a| {
        Ok(a.iter().find(|v| !is_empty(v)).cloned().unwrap_or_default())
    });
    t.insert("all", |_, a| {
        Ok(Value::from(a.iter().all(|v| !is_empty(v))))
    });
    t.insert("any", |_, a| {
        Ok(Value::from(a.iter().any(|v| !is_empty(v))))
    });
    t.insert("ternary", |_, a| {
        arity("ternary", a, 3)?;
        Ok(if a[2].is_true() {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
    t.insert("deepCopy", |_, a| {
        arity("deepCopy", a, 1)?;
        Ok(deep_copy(&a[0]))
    });
    t.insert("mustDeepCopy", |_, a| {
        arity("mustDeepCopy", a, 1)?;
        if is_nil(&a[0]) {
            return err("not a nil value");
        }
        Ok(deep_copy(&a[0]))
    });
    t.insert("typeOf", |_, a| {
        arity("typeOf", a, 1)?;
        Ok(Value::from(type_name(&a[0])))
    });
    t.insert("kindOf", |_, a| {
        arity("kindOf", a, 1)?;
        Ok(Value::from(kind_name(&a[0])))
    });
    t.insert("typeIs", |_, a| {
        arity("typeIs", a, 2)?;
        Ok(Value::from(strval(&a[0]) == type_name(&a[1])))
    });
    t.insert("typeIsLike", |_, a| {
        arity("typeIsLike", a, 2)?;
        let want = strval(&a[0]);
        let t = type_name(&a[1]);
        Ok(Value::from(want == t || want == format!("*{t}")))
    });
    t.insert("kindIs", |_, a| {
        arity("kindIs", a, 2)?;
        Ok(Value::from(strval(&a[0]) == kind_name(&a[1])))
    });
    t.insert("deepEqual", |_, a| {
        arity("deepEqual", a, 2)?;
        Ok(Value::from(
            crate::value::to_json(&a[0]).ok() == crate::value::to_json(&a[1]).ok(),
        ))
    });

    t.insert("list", |_, a| Ok(list_value(a.to_vec())));
    t.insert("tuple", |_, a| Ok(list_value(a.to_vec())));
    for name in ["append", "push", "mustAppend", "mustPush"] {
        t.insert(name, |_, a| {
            arity("append", a, 2)?;
            let mut l = list_arg(&a[0])?;
            l.push(a[1].clone());
            Ok(list_value(l))
        });
    }
    for name in ["prepend", "mustPrepend"] {
        t.insert(name, |_, a| {
            arity("prepend", a, 2)?;
            let mut l = list_arg(&a[0])?;
            l.insert(0, a[1].clone());
            Ok(list_value(l))
        });
    }
    for name in ["first", "mustFirst"] {
        t.insert(name, |_, a| {
            arity("first", a, 1)?;
            Ok(list_arg(&a[0])?.first().cloned().unwrap_or_default())
        });
    }
    for name in ["last", "mustLast"] {
        t.insert(name, |_, a| {
            arity("last", a, 1)?;
            Ok(list_arg(&a[0])?.last().cloned().unwrap_or_default())
        });
    }
    for name in ["rest", "mustRest"] {
        t.insert(name, |_, a| {
            arity("rest", a, 1)?;
            let l = list_arg(&a[0])?;
            Ok(if l.is_empty() {
                nil()
            } else {
                list_value(l[1..].to_vec())
            })
        });
    }
    for name in ["initial", "mustInitial"] {
        t.insert(name, |_, a| {
            arity("initial", a, 1)?;
            let l = list_arg(&a[0])?;
            Ok(if l.is_empty() {
                nil()
            } else {
                list_value(l[..l.len() - 1].to_vec())
            })
        });
    }
    for name in ["reverse", "mustReverse"] {
        t.insert(name, |_, a| {
            arity("reverse", a, 1)?;
            let mut l = list_arg(&a[0])?;
            l.reverse();
            Ok(list_value(l))
        });
    }
    for name in ["uniq", "mustUniq"] {
        t.insert(name, |_, a| {
            arity("uniq", a, 1)?;
            let mut out: Vec<Value> = Vec::new();
            for v in list_arg(&a[0])? {
                if !out.iter().any(|o| deep_eq(o, &v)) {
                    out.push(v);
                }
            }
            Ok(list_value(out))
        });
    }
    for name in ["without", "mustWithout"] {
        t.insert(name, |_, a| {
            at_least("without", a, 1)?;
            let l = list_arg(&a[0])?;
            Ok(list_value(
                l.into_iter()
                    .filter(|v| !a[1..].iter().any(|o| deep_eq(o, v)))
                    .collect(),
            ))
        });
    }
    for name in ["has", "mustHas"] {
        t.insert(name, |_, a| {
            arity("has", a, 2)?;
            if is_nil(&a[1]) {
                return Ok(Value::from(false));
            }
            Ok(Value::from(
                list_arg(&a[1])?.iter().any(|v| deep_eq(v, &a[0])),
            ))
        });
    }
    for name in ["compact", "mustCompact"] {
        t.insert(name, |_, a| {
            arity("compact", a, 1)?;
            Ok(list_value(
                list_arg(&a[0])?
                    .into_iter()
                    .filter(|v| !is_empty(v))
                    .collect(),
            ))
        });
    }
    for name in ["chunk", "mustChunk"] {
        t.insert(name, |_, a| {
            arity("chunk", a, 2)?;
            let size = to_i64(&a[0]).max(1) as usize;
            let l = list_arg(&a[1])?;
            Ok(list_value(
                l.chunks(size).map(|c| list_value(c.to_vec())).collect(),
            ))
        });
    }
    t.insert("concat", |_, a| {
        let mut out = Vec::new();
        for l in a {
            out.extend(list_arg(l)?);
        }
        Ok(list_value(out))
    });
    t.insert("until", |_, a| {
        arity("until", a, 1)?;
        let n = to_i64(&a[0]);
        let step = if n < 0 { -1 } else { 1 };
        until_step(0, n, step)
    });
    t.insert("untilStep", |_, a| {
        arity("untilStep", a, 3)?;
        until_step(to_i64(&a[0]), to_i64(&a[1]), to_i64(&a[2]))
    });
    t.insert("seq", seq);

    t.insert("dict", |_, a| {
        let m = GoMap::default();
        for pair in a.chunks(2) {
            let key = strval(&pair[0]);
            m.insert(key, pair.get(1).cloned().unwrap_or_else(|| Value::from("")));
        }
        Ok(Value::from_object(m))
    });
    t.insert("get", |_, a| {
        arity("get", a, 2)?;
        let m = map_arg(&a[0])?;
        Ok(m.get(&strval(&a[1])).unwrap_or_else(|| Value::from("")))
    });
    t.insert("set", |_, a| {
        arity("set", a, 3)?;
        let m = map_arg(&a[0])?;
        m.insert(strval(&a[1]), a[2].clone());
        Ok(a[0].clone())
    });
    t.insert("unset", |_, a| {
        arity("unset", a, 2)?;
        let m = map_arg(&a[0])?;
        m.remove(&strval(&a[1]));
        Ok(a[0].clone())
    });
    t.insert("hasKey", |_, a| {
        arity("hasKey", a, 2)?;
        let m = map_arg(&a[0])?;
        Ok(Value::from(m.contains_key(&strval(&a[1]))))
    });
    t.insert("pluck", |_, a| {
        at_least("pluck", a, 1)?;
        let key = strval(&a[0]);
        let mut out = Vec::new();
        for d in &a[1..] {
            if let Some(v) = map_arg(d)?.get(&key) {
                out.push(v);
            }
        }
        Ok(list_value(out))
    });
    t.insert("dig", |_, a| {
        at_least("dig", a, 3)?;
        let dict = &a[a.len() - 1];
        let default = &a[a.len() - 2];
        let mut cur = dict.clone();
        for k in &a[..a.len() - 2] {
            match as_map(&cur).and_then(|m| m.get(&strval(k))) {
                Some(v) => cur = v,
                None => return Ok(default.clone()),
            }
        }
        Ok(cur)
    });
    t.insert("keys", |_, a| {
        let mut out = Vec::new();
        for d in a {
            out.extend(map_arg(d)?.snapshot().into_keys().map(Value::from));
        }
        Ok(list_value(out))
    });
    t.insert("values", |_, a| {
        arity("values", a, 1)?;
        Ok(list_value(
            map_arg(&a[0])?.snapshot().into_values().collect(),
        ))
    });
    t.insert("pick", |_, a| {
        at_least("pick", a, 1)?;
        let m = map_arg(&a[0])?;
        let mut out = std::collections::BTreeMap::new();
        for k in &a[1..] {
            let k = strval(k);
            if let Some(v) = m.get(&k) {
                out.insert(k, v);
            }
        }
        Ok(map_value(out))
    });
    t.insert("omit", |_, a| {
        at_least("omit", a, 1)?;
        let m = map_arg(&a[0])?;
        let drop: Vec<String> = a[1..].iter().map(strval).collect();
        Ok(map_value(
            m.snapshot()
                .into_iter()
                .filter(|(k, _)| !drop.contains(k))
                .collect(),
        ))
    });
    for name in ["merge", "mustMerge"] {
        t.insert(name, |_, a| merge_fn(a, false));
    }
    for name in ["mergeOverwrite", "mustMergeOverwrite"] {
        t.insert(name, |_, a| merge_fn(a, true));
    }
}

fn list_arg(v: &Value) -> Result<Vec<Value>, FuncError> {
    match v.kind() {
        ValueKind::Seq => Ok(as_list(v).unwrap_or_default()),
        ValueKind::None | ValueKind::Undefined => Ok(Vec::new()),
        _ => err(format!("Cannot find first on type {}", type_name(v))),
    }
}

fn map_arg(v: &Value) -> Result<std::sync::Arc<GoMap>, FuncError> {
    // A nil map reads as empty (writes to it are lost, as with Go's nil map inside Sprig's error swallowing).
    if is_nil(v) {
        return Ok(std::sync::Arc::new(GoMap::default()));
    }
    as_map(v).ok_or_else(|| {
        FuncError::Msg(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            type_name(v)
        ))
    })
}

fn deep_eq(a: &Value, b: &Value) -> bool {
    crate::value::to_json(a).ok() == crate::value::to_json(b).ok()
}

/// Most elements `until`, `untilStep` and `seq` generate (they cost no fuel per element).
const MAX_GENERATED: usize = 1_000_000;

fn until_step(start: i64, stop: i64, step: i64) -> FuncResult {
    let mut out = Vec::new();
    if step == 0 {
        return Ok(list_value(out));
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if out.len() >= MAX_GENERATED {
            return err("untilStep: too many elements");
        }
        out.push(Value::from(i));
        i += step;
    }
    Ok(list_value(out))
}

fn seq(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    let n: Vec<i64> = a.iter().map(to_i64).collect();
    let (start, step, end) = match n.as_slice() {
        [] => return Ok(Value::from("")),
        [end] => (1, if *end < 1 { -1 } else { 1 }, *end),
        [start, end] => (*start, if end < start { -1 } else { 1 }, *end),
        [start, step, end, ..] => (*start, *step, *end),
    };
    let mut out = Vec::new();
    if step == 0 || (step > 0 && start > end) || (step < 0 && start < end) {
        return Ok(Value::from(""));
    }
    let mut i = start;
    while (step > 0 && i <= end) || (step < 0 && i >= end) {
        if out.len() >= MAX_GENERATED {
            return err("seq: too many elements");
        }
        out.push(i.to_string());
        i += step;
    }
    Ok(Value::from(out.join(" ")))
}

/// mergo's `Merge`/`Merge(WithOverride)` over `map[string]interface{}` as Sprig's `merge`/`mergeOverwrite` use it.
pub(crate) fn merge_into(dst: &GoMap, src: &GoMap, overwrite: bool, depth: usize) {
    if depth > crate::value::MAX_DEPTH {
        return;
    }
    for (k, sv) in src.snapshot() {
        let dv = dst.get(&k);
        if is_nil(&sv) {
            if overwrite {
                dst.insert(k, sv);
            }
            continue;
        }
        match (dv.as_ref().and_then(as_map_ref), as_map_ref(&sv)) {
            (Some(dm), Some(sm)) if !dm.is_empty() => merge_into(&dm, &sm, overwrite, depth + 1),
            _ => {
                if overwrite || dv.as_ref().is_none_or(is_empty) {
                    dst.insert(k, sv);
                }
            }
        }
    }
}

fn as_map_ref(v: &Value) -> Option<std::sync::Arc<GoMap>> {
    if v.kind() == ValueKind::Map {
        as_map(v)
    } else {
        None
    }
}

fn merge_fn(a: &[Value], overwrite: bool) -> FuncResult {
    at_least("merge", a, 1)?;
    // mergo allocates a new map for a nil destination; Sprig returns it.
    let dst_value = if is_nil(&a[0]) {
        map_value(Default::default())
    } else {
        a[0].clone()
    };
    let dst = map_arg(&dst_value)?;
    for s in &a[1..] {
        if is_nil(s) {
            continue;
        }
        let src = map_arg(s)?;
        merge_into(&dst, &src, overwrite, 0);
    }
    Ok(dst_value)
}
