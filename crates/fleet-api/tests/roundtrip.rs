//! Objects written for Rancher Fleet deserialize into our types and serialize back to the
//! same JSON value: no field is lost or invented.

use fleet_api::{
    Bundle, BundleDeployment, BundleNamespaceMapping, Cluster, ClusterGroup, ClusterRegistration,
    ClusterRegistrationToken, Content, GitRepo, GitRepoRestriction, HelmOp,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Splits a fixture into its documents, keeping those of `kind`, as untyped JSON values.
fn documents(fixture: &str, kind: &str) -> Vec<Value> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(fixture).expect("fixture parses");
    documents
        .into_iter()
        .filter(|document| document["kind"] == kind)
        .collect()
}

/// Asserts that every `kind` document of the fixture survives typed deserialization and
/// re-serialization unchanged; returns the typed objects.
fn assert_round_trip<T: DeserializeOwned + Serialize>(fixture: &str, kind: &str) -> Vec<T> {
    let originals = documents(fixture, kind);
    assert!(!originals.is_empty(), "no {kind} in fixture");
    originals
        .into_iter()
        .map(|original| {
            let typed: T = serde_json::from_value(original.clone())
                .unwrap_or_else(|error| panic!("{kind} {}: {error}", original["metadata"]["name"]));
            let back = serde_json::to_value(&typed).expect("serializes");
            if let Some(difference) = first_difference(&original, &back, "") {
                panic!(
                    "{kind} {} changed at {difference}",
                    original["metadata"]["name"]
                );
            }
            typed
        })
        .collect()
}

/// The path of the first difference between two JSON values, with both sides.
fn first_difference(original: &Value, back: &Value, path: &str) -> Option<String> {
    match (original, back) {
        (Value::Object(left), Value::Object(right)) => {
            let keys = left
                .keys()
                .chain(right.keys().filter(|key| !left.contains_key(*key)));
            keys.into_iter()
                .find_map(|key| match (left.get(key), right.get(key)) {
                    (Some(a), Some(b)) => first_difference(a, b, &format!("{path}.{key}")),
                    (a, b) => Some(format!("{path}.{key}: {a:?} became {b:?}")),
                })
        }
        (Value::Array(left), Value::Array(right)) if left.len() == right.len() => left
            .iter()
            .zip(right)
            .enumerate()
            .find_map(|(index, (a, b))| first_difference(a, b, &format!("{path}[{index}]"))),
        (a, b) if a == b => None,
        (a, b) => Some(format!("{path}: {a} became {b}")),
    }
}

const GITREPOS: &str = include_str!("fixtures/gitrepos.yaml");
const BUNDLES: &str = include_str!("fixtures/bundles.yaml");
const BUNDLE_DEPLOYMENTS: &str = include_str!("fixtures/bundledeployments.yaml");
const CLUSTERS: &str = include_str!("fixtures/clusters.yaml");
const OTHERS: &str = include_str!("fixtures/others.yaml");

#[test]
fn gitrepos_round_trip() {
    let repos: Vec<GitRepo> = assert_round_trip(GITREPOS, "GitRepo");
    assert_eq!(repos[1].spec.targets.len(), 5);
    let everything = &repos[2];
    assert_eq!(everything.spec.revision, "v1.2.3");
    assert_eq!(
        everything.spec.bundles[1].options,
        "apps/backend/fleet-prod.yaml"
    );
    let ca = everything.spec.ca_bundle.as_ref().expect("caBundle");
    assert!(ca.0.starts_with(b"-----BEGIN CERTIFICATE-----"));
    let status = everything.status.as_ref().expect("status");
    assert_eq!(status.base.display.ready_bundle_deployments, "1/2");
    assert_eq!(status.commit.len(), 40);
    let placement = repos[3].spec.placement.as_ref().expect("placement");
    assert_eq!(
        (
            placement.placement_type.as_str(),
            placement.number_of_clusters
        ),
        ("PickN", Some(3))
    );
    assert_eq!(placement.tolerations[0].toleration_seconds, Some(300));
}

#[test]
fn bundles_round_trip() {
    let bundles: Vec<Bundle> = assert_round_trip(BUNDLES, "Bundle");
    let helm = bundles[1].spec.options.helm.as_ref().expect("helm");
    assert_eq!(helm.values.as_ref().expect("values")["replicas"], 2);
    assert!(bundles[1].spec.targets[1].do_not_deploy);
    assert_eq!(
        bundles[1].spec.depends_on[1].accepted_states,
        [
            fleet_api::BundleState::Ready,
            fleet_api::BundleState::Modified
        ]
    );
}

#[test]
fn bundle_deployments_round_trip() {
    let deployments: Vec<BundleDeployment> =
        assert_round_trip(BUNDLE_DEPLOYMENTS, "BundleDeployment");
    let status = deployments[0].status.as_ref().expect("status");
    assert!(status.modified_status[1].create && status.modified_status[1].exist);
    assert_eq!(status.display.state, "Modified");
}

#[test]
fn bundle_deployment_options_hash_input_is_fleets() {
    let deployments: Vec<BundleDeployment> =
        assert_round_trip(BUNDLE_DEPLOYMENTS, "BundleDeployment");
    assert_eq!(
        fleet_api::go_json::to_string(&deployments[0].spec.options).unwrap(),
        r#"{"helm":{"chart":"config-chart","values":{"name":"example-value"}},"ignore":{}}"#
    );
}

#[test]
fn clusters_round_trip() {
    let clusters: Vec<Cluster> = assert_round_trip(CLUSTERS, "Cluster");
    let status = clusters[0].status.as_ref().expect("status");
    assert_eq!(
        status.agent.as_ref().expect("agent").namespace,
        "cattle-fleet-local-system"
    );
    assert_eq!(clusters[1].spec.agent_tolerations.len(), 1);
    assert_eq!(
        clusters[1].spec.taints[0].effect,
        fleet_api::TAINT_NO_SELECT
    );
    assert_eq!(
        clusters[1].status.as_ref().expect("status").scores[1].value,
        -5
    );
}

