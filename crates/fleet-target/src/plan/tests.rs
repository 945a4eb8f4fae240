use super::*;
use crate::labels::deployment_labels;
use crate::model::{ClusterHealth, ClusterInfo};
use desired::labels_match;
use fleet_api::{BundleDeploymentOptions, BundleDeploymentSpec, BundleRef};
use serde_json::json;

/// Hashes that stand in for the bundle crate's: the manifest ID counts the resources, the
/// deploymentID shows the options.
const HASHES: Hashes = Hashes {
    manifest_id: |resources| format!("s-{}", resources.len()),
    deployment_id: |manifest_id, options| {
        format!("{manifest_id}:{}", serde_json::to_string(options).unwrap())
    },
};

fn plan_of(
    bundle: &Bundle,
    state: &FleetState,
) -> Result<BundleWork<BundleDeployment>, TargetError> {
    let none = BTreeMap::new();
    let input = PlanInput {
        bundle,
        fleet: state,
        deployments: &none,
        namespace_selector: None,
        now: 0,
        eligibility: EligibilityConfig::default(),
        hashes: HASHES,
    };
    plan(&input, &TargetingCache::default())
}

const NS: &str = "fleet-default";

/// An index with clusters c0..c{count}, all with a namespace but `without_namespace`.
fn index(count: usize, without_namespace: &[&str]) -> FleetState {
    let mut state = FleetState::default();
    for i in 0..count {
        let name = format!("c{i}");
        let key = ClusterKey::new(NS, &name);
        state
            .clusters
            .upsert_cluster(ClusterInfo::new(NS, &name, [("env", "prod")]));
        if !without_namespace.contains(&name.as_str()) {
            state
                .cluster_namespaces
                .insert(key, format!("cluster-{name}"));
        }
    }
    state
}

fn bundle(max_new: i64) -> Bundle {
    serde_json::from_value(json!({
        "metadata": {"name": "app", "namespace": NS},
        "spec": {
            "defaultNamespace": "app",
            "rolloutStrategy": {"maxNew": max_new},
            "targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}],
        },
    }))
    .unwrap()
}

fn written(work: &BundleWork<BundleDeployment>) -> BTreeMap<String, (String, String)> {
    work.writes
        .iter()
        .map(|write| work.build(write))
        .map(|bd| {
            (
                bd.metadata.namespace.clone().unwrap_or_default(),
                (
                    bd.spec.staged_deployment_id.clone(),
                    bd.spec.deployment_id.clone(),
                ),
            )
        })
        .collect()
}

#[test]
fn one_plan_creates_what_successive_max_new_passes_create() {
    let state = index(7, &[]);
    let limited = plan_of(&bundle(2), &state).unwrap();
    let unlimited = plan_of(&bundle(100), &state).unwrap();
    assert_eq!(limited.writes.len(), 7);
    assert_eq!(limited.deferred, 0);
    assert_eq!(written(&limited), written(&unlimited));
    // The status is the last pass's: it created the last target.
    assert_eq!(limited.rollout.newly_created, 1);
}

/// A built BundleDeployment is named after its Bundle, in its cluster's namespace, with the labels
/// Fleet puts on it for that cluster.
#[test]
fn a_write_builds_the_bundle_deployment_of_its_cluster() {
    let state = index(3, &[]);
    let mut labelled = bundle(100);
    labelled.metadata.labels = Some(BTreeMap::from([
        ("team".to_string(), "a".to_string()),
        ("objectset.rio.cattle.io/hash".to_string(), "x".to_string()),
    ]));
    let work = plan_of(&labelled, &state).unwrap();
    assert_eq!(work.writes.len(), 3);
    for write in &work.writes {
        let cluster = &work.targets[write.target].0;
        let bd = work.build(write);
        assert_eq!(bd.metadata.name.as_deref(), Some("app"));
        assert_eq!(
            bd.metadata.namespace,
            Some(format!("cluster-{}", cluster.name))
        );
        assert_eq!(
            bd.metadata.labels,
            Some(deployment_labels(
                NS,
                "app",
                labelled.metadata.labels.as_ref().unwrap(),
                cluster,
                &work.manifest_id,
            ))
        );
        assert_eq!(bd.spec.deployment_id, bd.spec.staged_deployment_id);
        assert!(bd.spec.deployment_id.starts_with(&work.manifest_id));
    }
}

/// A leaving cluster is no target: it gets no BundleDeployment (and loses the one it has), and is in
/// no partition's members, which index the plan's targets.
#[test]
fn partition_members_index_the_targets_without_leaving_clusters() {
    let mut state = index(4, &[]);
    let mut leaving = ClusterInfo::new(NS, "c1", [("env", "prod")]);
    leaving.health = Some(ClusterHealth {
        leaving: true,
        ..ClusterHealth::default()
    });
    state.clusters.upsert_cluster(leaving);
    let work = plan_of(&bundle(100), &state).unwrap();
    let targets: Vec<&str> = work.targets.iter().map(|(c, _)| c.name.as_str()).collect();
    assert_eq!(targets, ["c0", "c2", "c3"]);
    let [partition] = work.rollout.partitions.as_slice() else {
        panic!("one partition: {:?}", work.rollout.partitions);
    };
    assert_eq!(partition.members, [0, 1, 2]);
    assert_eq!(work.writes.len(), 3);
}

