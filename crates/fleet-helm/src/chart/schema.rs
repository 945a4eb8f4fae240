//! `values.schema.json` validation: the JSON Schema keywords charts use (`type`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `enum`, `minimum`/`maximum`, `pattern`), with Helm's error wording.

use super::ChartError;
use crate::value::Value;

fn type_matches(t: &str, v: &serde_json::Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

fn check(
    schema: &serde_json::Value,
    v: &serde_json::Value,
    at: &str,
    errors: &mut Vec<String>,
    depth: usize,
) {
    if depth > 64 {
        return;
    }
    let Some(s) = schema.as_object() else { return };
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            serde_json::Value::String(x) => vec![x.as_str()],
            serde_json::Value::Array(xs) => xs.iter().filter_map(|x| x.as_str()).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, v)) {
            let at = if at.is_empty() { "/" } else { at };
            errors.push(format!(
                "at '{at}': got {}, want {}",
                kind(v),
                types.join(" or ")
            ));
            return;
        }
    }
    if let Some(serde_json::Value::Array(options)) = s.get("enum")
        && !options.contains(v)
    {
        errors.push(format!(
            "at '{}': value must be one of the enumerated values",
            if at.is_empty() { "/" } else { at }
        ));
    }
    if let (Some(min), Some(x)) = (s.get("minimum").and_then(|m| m.as_f64()), v.as_f64())
        && x < min
    {
        errors.push(format!("at '{at}': minimum: got {x}, want {min}"));
    }
    if let (Some(max), Some(x)) = (s.get("maximum").and_then(|m| m.as_f64()), v.as_f64())
        && x > max
    {
        errors.push(format!("at '{at}': maximum: got {x}, want {max}"));
    }
    if let (Some(p), Some(x)) = (s.get("pattern").and_then(|p| p.as_str()), v.as_str())
        && regex::Regex::new(p).is_ok_and(|re| !re.is_match(x))
    {
        errors.push(format!("at '{at}': '{x}' does not match pattern '{p}'"));
    }
    if let serde_json::Value::Object(obj) = v {
        if let Some(serde_json::Value::Array(req)) = s.get("required") {
            let missing: Vec<&str> = req
                .iter()
                .filter_map(|r| r.as_str())
                .filter(|r| !obj.contains_key(*r))
                .collect();
            if !missing.is_empty() {
                let list: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
                errors.push(format!(
                    "at '{}': missing property {}",
                    if at.is_empty() { "/" } else { at },
                    list.join(", ")
                ));
            }
        }
        let props = s.get("properties").and_then(|p| p.as_object());
        for (k, x) in obj {
            let child_at = format!("{at}/{k}");
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check(ps, x, &child_at, errors, depth + 1),
                None => match s.get("additionalProperties") {
                    Some(serde_json::Value::Bool(false)) => errors.push(format!(
                        "at '{}': additional properties '{k}' not allowed",
                        if at.is_empty() { "/" } else { at }
                    )),
                    Some(ap @ serde_json::Value::Object(_)) => {
                        check(ap, x, &child_at, errors, depth + 1)
                    }
                    _ => {}
                },
            }
        }
    }
    if let (serde_json::Value::Array(items), Some(item_schema)) = (v, s.get("items")) {
        for (i, x) in items.iter().enumerate() {
            check(item_schema, x, &format!("{at}/{i}"), errors, depth + 1);
        }
    }
}

/// Validates a chart's values against its schema.
pub fn validate(chart: &str, schema: &str, values: &Value) -> Result<(), ChartError> {
    let schema: serde_json::Value = serde_json::from_str(schema).map_err(|e| {
        ChartError::Schema(format!(
            "{chart}: values.schema.json is not valid JSON: {e}"
        ))
    })?;
    let json = crate::value::to_json(values).map_err(ChartError::Schema)?;
    let mut errors = Vec::new();
    check(&schema, &json, "", &mut errors, 0);
    if errors.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    Err(ChartError::Schema(format!(
        "values don't meet the specifications of the schema(s) in the following chart(s):\n{chart}:\n{}",
        lines.join("\n")
    )))
}