#[test]
fn other_kinds_round_trip() {
    assert_round_trip::<ClusterGroup>(OTHERS, "ClusterGroup");
    assert_round_trip::<ClusterRegistrationToken>(OTHERS, "ClusterRegistrationToken");
    assert_round_trip::<ClusterRegistration>(OTHERS, "ClusterRegistration");
    let mappings: Vec<BundleNamespaceMapping> = assert_round_trip(OTHERS, "BundleNamespaceMapping");
    assert!(mappings[0].spec.bundle_selector.is_some());
    let restrictions: Vec<GitRepoRestriction> = assert_round_trip(OTHERS, "GitRepoRestriction");
    assert_eq!(restrictions[0].spec.allowed_service_accounts.len(), 2);
    let contents: Vec<Content> = assert_round_trip(OTHERS, "Content");
    assert_eq!(
        contents[0].spec.content.as_ref().expect("content").0[..2],
        [0x1f, 0x8b]
    );
}

#[test]
fn unknown_fields_are_tolerated_like_the_apiserver() {
    let yaml = r#"
apiVersion: fleet.cattle.io/v1alpha1
kind: GitRepo
metadata:
  name: future
spec:
  repo: https://example.com/repo
  someFieldFromANewerFleet: true
  targets:
  - clusterName: a
    placementHint: spread
"#;
    let repo: GitRepo = serde_saphyr::from_str(yaml).expect("unknown fields are ignored");
    assert_eq!(repo.spec.targets[0].cluster_name, "a");
}

#[test]
fn nulls_in_nullable_fields_read_as_zero_values_like_go() {
    let yaml = r#"
apiVersion: fleet.cattle.io/v1alpha1
kind: GitRepo
metadata:
  name: nulls
  creationTimestamp: null
spec:
  repo: https://example.com/repo
  branch: null
  paths: null
  paused: null
  forceSyncGeneration: null
  targets:
  - name: null
    clusterSelector: null
status:
  summary: null
  readyClusters: null
"#;
    let repo: GitRepo = serde_saphyr::from_str(yaml).expect("nulls are accepted");
    assert_eq!(repo.spec.branch, "");
    assert!(repo.spec.paths.is_empty() && !repo.spec.paused);
    assert!(repo.spec.targets[0].cluster_selector.is_none());
    let cluster: Cluster = serde_json::from_str(
        r#"{"apiVersion":"fleet.cattle.io/v1alpha1","kind":"Cluster","metadata":{"name":"c"},
            "spec":{},"status":{"agent":{"lastSeen":null,"namespace":""},"display":{}}}"#,
    )
    .expect("a Cluster before its first check-in reads");
    assert!(cluster.status.unwrap().agent.unwrap().last_seen.is_none());
}

/// A HelmOp as Fleet's documentation and tests write them (chart reference, polling, credentials,
/// targets, values and namespace inline from the embedded Bundle spec), with a status as Fleet writes it.
#[test]
fn helmops_round_trip() {
    let yaml = r#"
apiVersion: fleet.cattle.io/v1alpha1
kind: HelmOp
metadata:
  name: sleeper
  namespace: fleet-default
spec:
  helm:
    releaseName: testhelm
    repo: https://charts.example.com/
    chart: sleeper
    version: ">=0.1.0 <1"
    values:
      replicas: 2
  namespace: apps
  ignore: {}
  labels:
    team: a
  pollingInterval: 1m
  helmSecretName: creds
  insecureSkipTLSVerify: true
  targets:
  - clusterSelector: {}
    ignore: {}
  - clusterName: edge
    ignore: {}
    helm:
      values:
        replicas: 1
status:
  version: 0.1.4
  lastPollingTriggered: "2025-01-02T03:04:05Z"
  readyClusters: 1
  desiredReadyClusters: 1
  summary:
    ready: 1
    desiredReady: 1
  display:
    readyBundleDeployments: 1/1
  resourceCounts:
    ready: 1
    desiredReady: 1
    waitApplied: 0
    modified: 0
    orphaned: 0
    missing: 0
    unknown: 0
    notReady: 0
  conditions:
  - type: Ready
    status: "True"
    lastUpdateTime: "2025-01-02T03:04:05Z"
  - type: Polled
    status: "True"
    lastUpdateTime: "2025-01-02T03:04:05Z"
"#;
    let original: Value = serde_saphyr::from_str(yaml).unwrap();
    let typed: HelmOp = serde_json::from_value(original.clone()).unwrap();
    let spec = &typed.spec;
    let helm = spec.bundle.options.helm.as_ref().unwrap();
    assert_eq!(
        [&helm.repo, &helm.chart, &helm.version],
        ["https://charts.example.com/", "sleeper", ">=0.1.0 <1"]
    );
    assert_eq!(spec.bundle.options.target_namespace, "apps");
    assert_eq!(spec.bundle.targets.len(), 2);
    assert_eq!(spec.polling_interval.as_deref(), Some("1m"));
    assert_eq!(spec.helm_secret_name, "creds");
    assert!(spec.insecure_skip_tls_verify);
    assert_eq!(spec.labels["team"], "a");
    let status = typed.status.as_ref().unwrap();
    assert_eq!(status.version, "0.1.4");
    assert_eq!(status.base.display.ready_bundle_deployments, "1/1");
    let back = serde_json::to_value(&typed).unwrap();
    if let Some(difference) = first_difference(&original, &back, "") {
        panic!("HelmOp changed at {difference}");
    }
}
