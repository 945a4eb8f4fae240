//! Documented fleet.yaml behaviour the agent owns, against embedded hub and downstream API servers:
//! `diff.comparePatches` with an `ignore` operation (Fleet's bundle-diffs page: a Job deleted once it
//! completed is not reported), and `helm.valuesFrom` (values from a ConfigMap or Secret on the downstream
//! cluster, Fleet's defaults and merge order).

mod common;

use std::collections::BTreeMap;

use common::*;
use fleet_api::{
    BundleDeploymentOptions, ComparePatch, DiffOptions, HelmOptions, ValuesFrom, ValuesKeyRef,
};
use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: consul-tls-init\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: init\n        image: busybox:1.36\n";

/// The bundle-diffs page's Consul case: the Job that is deleted after it completed is ignored as a whole,
/// neither Modified nor Missing, while drift of the bundle's other objects is still reported.
#[tokio::test]
async fn an_ignored_object_deleted_after_completion_is_not_reported() {
    let (hub, downstream) = hub_with_agent().await;
    let options = BundleDeploymentOptions {
        diff: Some(DiffOptions {
            compare_patches: vec![ComparePatch {
                api_version: "batch/v1".into(),
                kind: "Job".into(),
                name: "consul-tls-init".into(),
                namespace: "default".into(),
                operations: vec![serde_json::from_value(json!({"op": "ignore"})).unwrap()],
                ..Default::default()
            }],
        }),
        ..Default::default()
    };
    let settings = config_map("settings", "wanted");
    publish(
        &hub.client,
        "consul",
        &[("job.yaml", JOB), ("cm.yaml", &settings)],
        options,
        |_| {},
    )
    .await;
    let jobs: Api<Job> = Api::namespaced(downstream.client.clone(), "default");
    wait_for("the job applied", || {
        let jobs = jobs.clone();
        async move { jobs.get_opt("consul-tls-init").await.ok().flatten() }
    })
    .await;
    let complete = json!({"status": {"succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True"}]}});
    jobs.patch_status(
        "consul-tls-init",
        &PatchParams::default(),
        &Patch::Merge(&complete),
    )
    .await
    .unwrap();
    wait_status(&hub.client, "consul", "ready", |s| {
        s.ready && s.non_modified
    })
    .await;

    jobs.delete("consul-tls-init", &DeleteParams::default())
        .await
        .unwrap();
    // An edit after the deletion: the status that reports it was observed after the Job was gone.
    Api::<ConfigMap>::namespaced(downstream.client.clone(), "default")
        .patch(
            "settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"key": "edited"}})),
        )
        .await
        .unwrap();
    let status = wait_status(&hub.client, "consul", "the edit reported", |s| {
        !s.non_modified
    })
    .await;
    let reported: Vec<String> = status
        .modified_status
        .iter()
        .map(|m| m.object.name.clone())
        .collect();
    assert_eq!(reported, ["settings"], "{:?}", status.modified_status);
    assert_eq!(status.resource_counts.missing, 0);
}

fn values_from(config_map: Option<ValuesKeyRef>, secret: Option<ValuesKeyRef>) -> ValuesFrom {
    ValuesFrom {
        config_map_key_ref: config_map,
        secret_key_ref: secret,
    }
}

fn key_ref(name: &str, namespace: &str, key: &str) -> ValuesKeyRef {
    serde_json::from_value(json!({"name": name, "namespace": namespace, "key": key})).unwrap()
}

const CHART: &str = "apiVersion: v2\nname: web\nversion: 0.1.0\n";
const TEMPLATE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rendered\ndata:\n  a: {{ .Values.a | quote }}\n  b: {{ .Values.nested.b | quote }}\n  c: {{ .Values.nested.c | quote }}\n  d: {{ .Values.d | quote }}\n";

async fn put_config_map(client: &kube::Client, namespace: &str, name: &str, key: &str, text: &str) {
    create_namespace(client, namespace).await;
    let body: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": namespace}, "data": {key: text}}),
    )
    .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &body)
        .await
        .unwrap();
}

async fn put_secret(client: &kube::Client, namespace: &str, name: &str, key: &str, text: &str) {
    create_namespace(client, namespace).await;
    let body = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            key.to_string(),
            ByteString(text.as_bytes().to_vec()),
        )])),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &body)
        .await
        .unwrap();
}

async fn rendered(client: &kube::Client, namespace: &str) -> BTreeMap<String, String> {
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .get("rendered")
        .await
        .unwrap()
        .data
        .unwrap()
}

