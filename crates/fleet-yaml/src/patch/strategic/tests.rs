//! Unit tests of strategic merge on small documents; the kubectl goldens in `tests/strategic_patch_goldens.rs`
//! cover whole objects.

use serde_json::{Value, json};

use super::*;

fn deployment(pod_spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": pod_spec}}})
}

fn pod_spec_patch(pod_spec: Value) -> Value {
    json!({"spec": {"template": {"spec": pod_spec}}})
}

fn patched_pod_spec(original: Value, patch: Value) -> Result<Value, PatchError> {
    apply_to_object(&deployment(original), &pod_spec_patch(patch))
        .map(|out| out["spec"]["template"]["spec"].clone())
}

#[test]
fn containers_merge_by_name_and_new_ones_come_first() {
    let out = patched_pod_spec(
        json!({"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}),
        json!({"containers": [{"name": "b", "image": "z"}, {"name": "c", "image": "w"}]}),
    );
    assert_eq!(
        out.unwrap(),
        json!({"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "z"}, {"name": "c", "image": "w"}]})
    );
    let out = patched_pod_spec(
        json!({"containers": [{"name": "a"}]}),
        json!({"containers": [{"name": "n"}]}),
    );
    assert_eq!(
        out.unwrap(),
        json!({"containers": [{"name": "n"}, {"name": "a"}]})
    );
}

#[test]
fn list_item_directives_delete_and_replace() {
    let original = json!({"containers": [{"name": "a"}, {"name": "b"}]});
    let out = patched_pod_spec(
        original.clone(),
        json!({"containers": [{"name": "a", "$patch": "delete"}]}),
    );
    assert_eq!(out.unwrap(), json!({"containers": [{"name": "b"}]}));
    let out = patched_pod_spec(
        original.clone(),
        json!({"containers": [{"$patch": "replace"}, {"name": "z"}]}),
    );
    assert_eq!(out.unwrap(), json!({"containers": [{"name": "z"}]}));
    let err = patched_pod_spec(original, json!({"containers": [{"$patch": "merge"}]})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "strategic merge patch at spec.template.spec.containers: $patch: merge is not supported in lists"
    );
}

#[test]
fn map_directives_replace_and_delete() {
    let original = json!({"nodeSelector": {"a": "1"}, "containers": []});
    let out = patched_pod_spec(
        original.clone(),
        json!({"nodeSelector": {"$patch": "replace", "b": "2"}}),
    );
    assert_eq!(out.unwrap()["nodeSelector"], json!({"b": "2"}));
    let out = patched_pod_spec(
        original.clone(),
        json!({"nodeSelector": {"$patch": "delete"}}),
    );
    assert_eq!(out.unwrap()["nodeSelector"], json!({}));
    let err = patched_pod_spec(original, json!({"nodeSelector": {"$patch": "merge"}})).unwrap_err();
    assert!(err.to_string().starts_with(
        "strategic merge patch at spec.template.spec.nodeSelector: unknown patch type"
    ));
}

#[test]
fn null_deletes_and_unmatched_nulls_vanish() {
    let out = patched_pod_spec(
        json!({"nodeSelector": {"a": "1", "b": "2"}}),
        json!({"nodeSelector": {"a": null, "c": null}, "affinity": {"x": null, "y": {}}}),
    );
    assert_eq!(
        out.unwrap(),
        json!({"nodeSelector": {"b": "2"}, "affinity": {"y": {}}})
    );
}

#[test]
fn retain_keys_clears_union_members() {
    let original = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let out = apply_to_object(&original, &patch).unwrap();
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn primitive_merge_lists_are_sets() {
    let original =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"finalizers": ["a", "b"]}});
    let out = apply_to_object(&original, &json!({"metadata": {"finalizers": ["b", "c"]}})).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
    let out = apply_to_object(
        &original,
        &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
}

#[test]
fn set_element_order_reorders() {
    let out = patched_pod_spec(
        json!({"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}),
        json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}),
    );
    assert_eq!(
        out.unwrap(),
        json!({"containers": [{"name": "b"}, {"name": "a", "image": "x"}]})
    );
    let err = patched_pod_spec(
        json!({"containers": [{"name": "a"}, {"name": "b"}]}),
        json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
               "containers": [{"name": "a"}, {"name": "b"}]}),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("does not match its $setElementOrder list"),
        "{err}"
    );
}

#[test]
fn unknown_kinds_replace_lists() {
    let original = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "spec": {"items": [{"name": "a", "v": 1}], "m": {"x": 1}}});
    let patch = json!({"spec": {"items": [{"name": "b"}], "m": {"y": 2}}});
    let out = apply_to_object(&original, &patch).unwrap();
    assert_eq!(
        out["spec"],
        json!({"items": [{"name": "b"}], "m": {"x": 1, "y": 2}})
    );
}

