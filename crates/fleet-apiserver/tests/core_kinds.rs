//! ConfigMaps and Secrets as kube-apiserver treats them, seen through kube-rs: a Secret's `stringData` is
//! folded into base64 `data` on every kind of write (and watchers see the folded object), and values of the
//! wrong type are a 400 BadRequest with Go's decoding message.

mod common;

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::{TRANSPORTS, client};
use fleet_apiserver::ApiServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ApiResource, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::DynamicObject;
use serde_json::{Value, json};

fn b64(text: &str) -> String {
    STANDARD.encode(text)
}

fn secret(body: Value) -> Secret {
    serde_json::from_value(body).unwrap()
}

/// A Secret's `data` as `key -> base64 text`, and whether `stringData` survived.
fn stored_data(secret: &Secret) -> (BTreeMap<String, String>, bool) {
    let value = serde_json::to_value(secret).unwrap();
    let data = value["data"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default();
    (data, value.get("stringData").is_some())
}

fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items.iter().map(|(k, v)| (k.to_string(), b64(v))).collect()
}

#[tokio::test]
async fn string_data_is_folded_into_data_on_every_write() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let secrets: Api<Secret> = Api::namespaced(client(&server, transport).await, "default");

        let created = secrets
            .create(
                &PostParams::default(),
                &secret(json!({
                    "metadata": {"name": "s"},
                    "data": {"user": b64("admin"), "password": b64("old")},
                    "stringData": {"password": "s3cret"},
                })),
            )
            .await
            .unwrap();
        let expected = pairs(&[("user", "admin"), ("password", "s3cret")]);
        assert_eq!(stored_data(&created), (expected.clone(), false));
        assert_eq!(
            stored_data(&secrets.get("s").await.unwrap()),
            (expected, false),
            "{transport:?}: stringData wins over data and is not stored"
        );

        let with_token = |token: &str| {
            (
                pairs(&[("user", "admin"), ("password", "s3cret"), ("token", token)]),
                false,
            )
        };
        let mut replacement = secrets.get("s").await.unwrap();
        replacement.string_data = Some([("token".to_string(), "t1".to_string())].into());
        let replaced = secrets
            .replace("s", &PostParams::default(), &replacement)
            .await
            .unwrap();
        assert_eq!(stored_data(&replaced), with_token("t1"));

        for (patch, token) in [
            (Patch::Merge(json!({"stringData": {"token": "t2"}})), "t2"),
            (
                Patch::Strategic(json!({"stringData": {"token": "t3"}})),
                "t3",
            ),
        ] {
            let patched = secrets
                .patch("s", &PatchParams::default(), &patch)
                .await
                .unwrap();
            assert_eq!(stored_data(&patched), with_token(token), "{transport:?}");
        }

        // Server-side apply, creating and then updating the object.
        for value in ["first", "second"] {
            let applied = secrets
                .patch(
                    "applied",
                    &PatchParams::apply("test").force(),
                    &Patch::Apply(json!({
                        "apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "applied"},
                        "stringData": {"key": value},
                    })),
                )
                .await
                .unwrap();
            assert_eq!(
                stored_data(&applied),
                (pairs(&[("key", value)]), false),
                "{transport:?}"
            );
        }
    }
}

#[tokio::test]
async fn watchers_see_the_folded_data() {
    let server = ApiServer::in_memory();
    let secrets: Api<Secret> = Api::namespaced(server.client(), "default");
    let mut events = secrets
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    secrets
        .create(
            &PostParams::default(),
            &secret(json!({"metadata": {"name": "w"}, "stringData": {"k": "v"}})),
        )
        .await
        .unwrap();
    let seen = loop {
        match events.try_next().await.unwrap().expect("a watch event") {
            WatchEvent::Added(s) if s.metadata.name.as_deref() == Some("w") => break s,
            _ => {}
        }
    };
    assert_eq!(stored_data(&seen), (pairs(&[("k", "v")]), false));
}

/// Creates `body` through the dynamic API (so values may have any JSON type) and returns the API error.
async fn rejected<K>(client: kube::Client, body: Value) -> (u16, String, String)
where
    K: kube::Resource<DynamicType = ()>,
{
    let api: Api<DynamicObject> =
        Api::namespaced_with(client, "default", &ApiResource::erase::<K>(&()));
    let object: DynamicObject = serde_json::from_value(body).unwrap();
    match api.create(&PostParams::default(), &object).await {
        Err(kube::Error::Api(status)) => (status.code, status.reason, status.message),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn values_of_the_wrong_type_are_rejected_as_kube_apiserver_does() {
    let cm_prefix = "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: ";
    let secret_prefix = "Secret in version \"v1\" cannot be handled as a Secret: ";
    let cases = [
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"port": 8080}}),
            format!(
                "{cm_prefix}json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
            ),
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": ["a"]}),
            format!(
                "{cm_prefix}json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
            ),
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "binaryData": {"b": true}}),
            format!(
                "{cm_prefix}json: cannot unmarshal bool into Go struct field ConfigMap.binaryData of type []uint8"
            ),
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "binaryData": {"b": "not*base64"}}),
            format!("{cm_prefix}illegal base64 data at input byte 3"),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "hunter2"}}),
            format!("{secret_prefix}illegal base64 data at input byte 4"),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"n": 1}}),
            format!(
                "{secret_prefix}json: cannot unmarshal number into Go struct field Secret.data of type []uint8"
            ),
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"n": 1}}),
            format!(
                "{secret_prefix}json: cannot unmarshal number into Go struct field Secret.stringData of type string"
            ),
        ),
    ];
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let client = client(&server, transport).await;
        for (body, message) in &cases {
            let error = if body["kind"] == "Secret" {
                rejected::<Secret>(client.clone(), body.clone()).await
            } else {
                rejected::<ConfigMap>(client.clone(), body.clone()).await
            };
            assert_eq!(
                error,
                (400, "BadRequest".to_string(), message.clone()),
                "{transport:?} {body}"
            );
        }
        let stored: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        assert!(
            stored.get_opt("c").await.unwrap().is_none(),
            "nothing was stored"
        );
    }
}

#[tokio::test]
async fn a_patch_that_breaks_value_types_leaves_the_object_unchanged() {
    let server = ApiServer::in_memory();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "c"}, "data": {"k": "v"}, "binaryData": {"b": b64("x")}}),
    )
    .unwrap();
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let error = cms
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": 1}})),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = error else {
        panic!("expected an API error, got {error:?}");
    };
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert!(
        status.message.ends_with(
            "cannot unmarshal number into Go struct field ConfigMap.data of type string"
        ),
        "{}",
        status.message
    );
    let kept = cms.get("c").await.unwrap();
    assert_eq!(kept.data, Some([("k".to_string(), "v".to_string())].into()));
    assert_eq!(
        kept.binary_data.map(|b| b.len()),
        Some(1),
        "valid base64 binaryData is accepted"
    );
}
