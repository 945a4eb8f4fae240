//! Validation results and errors, keyword by keyword, and schema texts read exactly as `serde_json` reads them.

use super::*;
use crate::value::as_map;

fn values(yaml: &str) -> Value {
    crate::yaml::parse_value(yaml).unwrap()
}

/// The error lines of validating `yaml` against `schema` (empty when valid).
fn errors(schema: &str, yaml: &str) -> Vec<String> {
    match validate("c", schema, &values(yaml)) {
        Ok(()) => Vec::new(),
        Err(ChartError::Schema(m)) => {
            let head = "values don't meet the specifications of the schema(s) in the following chart(s):\nc:\n";
            m.strip_prefix(head)
                .unwrap_or(&m)
                .lines()
                .map(|l| l.trim_start_matches("- ").to_string())
                .collect()
        }
        Err(other) => vec![format!("other error: {other}")],
    }
}

#[test]
fn types_are_checked_as_json_sees_the_values() {
    let schema = r#"{"type":"object","properties":{
        "s":{"type":"string"},"i":{"type":"integer"},"num":{"type":"number"},"b":{"type":"boolean"},
        "z":{"type":"null"},"a":{"type":"array"},"o":{"type":"object"},"either":{"type":["string","null"]},
        "odd":{"type":[1,"boolean"]},"none":{"type":[]},"unknown":{"type":"thing"}}}"#;
    assert_eq!(
        errors(
            schema,
            "s: x\ni: 3\nnum: 1.5\nb: true\nz: null\na: [1]\no: {k: v}\neither: ~\nodd: false\nnone: 1\nunknown: 1\n"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            schema,
            "s: 1\ni: 1.5\nnum: x\nb: 'true'\nz: 0\na: {}\no: []\neither: 1\nodd: x\n"
        ),
        [
            "at '/a': got object, want array",
            "at '/b': got string, want boolean",
            "at '/either': got integer, want string or null",
            "at '/i': got number, want integer",
            "at '/num': got string, want number",
            "at '/o': got array, want object",
            "at '/odd': got string, want boolean",
            "at '/s': got integer, want string",
            "at '/z': got integer, want null",
        ]
    );
    assert_eq!(
        errors(r#"{"type":"array"}"#, "a: 1\n"),
        ["at '/': got object, want array"]
    );
}

#[test]
fn enums_bounds_patterns_required_and_additional_properties() {
    let schema = r#"{"required":["name","port"],"additionalProperties":false,"properties":{
        "mode":{"enum":["a","b"]},"port":{"minimum":1,"maximum":65535},
        "name":{"pattern":"^[a-z]+$"},"labels":{"additionalProperties":{"type":"string"}}}}"#;
    assert_eq!(
        errors(schema, "name: web\nport: 80\nmode: a\nlabels: {x: v}\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            schema,
            "name: Web1\nport: 0\nmode: c\nlabels: {x: 1}\nextra: 1\n"
        ),
        [
            "at '/': additional properties 'extra' not allowed",
            "at '/labels/x': got integer, want string",
            "at '/mode': value must be one of the enumerated values",
            "at '/name': 'Web1' does not match pattern '^[a-z]+$'",
            "at '/port': minimum: got 0, want 1",
        ]
    );
    assert_eq!(
        errors(schema, "port: 70000\n"),
        [
            "at '/': missing property 'name'",
            "at '/port': maximum: got 70000, want 65535",
        ]
    );
    assert_eq!(
        errors(r#"{"minimum":5}"#, "3"),
        ["at '': minimum: got 3, want 5"]
    );
}

#[test]
fn items_are_checked_by_index_and_deep_values_are_not() {
    let schema = r#"{"properties":{"list":{"items":{"type":"string"}}}}"#;
    assert_eq!(
        errors(schema, "list: [a, 1, b, true]\n"),
        [
            "at '/list/1': got integer, want string",
            "at '/list/3': got boolean, want string"
        ]
    );
    // Tuple-form `items` (an array) constrains nothing here.
    assert_eq!(
        errors(r#"{"items":[{"type":"string"}]}"#, "[1]"),
        Vec::<String>::new()
    );
    // Below 64 levels of schema nesting, values are not checked.
    let deep_schema = format!(
        "{}{{\"type\":\"string\"}}{}",
        r#"{"items":"#.repeat(70),
        "}".repeat(70)
    );
    let deep_values = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    assert_eq!(errors(&deep_schema, &deep_values), Vec::<String>::new());
}

#[test]
fn non_object_schemas_constrain_nothing_and_repeated_keys_keep_the_last() {
    assert_eq!(
        errors(
            r#"{"properties":{"a":true,"b":"x","c":[1]},"additionalProperties":true}"#,
            "a: 1\nb: 2\nc: 3\nd: 4\n"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            r#"{"type":"string","type":"object","properties":{"a":{"type":"string"}},
               "properties":{"a":{"type":"integer"},"a":{"type":"boolean"}},"minimum":1,"minimum":"x"}"#,
            "a: 1\n"
        ),
        ["at '/a': got integer, want boolean"]
    );
    // Keywords with a type they do not take are ignored, as `serde_json::Value`'s accessors give nothing.
    assert_eq!(
        errors(
            r#"{"properties":{"num":{"minimum":"1","pattern":1,"enum":"x","required":"num"}},"required":[1,"num"]}"#,
            "num: 0\n"
        ),
        Vec::<String>::new()
    );
    // Escaped property names are read like any other.
    assert_eq!(
        errors(
            r#"{"properties":{"a\u0062":{"type":"string"}},"additionalProperties":false}"#,
            "ab: 1\n"
        ),
        ["at '/ab': got integer, want string"]
    );
}

