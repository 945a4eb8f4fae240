//! The agent deploys every bundle style through the renderer `fleet test` uses: a kustomization and a Helm
//! chart, published on a real embedded hub and applied to a real embedded downstream cluster.

mod common;

use common::*;
use fleet_agent::Scope;
use std::collections::BTreeMap;

use fleet_api::{BundleDeploymentOptions, HelmOptions, KustomizeOptions};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use sha2::{Digest, Sha256};

fn scope() -> Scope {
    Scope::new("cattle-fleet-system", "")
}

#[tokio::test]
async fn a_kustomize_bundle_is_built_and_applied() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let options = BundleDeploymentOptions {
        kustomize: Some(KustomizeOptions {
            dir: "overlays/prod".to_string(),
        }),
        ..options_in("shop")
    };
    publish(
        &hub.client,
        "shop",
        &[
            ("base/kustomization.yaml", "resources:\n- cm.yaml\n"),
            ("base/cm.yaml", &config_map("settings", "base")),
            (
                "overlays/prod/kustomization.yaml",
                "resources:\n- ../../base\nnamePrefix: prod-\ncommonLabels:\n  env: prod\n",
            ),
        ],
        options,
        |_| {},
    )
    .await;
    wait_status(&hub.client, "shop", "kustomize bundle ready", |s| s.ready).await;
    let live = Api::<ConfigMap>::namespaced(downstream.client.clone(), "shop")
        .get("prod-settings")
        .await
        .unwrap();
    assert_eq!(live.data.unwrap()["key"], "base");
    assert_eq!(live.metadata.labels.unwrap()["env"], "prod");
}

#[tokio::test]
async fn a_helm_bundle_renders_its_chart_with_values_and_the_bundle_as_release() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let values =
        serde_json::from_value(serde_json::json!({"greeting": "hello from values"})).unwrap();
    let options = BundleDeploymentOptions {
        helm: Some(HelmOptions {
            values: Some(values),
            ..Default::default()
        }),
        ..options_in("web")
    };
    publish(
        &hub.client,
        "web",
        &[
            ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n"),
            ("values.yaml", "greeting: default\n"),
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
            ),
        ],
        options,
        |_| {},
    )
    .await;
    wait_status(&hub.client, "web", "helm bundle ready", |s| s.ready).await;
    let live = Api::<ConfigMap>::namespaced(downstream.client.clone(), "web")
        .get("web-config")
        .await
        .unwrap();
    assert_eq!(live.data.unwrap()["greeting"], "hello from values");
}

/// A Helm bundle whose values the controller moved into the BundleDeployment's options Secret: the agent
/// deploys a new version only once that Secret holds the values its `valuesHash` names. The controller writes
/// the Secret just after the BundleDeployment, so the agent can see the new BundleDeployment while the Secret
/// still holds the previous version's values; deploying then would put the old values under the new
/// deploymentID and report it applied.
#[tokio::test]
async fn a_helm_bundle_waits_for_its_options_secret_to_hold_the_values_of_its_values_hash() {
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    start_agent(&hub.client, &downstream, scope());
    let secrets: Api<Secret> = Api::namespaced(hub.client.clone(), CLUSTER_NS);
    let files = [
        ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n"),
        ("values.yaml", "greeting: default\n"),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
        ),
    ];
    // Publishes the version saying `greeting` as the controller does (values moved out, `valuesHash` set),
    // writing its options Secret first when `with_secret`.
    let publish_greeting = |greeting: &'static str, with_secret: bool| {
        let hub = hub.client.clone();
        let secrets = secrets.clone();
        async move {
            let values_json = format!(r#"{{"greeting":"{greeting}"}}"#);
            if with_secret {
                write_options_secret(&secrets, "web", &values_json).await;
            }
            let values = serde_json::from_str(&values_json).unwrap();
            let options = BundleDeploymentOptions {
                helm: Some(HelmOptions {
                    values: Some(values),
                    ..Default::default()
                }),
                ..options_in("web")
            };
            publish(&hub, "web", &files, options, |spec| {
                for options in [&mut spec.options, &mut spec.staged_options] {
                    options.helm = None;
                }
                spec.values_hash = values_hash(&values_json);
            })
            .await
        }
    };
    let live_greeting = || async {
        Api::<ConfigMap>::namespaced(downstream.client.clone(), "web")
            .get("web-config")
            .await
            .unwrap()
            .data
            .unwrap()["greeting"]
            .clone()
    };

    let first = publish_greeting("hello-one", true).await;
    wait_status(&hub.client, "web", "the first version ready", |s| {
        s.applied_deployment_id == first && s.ready
    })
    .await;
    assert_eq!(live_greeting().await, "hello-one");

    let second = publish_greeting("hello-two", false).await;
    let status = wait_status(
        &hub.client,
        "web",
        "the agent's answer to the second version",
        |s| {
            s.applied_deployment_id == second
                || fleet_api::find_condition(&s.conditions, "Deployed")
                    .is_some_and(|c| c.message.contains("options secret"))
        },
    )
    .await;
    assert_eq!(
        status.applied_deployment_id, first,
        "nothing is deployed under the new deploymentID while the Secret holds the previous values"
    );
    let deployed = condition(&status, "Deployed");
    assert_eq!(deployed.status, "Unknown", "{deployed:?}");
    assert!(
        deployed.message.contains(&format!(
            "options secret {CLUSTER_NS}/web does not hold the values of valuesHash"
        )) && !deployed.message.contains("hello"),
        "{deployed:?}"
    );
    assert!(!status.ready);
    assert_eq!(live_greeting().await, "hello-one");

    write_options_secret(&secrets, "web", r#"{"greeting":"hello-two"}"#).await;
    wait_status(&hub.client, "web", "the second version ready", |s| {
        s.applied_deployment_id == second && s.ready
    })
    .await;
    assert_eq!(live_greeting().await, "hello-two");
}