#[test]
fn malformed_inputs_are_errors_not_panics() {
    let cases = [
        (
            json!({"containers": [{"image": "x"}]}),
            json!({"containers": [{"name": "a"}]}),
            "strategic merge patch at spec.template.spec.containers: a list item has no merge key \"name\"",
        ),
        (
            json!({"containers": [{"name": "a"}]}),
            json!({"containers": [{"image": "x"}]}),
            "strategic merge patch at spec.template.spec.containers: a list item has no merge key \"name\"",
        ),
        (
            json!({"containers": [{"name": "a"}]}),
            json!({"containers": ["x"]}),
            "strategic merge patch at spec.template.spec.containers: the items of a merged list must all have the same type",
        ),
        (
            json!({"containers": [[1]]}),
            json!({"containers": [[2]]}),
            "strategic merge patch at spec.template.spec.containers: lists of lists cannot be merged",
        ),
        (
            json!({}),
            json!({"$setElementOrder/containers": "a"}),
            "strategic merge patch at spec.template.spec.containers: $setElementOrder/containers must be a list",
        ),
        (
            json!({}),
            json!({"$retainKeys": ["a"], "b": 1}),
            "strategic merge patch at spec.template.spec: the patch sets \"b\", which $retainKeys does not list",
        ),
    ];
    for (original, patch, message) in cases {
        let err = patched_pod_spec(original, patch.clone()).unwrap_err();
        assert_eq!(err.to_string(), message, "patch {patch}");
    }
    let root_error = apply(&json!([1]), &json!({}), &Schemaless).unwrap_err();
    assert_eq!(
        root_error.to_string(),
        "strategic merge patch at <root>: the document to patch must be a JSON object"
    );
    assert!(apply(&json!({}), &json!("x"), &Schemaless).is_err());
}

#[test]
fn deep_nesting_is_rejected() {
    let mut original = json!({});
    let mut patch = json!(1);
    for _ in 0..300 {
        original = json!({"a": original});
        patch = json!({"a": patch});
    }
    let err = apply(&original, &patch, &Schemaless).unwrap_err();
    assert!(err.to_string().contains("nests deeper than"), "{err}");
}

#[test]
fn member_order_of_the_original_is_kept() {
    let out = apply(
        &json!({"z": 1, "a": {"y": 1, "b": 2}}),
        &json!({"n": 3, "a": {"c": 1, "y": 2}}),
        &Schemaless,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        r#"{"z":1,"a":{"y":2,"b":2,"c":1},"n":3}"#
    );
}

fn deployment_schema() -> &'static BuiltinSchema {
    builtin_schema_for("apps/v1", "Deployment").unwrap()
}

#[test]
fn diff_of_a_changed_container_is_what_kubectl_apply_sends() {
    let original = deployment(
        json!({"containers": [{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}]}),
    );
    let modified = deployment(
        json!({"containers": [{"name": "app", "image": "a:2"}, {"name": "side", "image": "s:1"}]}),
    );
    let patch = diff(&original, &modified, deployment_schema()).unwrap();
    assert_eq!(
        patch,
        pod_spec_patch(json!({
            "$setElementOrder/containers": [{"name": "app"}, {"name": "side"}],
            "containers": [{"name": "app", "image": "a:2"}]
        }))
    );
}

#[test]
fn diff_deletes_items_and_members() {
    let original = deployment(
        json!({"containers": [{"name": "app", "args": ["x"]}, {"name": "side"}], "hostname": "h"}),
    );
    let modified = deployment(json!({"containers": [{"name": "app"}]}));
    let patch = diff(&original, &modified, deployment_schema()).unwrap();
    assert_eq!(
        patch,
        pod_spec_patch(json!({
            "containers": [{"name": "app", "args": null}, {"$patch": "delete", "name": "side"}],
            "$setElementOrder/containers": [{"name": "app"}],
            "hostname": null
        }))
    );
}

#[test]
fn diff_of_primitive_merge_lists_uses_parallel_lists() {
    let schema = builtin_schema_for("v1", "ConfigMap").unwrap();
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let modified = json!({"metadata": {"finalizers": ["c", "d", "a"]}});
    let patch = diff(&original, &modified, schema).unwrap();
    assert_eq!(
        patch,
        json!({"metadata": {
            "finalizers": ["d"],
            "$deleteFromPrimitiveList/finalizers": ["b"],
            "$setElementOrder/finalizers": ["c", "d", "a"]
        }})
    );
    assert_eq!(apply(&original, &patch, schema).unwrap(), modified);
}

#[test]
fn diff_of_a_union_lists_retained_keys() {
    let original =
        json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let modified = json!({"spec": {"strategy": {"type": "Recreate"}}});
    let patch = diff(&original, &modified, deployment_schema()).unwrap();
    assert_eq!(
        patch,
        json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null, "$retainKeys": ["type"]}}})
    );
    assert_eq!(
        apply(&original, &patch, deployment_schema()).unwrap(),
        modified
    );
}

#[test]
fn diff_of_equal_documents_is_empty_and_lists_without_strategy_are_replaced() {
    let doc = deployment(json!({"containers": [{"name": "app"}], "tolerations": [{"key": "a"}]}));
    assert_eq!(diff(&doc, &doc, deployment_schema()).unwrap(), json!({}));
    let modified =
        deployment(json!({"containers": [{"name": "app"}], "tolerations": [{"key": "b"}]}));
    assert_eq!(
        diff(&doc, &modified, deployment_schema()).unwrap(),
        pod_spec_patch(json!({"tolerations": [{"key": "b"}]}))
    );
    assert!(diff(&json!([]), &doc, deployment_schema()).is_err());
}