#[test]
fn schema_text_errors_are_serde_json_errors() {
    let deep = format!(
        "{{\"description\":{}1{}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    for text in [
        "",
        "{",
        "{\"type\":}",
        "{\"a\":1,}",
        "{\"default\":1e400}",
        "{\"properties\":{\"a\":{\"default\":[1,2,]}}}",
        "{} x",
        "{\"description\":\"\\q\"}",
        &deep,
    ] {
        let want = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let Err(ChartError::Schema(got)) = validate("c", text, &values("a: 1\n")) else {
            panic!("{text:?} was accepted");
        };
        assert_eq!(
            got,
            format!("c: values.schema.json is not valid JSON: {want}"),
            "{text:?}"
        );
    }
}

#[test]
fn values_json_cannot_carry_fail_as_encoding_them_does() {
    let v = crate::value::map_value(
        [("x".to_string(), Value::from(f64::NAN))]
            .into_iter()
            .collect(),
    );
    let want = crate::value::to_json(&v).unwrap_err();
    let Err(ChartError::Schema(got)) = validate("c", "{}", &v) else {
        panic!("NaN was accepted");
    };
    assert_eq!(got, want.to_string());
    assert!(matches!(
        want,
        crate::value::JsonError::UnsupportedFloat { .. }
    ));
    // A map inside itself is a cycle for JSON, not a hang.
    let inner = crate::value::map_value(Default::default());
    let m = as_map(&inner).unwrap();
    m.insert("self", inner.clone());
    let want = crate::value::to_json(&inner).unwrap_err();
    let Err(ChartError::Schema(got)) = validate("c", "{}", &inner) else {
        panic!("a cycle was accepted");
    };
    assert_eq!(got, want.to_string());
    assert_eq!(want, crate::value::JsonError::Cycle);
    m.remove("self");
}

#[test]
fn bytes_are_checked_as_their_base64_text() {
    let v = crate::value::map_value(
        [("b".to_string(), Value::from_bytes(b"hi".to_vec()))]
            .into_iter()
            .collect(),
    );
    let result = validate(
        "c",
        r#"{"properties":{"b":{"type":"string","pattern":"^x$"}}}"#,
        &v,
    );
    let Err(ChartError::Schema(m)) = result else {
        panic!("not checked")
    };
    assert!(
        m.ends_with("- at '/b': 'aGk=' does not match pattern '^x$'"),
        "{m}"
    );
}

#[test]
fn nested_schemas_keep_their_own_keywords() {
    // Properties read inside other properties, items and additionalProperties keep each object's own entries,
    // whatever is read between them; strings nested inside a `type` array are not types.
    let schema = r#"{"properties":{
        "a":{"properties":{"x":{"type":"string"},"ys":{"items":{"properties":{"z":{"type":"integer"}}}}},
             "required":["x"]},
        "b":{"type":[["object"],"string"]},
        "c":{"additionalProperties":{"properties":{"w":{"type":"boolean"}},"additionalProperties":false}},
        "d":{"type":"number"}}}"#;
    assert_eq!(
        errors(
            schema,
            "a: {x: s, ys: [{z: 1}]}\nb: t\nc: {k: {w: true}}\nd: 1.5\n"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            schema,
            "a: {ys: [{z: s}], q: 1}\nb: {}\nc: {k: {w: 1, v: 2}}\nd: x\n"
        ),
        [
            "at '/a': missing property 'x'",
            "at '/a/ys/0/z': got string, want integer",
            "at '/b': got object, want string",
            "at '/c/k': additional properties 'v' not allowed",
            "at '/c/k/w': got integer, want boolean",
            "at '/d': got string, want number",
        ]
    );
}