/// Writes the options Secret of BundleDeployment `name` as the controller does, with `values_json` as both
/// its deployed and its staged values.
async fn write_options_secret(secrets: &Api<Secret>, name: &str, values_json: &str) {
    let data = BTreeMap::from([
        ("values".to_string(), ByteString(values_json.into())),
        ("stagedValues".to_string(), ByteString(values_json.into())),
    ]);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        type_: Some("fleet.cattle.io/bundle-deployment/v1alpha1".to_string()),
        data: Some(data),
        ..Secret::default()
    };
    secrets
        .patch(
            name,
            &PatchParams::apply("test-controller").force(),
            &Patch::Apply(&secret),
        )
        .await
        .unwrap();
}

/// `spec.valuesHash` for `values_json` as both deployed and staged values: sha256 of the two, one after the
/// other (Fleet's `HashOptions`).
fn values_hash(values_json: &str) -> String {
    hex::encode(Sha256::digest(format!("{values_json}{values_json}")))
}

/// A CRD on the downstream cluster: `kind` in group `example.com`, with the given scope.
fn example_crd(
    kind: &str,
    scope: &str,
) -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    let plural = format!("{}s", kind.to_lowercase());
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

fn example_resource(kind: &str) -> kube::discovery::ApiResource {
    kube::discovery::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    }
}

/// Fleet's quickstart layout (no fleet.yaml, no namespaces): objects land in `default`, Fleet's release
/// namespace when there is no `defaultNamespace`. Whether a kind is namespaced is the downstream cluster's
/// answer: a namespaced custom kind that shares its name with a cluster-scoped built-in gets the namespace,
/// and a custom resource of a cluster-scoped CRD gets none.
#[tokio::test]
async fn objects_without_a_namespace_land_in_default_as_the_cluster_scopes_them() {
    use kube::api::DynamicObject;
    let hub = hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    downstream
        .install_crds(vec![
            example_crd("Global", "Cluster"),
            example_crd("StorageClass", "Namespaced"),
        ])
        .await;
    start_agent(&hub.client, &downstream, scope());
    publish(
        &hub.client,
        "simple",
        &[
            (
                "frontend-service.yaml",
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: frontend\nspec:\n  ports:\n  - port: 80\n",
            ),
            ("settings.yaml", &config_map("settings", "v")),
            (
                "global.yaml",
                "apiVersion: example.com/v1\nkind: Global\nmetadata:\n  name: g\n",
            ),
            (
                "custom.yaml",
                "apiVersion: example.com/v1\nkind: StorageClass\nmetadata:\n  name: fast\n",
            ),
        ],
        BundleDeploymentOptions::default(),
        |_| {},
    )
    .await;
    wait_status(&hub.client, "simple", "the quickstart layout ready", |s| {
        s.ready
    })
    .await;
    let client = &downstream.client;
    Api::<k8s_openapi::api::core::v1::Service>::namespaced(client.clone(), "default")
        .get("frontend")
        .await
        .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .get("settings")
        .await
        .unwrap();
    Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &example_resource("StorageClass"),
    )
    .get("fast")
    .await
    .unwrap();
    let global = Api::<DynamicObject>::all_with(client.clone(), &example_resource("Global"))
        .get("g")
        .await
        .unwrap();
    assert_eq!(global.metadata.namespace, None);

    // Fleet refuses cluster-scoped objects with a target namespace, asking the cluster which they are.
    publish(
        &hub.client,
        "targeted",
        &[(
            "global.yaml",
            "apiVersion: example.com/v1\nkind: Global\nmetadata:\n  name: h\n",
        )],
        BundleDeploymentOptions {
            target_namespace: "apps".into(),
            ..Default::default()
        },
        |_| {},
    )
    .await;
    let status = wait_status(&hub.client, "targeted", "a cluster-scoped error", |s| {
        fleet_api::find_condition(&s.conditions, "Ready")
            .is_some_and(|c| c.message.contains("cluster-scoped"))
    })
    .await;
    assert!(!status.ready);
}