#[test]
fn labels_match_wants_every_bundle_label_with_the_clusters_own() {
    let cluster = ClusterKey::new(NS, "c1");
    let bundle_labels = deployment_labels(
        NS,
        "app",
        &BTreeMap::from([("team".to_string(), "a".to_string())]),
        &ClusterKey::new("", ""),
        "s-1",
    );
    let mut labels = deployment_labels(
        NS,
        "app",
        &BTreeMap::from([("team".to_string(), "a".to_string())]),
        &cluster,
        "s-1",
    );
    assert!(labels_match(&labels, &bundle_labels, &cluster));
    labels.insert("aaa-other".into(), "x".into());
    labels.insert("zzz-other".into(), "x".into());
    assert!(labels_match(&labels, &bundle_labels, &cluster));
    assert!(!labels_match(
        &labels,
        &bundle_labels,
        &ClusterKey::new(NS, "c2")
    ));
    labels.remove("team");
    assert!(!labels_match(&labels, &bundle_labels, &cluster));
}

/// `spec` without its values and without `valuesHash`: options that differ from the desired ones.
fn built_without_values(spec: &BundleDeploymentSpec) -> BundleDeploymentSpec {
    BundleDeploymentSpec {
        values_hash: String::new(),
        ..spec.clone()
    }
}

#[test]
fn a_desired_spec_matches_the_spec_it_builds_and_no_other() {
    let options: BundleDeploymentOptions = serde_json::from_value(json!({
        "defaultNamespace": "app",
        "serviceAccount": "sa",
        "helm": {"values": {"replicas": 2}},
    }))
    .unwrap();
    let staged: BundleDeploymentOptions = serde_json::from_value(json!({
        "defaultNamespace": "app",
        "correctDrift": {"enabled": true},
    }))
    .unwrap();
    let depends_on = vec![BundleRef {
        name: "db".into(),
        ..BundleRef::default()
    }];
    let desired = DesiredSpec {
        paused: true,
        staged_options: &staged,
        staged_deployment_id: "s-2:b",
        options: &options,
        deployment_id: "s-1:a",
        depends_on: &depends_on,
        helm_chart_options: None,
    };
    let built = desired.to_spec();
    assert!(desired.matches(&built));
    // Each field planning sets, and each it leaves empty, counts.
    let changes: Vec<fn(&mut BundleDeploymentSpec)> = vec![
        |s| s.paused = false,
        |s| s.deployment_id.push('x'),
        |s| s.staged_deployment_id.push('x'),
        |s| s.options.service_account.clear(),
        |s| s.staged_options.default_namespace.clear(),
        |s| s.depends_on.clear(),
        |s| s.correct_drift = None,
        |s| s.oci_contents = true,
        |s| s.helm_chart_options = Some(Default::default()),
        |s| s.downstream_resources_generation = 1,
        |s| s.off_schedule = true,
        |s| s.waiting_for_values = true,
    ];
    for (i, change) in changes.iter().enumerate() {
        let mut spec = built.clone();
        change(&mut spec);
        assert!(!desired.matches(&spec), "change {i} still matches");
    }
    // Stored with its values moved to its options Secret, unknown to a restarted controller: the
    // deploymentIDs stand for the options.
    let mut stored = BundleDeployment::new("app", built.clone());
    stored.spec.values_hash = "values".into();
    for options in [&mut stored.spec.options, &mut stored.spec.staged_options] {
        if let Some(helm) = options.helm.as_mut() {
            helm.values = None;
        }
    }
    assert!(!desired.matches(&built_without_values(&stored.spec)));
    assert!(desired.matches(&stored.spec));
    for change in &changes[..3] {
        let mut spec = stored.spec.clone();
        change(&mut spec);
        assert!(!desired.matches(&spec));
    }
}

#[test]
fn max_new_passes_do_not_count_clusters_without_a_namespace_as_created() {
    let state = index(5, &["c0", "c1"]);
    let work = plan_of(&bundle(1), &state).unwrap();
    // c0 and c1 hold the single creation of every pass, as they would across requeues.
    assert_eq!(work.writes.len(), 0);
    assert_eq!(work.waiting_for_namespace, 1);
    assert_eq!(work.deferred, 4);
    let work = plan_of(&bundle(2), &state).unwrap();
    assert_eq!(work.writes.len(), 0);
    let work = plan_of(&bundle(3), &state).unwrap();
    assert_eq!(work.writes.len(), 3);
    assert_eq!(work.waiting_for_namespace, 2);
    assert_eq!(work.deferred, 0);
}

#[test]
fn a_placed_bundle_continues_past_max_new_in_one_plan_too() {
    let state = index(5, &[]);
    let mut placed = bundle(2);
    placed.spec.placement =
        Some(serde_json::from_value(json!({"type": "PickN", "numberOfClusters": 4})).unwrap());
    let work = plan_of(&placed, &state).unwrap();
    assert_eq!(work.writes.len(), 4);
    assert_eq!(work.deferred, 0);
    assert!(work.placement.is_some());
    // Every write carries its placement's annotations.
    assert!(work.writes.iter().map(|w| work.build(w)).all(|bd| {
        bd.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(placement::POLICY_HASH_ANNOTATION))
    }));
}