/// valuesFrom wins over `helm.values`; entries merge in order, maps key by key; a reference without a
/// namespace reads the release namespace and without a key reads `values.yaml`; within one entry the
/// Secret merges after the ConfigMap.
#[tokio::test]
async fn values_from_config_maps_and_secrets_merge_over_the_bundles_values() {
    let (hub, downstream) = hub_with_agent().await;
    let client = &downstream.client;
    put_config_map(
        client,
        "apps",
        "base",
        "values.yaml",
        "a: from-configmap\nnested:\n  b: configmap-b\n  c: configmap-c\n",
    )
    .await;
    put_config_map(
        client,
        "elsewhere",
        "extra",
        "custom.yaml",
        "nested:\n  c: elsewhere-c\n",
    )
    .await;
    put_secret(
        client,
        "apps",
        "creds",
        "values.yaml",
        "d: from-secret\nnested:\n  c: secret-c\n",
    )
    .await;
    let options = BundleDeploymentOptions {
        helm: Some(HelmOptions {
            values: Some(
                serde_json::from_value(json!({"a": "from-values", "d": "from-values",
                    "nested": {"b": "values-b"}}))
                .unwrap(),
            ),
            values_from: vec![
                values_from(
                    Some(key_ref("base", "", "")),
                    Some(key_ref("creds", "", "")),
                ),
                values_from(Some(key_ref("extra", "elsewhere", "custom.yaml")), None),
            ],
            ..Default::default()
        }),
        ..options_in("apps")
    };
    publish(
        &hub.client,
        "web",
        &[("Chart.yaml", CHART), ("templates/cm.yaml", TEMPLATE)],
        options,
        |_| {},
    )
    .await;
    wait_status(&hub.client, "web", "ready", |s| s.ready).await;
    let data = rendered(client, "apps").await;
    assert_eq!(data["a"], "from-configmap");
    assert_eq!(data["b"], "configmap-b");
    assert_eq!(data["c"], "elsewhere-c", "the later entry wins");
    assert_eq!(data["d"], "from-secret");
}

/// Publishes the bundle `web` (`files` with `options`) and waits until its Ready condition's message names
/// `needle`; that status.
async fn publish_until_ready_names(
    hub: &kube::Client,
    files: &[(&str, &str)],
    options: BundleDeploymentOptions,
    needle: &str,
    what: &str,
) -> fleet_api::BundleDeploymentStatus {
    publish(hub, "web", files, options, |_| {}).await;
    wait_status(hub, "web", what, |s| {
        fleet_api::find_condition(&s.conditions, "Ready")
            .is_some_and(|c| c.message.contains(needle))
    })
    .await
}

/// A missing ConfigMap, Secret or key is an error on the BundleDeployment; what is deployed stays; a
/// Secret's contents never appear in the status; once the ConfigMap exists the retry deploys.
#[tokio::test]
async fn a_missing_values_source_is_reported_and_removes_nothing() {
    let (hub, downstream) = hub_with_agent().await;
    let client = &downstream.client;
    let files = [("Chart.yaml", CHART), ("templates/cm.yaml", TEMPLATE)];
    let helm = |values_from: Vec<ValuesFrom>| BundleDeploymentOptions {
        helm: Some(HelmOptions {
            values: Some(
                serde_json::from_value(json!({"a": "1", "d": "1", "nested": {"b": "1", "c": "1"}}))
                    .unwrap(),
            ),
            values_from,
            ..Default::default()
        }),
        ..options_in("apps")
    };
    let first = publish(&hub.client, "web", &files, helm(vec![]), |_| {}).await;
    wait_status(&hub.client, "web", "first version ready", |s| {
        s.applied_deployment_id == first && s.ready
    })
    .await;

    let status = publish_until_ready_names(
        &hub.client,
        &files,
        helm(vec![values_from(Some(key_ref("later", "", "")), None)]),
        "later",
        "the missing configmap reported",
    )
    .await;
    let message = &condition(&status, "Ready").message;
    assert!(
        message.contains("valuesFrom configmap apps/later: not found"),
        "{message}"
    );
    assert_eq!(status.applied_deployment_id, first);
    assert_eq!(rendered(client, "apps").await["a"], "1", "nothing removed");

    put_secret(
        client,
        "apps",
        "creds",
        "other",
        "a: hunter2-secret-value\n",
    )
    .await;
    let status = publish_until_ready_names(
        &hub.client,
        &files,
        helm(vec![values_from(
            None,
            Some(key_ref("creds", "apps", "values.yaml")),
        )]),
        "creds",
        "the missing key reported",
    )
    .await;
    let text = serde_json::to_string(&status).unwrap();
    assert!(
        text.contains("valuesFrom secret apps/creds: has no key values.yaml"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");

    put_secret(
        client,
        "apps",
        "broken",
        "values.yaml",
        "a: [hunter2-unclosed\n",
    )
    .await;
    let status = publish_until_ready_names(
        &hub.client,
        &files,
        helm(vec![values_from(None, Some(key_ref("broken", "", "")))]),
        "broken",
        "the broken secret reported",
    )
    .await;
    let text = serde_json::to_string(&status).unwrap();
    assert!(text.contains("is not valid YAML"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");

    let last = publish(
        &hub.client,
        "web",
        &files,
        helm(vec![values_from(Some(key_ref("later", "", "")), None)]),
        |_| {},
    )
    .await;
    put_config_map(client, "apps", "later", "values.yaml", "a: arrived\n").await;
    wait_status(
        &hub.client,
        "web",
        "deployed once the configmap exists",
        |s| s.applied_deployment_id == last && s.ready,
    )
    .await;
    assert_eq!(rendered(client, "apps").await["a"], "arrived");
}
