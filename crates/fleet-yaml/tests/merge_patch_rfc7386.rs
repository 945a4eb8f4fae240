//! The examples of RFC 7386 (section 3 and Appendix A), run through `fleet_yaml::patch::merge_patch`.

use fleet_yaml::patch::merge_patch::{apply, diff};
use serde_json::{Value, json};

fn patched(doc: Value, patch: Value) -> Value {
    let mut doc = doc;
    apply(&mut doc, &patch);
    doc
}

#[test]
fn appendix_a_test_cases() {
    let cases = [
        (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
        (
            json!({"a": "b"}),
            json!({"b": "c"}),
            json!({"a": "b", "b": "c"}),
        ),
        (json!({"a": "b"}), json!({"a": null}), json!({})),
        (
            json!({"a": "b", "b": "c"}),
            json!({"a": null}),
            json!({"b": "c"}),
        ),
        (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
        (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
        (
            json!({"a": {"b": "c"}}),
            json!({"a": {"b": "d", "c": null}}),
            json!({"a": {"b": "d"}}),
        ),
        (
            json!({"a": [{"b": "c"}]}),
            json!({"a": [1]}),
            json!({"a": [1]}),
        ),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a": "b"}), json!(["c"]), json!(["c"])),
        (json!({"a": "foo"}), json!(null), json!(null)),
        (json!({"a": "foo"}), json!("bar"), json!("bar")),
        (
            json!({"e": null}),
            json!({"a": 1}),
            json!({"e": null, "a": 1}),
        ),
        (
            json!([1, 2]),
            json!({"a": "b", "c": null}),
            json!({"a": "b"}),
        ),
        (
            json!({}),
            json!({"a": {"bb": {"ccc": null}}}),
            json!({"a": {"bb": {}}}),
        ),
    ];
    for (original, patch, expected) in cases {
        assert_eq!(
            patched(original.clone(), patch.clone()),
            expected,
            "original {original} patch {patch}"
        );
    }
}

#[test]
fn section_3_example() {
    let original = json!({
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged"
    });
    let patch = json!({
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": null},
        "tags": ["example"]
    });
    let expected = json!({
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890"
    });
    assert_eq!(patched(original.clone(), patch.clone()), expected);
    assert_eq!(diff(&original, &expected), patch);
}
