//! The examples of RFC 6902 Appendix A, run through `fleet_yaml::patch::json_patch::apply`.

use fleet_yaml::patch::PatchError;
use fleet_yaml::patch::json_patch::{OperationError, apply};
use serde_json::{Value, json};

fn patched(doc: Value, patch: Value) -> Result<Value, PatchError> {
    let mut doc = doc;
    apply(&mut doc, &patch).map(|()| doc)
}

#[test]
fn a1_adding_an_object_member() {
    let out = patched(
        json!({"foo": "bar"}),
        json!([{"op": "add", "path": "/baz", "value": "qux"}]),
    );
    assert_eq!(out.unwrap(), json!({"baz": "qux", "foo": "bar"}));
}

#[test]
fn a2_adding_an_array_element() {
    let out = patched(
        json!({"foo": ["bar", "baz"]}),
        json!([{"op": "add", "path": "/foo/1", "value": "qux"}]),
    );
    assert_eq!(out.unwrap(), json!({"foo": ["bar", "qux", "baz"]}));
}

#[test]
fn a3_removing_an_object_member() {
    let out = patched(
        json!({"baz": "qux", "foo": "bar"}),
        json!([{"op": "remove", "path": "/baz"}]),
    );
    assert_eq!(out.unwrap(), json!({"foo": "bar"}));
}

#[test]
fn a4_removing_an_array_element() {
    let out = patched(
        json!({"foo": ["bar", "qux", "baz"]}),
        json!([{"op": "remove", "path": "/foo/1"}]),
    );
    assert_eq!(out.unwrap(), json!({"foo": ["bar", "baz"]}));
}

#[test]
fn a5_replacing_a_value() {
    let out = patched(
        json!({"baz": "qux", "foo": "bar"}),
        json!([{"op": "replace", "path": "/baz", "value": "boo"}]),
    );
    assert_eq!(out.unwrap(), json!({"baz": "boo", "foo": "bar"}));
}

#[test]
fn a6_moving_a_value() {
    let out = patched(
        json!({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}),
        json!([{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]),
    );
    assert_eq!(
        out.unwrap(),
        json!({"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}})
    );
}

#[test]
fn a7_moving_an_array_element() {
    let out = patched(
        json!({"foo": ["all", "grass", "cows", "eat"]}),
        json!([{"op": "move", "from": "/foo/1", "path": "/foo/3"}]),
    );
    assert_eq!(
        out.unwrap(),
        json!({"foo": ["all", "cows", "eat", "grass"]})
    );
}

#[test]
fn a8_testing_a_value_success() {
    let doc = json!({"baz": "qux", "foo": ["a", 2, "c"]});
    let out = patched(
        doc.clone(),
        json!([
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2}
        ]),
    );
    assert_eq!(out.unwrap(), doc);
}

#[test]
fn a9_testing_a_value_error() {
    let err = patched(
        json!({"baz": "qux"}),
        json!([{"op": "test", "path": "/baz", "value": "bar"}]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "JSON patch operation 0 (test \"/baz\"): test failed: the value differs"
    );
}

#[test]
fn a10_adding_a_nested_member_object() {
    let out = patched(
        json!({"foo": "bar"}),
        json!([{"op": "add", "path": "/child", "value": {"grandchild": {}}}]),
    );
    assert_eq!(
        out.unwrap(),
        json!({"foo": "bar", "child": {"grandchild": {}}})
    );
}

#[test]
fn a11_ignoring_unrecognized_elements() {
    let out = patched(
        json!({"foo": "bar"}),
        json!([{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]),
    );
    assert_eq!(out.unwrap(), json!({"foo": "bar", "baz": "qux"}));
}

#[test]
fn a12_adding_to_a_nonexistent_target() {
    let err = patched(
        json!({"foo": "bar"}),
        json!([{"op": "add", "path": "/baz/bat", "value": "qux"}]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "JSON patch operation 0 (add \"/baz/bat\"): the parent of the target location does not exist"
    );
}

// A.13 (an operation object with two "op" members) cannot be expressed as a serde_json::Value: the JSON parser
// keeps the last duplicate member, so the document never reaches `apply`.

#[test]
fn a14_tilde_escape_ordering() {
    let doc = json!({"/": 9, "~1": 10});
    let out = patched(
        doc.clone(),
        json!([{"op": "test", "path": "/~01", "value": 10}]),
    );
    assert_eq!(out.unwrap(), doc);
}

#[test]
fn a15_comparing_strings_and_numbers() {
    let err = patched(
        json!({"/": 9, "~1": 10}),
        json!([{"op": "test", "path": "/~01", "value": "10"}]),
    )
    .unwrap_err();
    assert!(matches!(
        err,
        PatchError::JsonPatchOperation { index: 0, ref op, reason: OperationError::TestDiffers, .. } if op == "test"
    ));
    assert_eq!(
        err.to_string(),
        r#"JSON patch operation 0 (test "/~01"): test failed: the value differs"#
    );
}

#[test]
fn a16_adding_an_array_value() {
    let out = patched(
        json!({"foo": ["bar"]}),
        json!([{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]),
    );
    assert_eq!(out.unwrap(), json!({"foo": ["bar", ["abc", "def"]]}));
}

#[test]
fn finalizer_removal_guarded_by_test() {
    // The shape kube-runtime's finalizer helper sends: test the list, then remove one entry.
    let doc = json!({"metadata": {"finalizers": ["a.example/f", "b.example/f"]}});
    let patch = json!([
        {"op": "test", "path": "/metadata/finalizers", "value": ["a.example/f", "b.example/f"]},
        {"op": "remove", "path": "/metadata/finalizers/0"}
    ]);
    assert_eq!(
        patched(doc.clone(), patch.clone()).unwrap(),
        json!({"metadata": {"finalizers": ["b.example/f"]}})
    );
    let changed = json!({"metadata": {"finalizers": ["b.example/f"]}});
    assert!(patched(changed, patch).is_err());
}
