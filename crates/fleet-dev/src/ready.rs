//! When dev mode counts as deployed (`--exit-when-ready`): every expected Cluster's agent has checked in,
//! and every GitRepo has read its spec's latest generation, targets at least one cluster, and is Ready on
//! all the clusters it targets; so is each of its Bundles, at the GitRepo's commit and with its latest
//! generation observed, and so is each of their BundleDeployments, labelled with that commit, applied
//! at its deploymentID and with no other deploymentID staged (the GitRepo's and Bundle's own counts can
//! still describe the previous commit for a moment after a new one was read: a Bundle's status is written
//! from its BundleDeployments as they were before that reconcile wrote them). A Bundle the repo no longer
//! has must be gone with all its BundleDeployments: deleting a Bundle deletes them, but each stays until its
//! agent has uninstalled what it deployed. Otherwise the reasons, one per object, for a clear timeout message.

use fleet_api::{GitRepo, labels};
use kube::ResourceExt;

use crate::view::FleetState;

/// Whether everything is deployed, or what is still awaited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    Waiting(Vec<String>),
}

/// Judges `state`; `clusters` are the `namespace/name`s of Clusters whose agents must have checked in.
pub fn readiness(state: &FleetState, clusters: &[String]) -> Readiness {
    let mut waiting = Vec::new();
    for expected in clusters {
        let found = state.clusters.iter().find(|c| {
            format!("{}/{}", c.namespace().unwrap_or_default(), c.name_any()) == *expected
        });
        let seen = found
            .and_then(|c| c.status.as_ref())
            .and_then(|s| s.agent.as_ref())
            .is_some_and(|a| a.last_seen.is_some());
        if !seen {
            waiting.push(format!("cluster {expected}: its agent has not checked in"));
        }
    }
    for repo in &state.gitrepos {
        let id = format!(
            "gitrepo {}/{}",
            repo.namespace().unwrap_or_default(),
            repo.name_any()
        );
        let status = repo.status.clone().unwrap_or_default();
        let ready = status
            .base
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .is_some_and(|c| c.status == "True");
        let reason = if status.commit.is_empty() {
            Some("no commit read yet".to_string())
        } else if status.observed_generation != repo.metadata.generation.unwrap_or_default() {
            Some("its latest spec is not read yet".to_string())
        } else if status.base.desired_ready_clusters == 0 {
            Some("targets no cluster".to_string())
        } else if !ready || status.base.ready_clusters < status.base.desired_ready_clusters {
            Some(format!(
                "{}/{} clusters ready: {}",
                status.base.ready_clusters,
                status.base.desired_ready_clusters,
                crate::view::gitrepo_status(repo)
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            waiting.push(format!("{id}: {reason}"));
        } else {
            waiting.extend(bundles_waiting(state, repo, &status.commit));
            waiting.extend(removed_bundles_waiting(state, repo));
        }
    }
    if waiting.is_empty() {
        Readiness::Ready
    } else {
        Readiness::Waiting(waiting)
    }
}

/// Why the Bundles of `repo` are not yet deployed at `commit`, one line each.
fn bundles_waiting(state: &FleetState, repo: &GitRepo, commit: &str) -> Vec<String> {
    let namespace = repo.namespace().unwrap_or_default();
    let name = repo.name_any();
    state
        .bundles
        .iter()
        .filter(|b| {
            b.namespace().as_deref() == Some(namespace.as_str())
                && b.labels().get(labels::REPO_NAME) == Some(&name)
        })
        .filter_map(|bundle| {
            let status = bundle.status.clone().unwrap_or_default();
            let at = bundle
                .labels()
                .get(labels::COMMIT)
                .cloned()
                .unwrap_or_default();
            let reason = if at != commit {
                format!("still at commit {at}")
            } else if status.observed_generation != bundle.metadata.generation.unwrap_or_default() {
                "its latest spec is not rolled out yet".to_string()
            } else if status.summary.desired_ready == 0
                || status.summary.ready < status.summary.desired_ready
            {
                format!(
                    "{}/{} clusters ready",
                    status.summary.ready, status.summary.desired_ready
                )
            } else {
                let deployments =
                    deployments_waiting(state, &namespace, &bundle.name_any(), commit);
                if deployments.is_empty() {
                    return None;
                }
                deployments
            };
            Some(format!(
                "bundle {namespace}/{}: {reason}",
                bundle.name_any()
            ))
        })
        .collect()
}

/// The Bundles of `repo` that are gone while BundleDeployments of theirs remain (still being uninstalled by
/// their agents), one line each.
fn removed_bundles_waiting(state: &FleetState, repo: &GitRepo) -> Vec<String> {
    let namespace = repo.namespace().unwrap_or_default();
    let name = repo.name_any();
    let mut left: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for bd in &state.deployments {
        let labels = bd.labels();
        let of_repo = labels.get(labels::REPO_NAME) == Some(&name)
            && labels.get(labels::BUNDLE_NAMESPACE) == Some(&namespace);
        let Some(bundle) = labels.get(labels::BUNDLE_NAME).filter(|_| of_repo) else {
            continue;
        };
        let exists = state.bundles.iter().any(|b| {
            b.namespace().as_deref() == Some(namespace.as_str()) && b.name_any() == *bundle
        });
        if !exists {
            left.entry(bundle).or_default().push(cluster_of(bd));
        }
    }
    left.into_iter()
        .map(|(bundle, mut clusters)| {
            clusters.sort();
            format!(
                "bundle {namespace}/{bundle}: removed from the repo, still deployed on {}",
                clusters.join(", ")
            )
        })
        .collect()
}

/// The cluster a BundleDeployment is for (its label; its name if unlabelled).
fn cluster_of(bd: &fleet_api::BundleDeployment) -> String {
    bd.labels()
        .get(labels::CLUSTER)
        .cloned()
        .unwrap_or_else(|| bd.name_any())
}

/// Why the BundleDeployments of a Bundle are not yet applied at `commit` (empty when they are). One labelled
/// with `commit` whose new deploymentID is only staged (`stagedDeploymentID`; the rollout holds it back, or
/// the Bundle is paused) still runs the previous commit's.
fn deployments_waiting(state: &FleetState, namespace: &str, bundle: &str, commit: &str) -> String {
    let mut pending: Vec<String> = Vec::new();
    let mut staged: Vec<String> = Vec::new();
    let of_bundle = state.deployments.iter().filter(|bd| {
        let labels = bd.labels();
        labels.get(labels::BUNDLE_NAME).map(String::as_str) == Some(bundle)
            && labels.get(labels::BUNDLE_NAMESPACE).map(String::as_str) == Some(namespace)
    });
    for bd in of_bundle {
        let status = bd.status.clone().unwrap_or_default();
        let cluster = cluster_of(bd);
        let spec = &bd.spec;
        if bd.labels().get(labels::COMMIT).map(String::as_str) != Some(commit)
            || status.applied_deployment_id != spec.deployment_id
            || !status.ready
        {
            pending.push(cluster);
        } else if !spec.staged_deployment_id.is_empty()
            && spec.staged_deployment_id != spec.deployment_id
        {
            staged.push(cluster);
        }
    }
    pending.sort();
    staged.sort();
    let mut reasons = Vec::new();
    if !pending.is_empty() {
        reasons.push(format!("not yet applied on {}", pending.join(", ")));
    }
    if !staged.is_empty() {
        reasons.push(format!(
            "only staged (the rollout holds it back) on {}",
            staged.join(", ")
        ));
    }
    reasons.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repo(status: serde_json::Value) -> fleet_api::GitRepo {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "GitRepo",
            "metadata": {"name": "app", "namespace": "fleet-default", "generation": 1},
            "spec": {"repo": "file:///r"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn a_gitrepo_is_ready_only_on_all_its_clusters() {
        let ready = repo(json!({"commit": "abc", "observedGeneration": 1,
            "readyClusters": 3, "desiredReadyClusters": 3,
            "conditions": [{"type": "Ready", "status": "True"}]}));
        let partly = repo(json!({"commit": "abc", "observedGeneration": 1,
            "readyClusters": 2, "desiredReadyClusters": 3,
            "conditions": [{"type": "Ready", "status": "False", "message": "NotReady(1) [Cluster fleet-default/cluster-3]"}]}));
        let state = |repo| FleetState {
            gitrepos: vec![repo],
            ..FleetState::default()
        };
        assert_eq!(readiness(&state(ready.clone()), &[]), Readiness::Ready);
        let bundle = |commit: &str, ready: i64| -> fleet_api::Bundle {
            serde_json::from_value(json!({
                "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Bundle",
                "metadata": {"name": "app-x", "namespace": "fleet-default", "generation": 2,
                    "labels": {"fleet.cattle.io/repo-name": "app", "fleet.cattle.io/commit": commit}},
                "spec": {},
                "status": {"observedGeneration": 2, "summary": {"ready": ready, "desiredReady": 3}},
            }))
            .unwrap()
        };
        let with_bundle = |b| FleetState {
            gitrepos: vec![ready.clone()],
            bundles: vec![b],
            ..FleetState::default()
        };
        assert_eq!(
            readiness(&with_bundle(bundle("abc", 3)), &[]),
            Readiness::Ready
        );
        assert_eq!(
            readiness(&with_bundle(bundle("old", 3)), &[]),
            Readiness::Waiting(vec![
                "bundle fleet-default/app-x: still at commit old".into()
            ])
        );
        assert_eq!(
            readiness(&with_bundle(bundle("abc", 1)), &[]),
            Readiness::Waiting(vec![
                "bundle fleet-default/app-x: 1/3 clusters ready".into()
            ])
        );
        assert_eq!(
            readiness(&state(partly), &[]),
            Readiness::Waiting(vec![
                "gitrepo fleet-default/app: 2/3 clusters ready: NotReady(1) [Cluster fleet-default/cluster-3]".into()
            ])
        );
        assert_eq!(
            readiness(&state(repo(json!({}))), &["fleet-default/cluster-1".into()]),
            Readiness::Waiting(vec![
                "cluster fleet-default/cluster-1: its agent has not checked in".into(),
                "gitrepo fleet-default/app: no commit read yet".into(),
            ])
        );
    }

    /// A Bundle at the GitRepo's commit whose status still counts its BundleDeployments as they were before
    /// its reconcile wrote them (3/3 ready), with one BundleDeployment per cluster in `deployments`:
    /// (cluster, stagedDeploymentID, deploymentID, appliedDeploymentID), all labelled with the commit and ready.
    fn rolled_out(deployments: &[(&str, &str, &str, &str)]) -> FleetState {
        let ready = repo(json!({"commit": "abc", "observedGeneration": 1,
            "readyClusters": 3, "desiredReadyClusters": 3,
            "conditions": [{"type": "Ready", "status": "True"}]}));
        let bundle: fleet_api::Bundle = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Bundle",
            "metadata": {"name": "app-x", "namespace": "fleet-default", "generation": 2,
                "labels": {"fleet.cattle.io/repo-name": "app", "fleet.cattle.io/commit": "abc"}},
            "spec": {},
            "status": {"observedGeneration": 2, "summary": {"ready": 3, "desiredReady": 3}},
        }))
        .unwrap();
        let deployments = deployments
            .iter()
            .map(|(cluster, staged, deployment, applied)| {
                let mut bd = fleet_api::BundleDeployment::new(
                    "app-x",
                    fleet_api::BundleDeploymentSpec {
                        staged_deployment_id: staged.to_string(),
                        deployment_id: deployment.to_string(),
                        ..Default::default()
                    },
                );
                bd.metadata.namespace = Some(format!("cluster-{cluster}"));
                bd.metadata.labels = Some(
                    [
                        (labels::BUNDLE_NAME, "app-x"),
                        (labels::BUNDLE_NAMESPACE, "fleet-default"),
                        (labels::COMMIT, "abc"),
                        (labels::CLUSTER, cluster),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                );
                bd.status = Some(fleet_api::BundleDeploymentStatus {
                    applied_deployment_id: applied.to_string(),
                    ready: true,
                    ..Default::default()
                });
                bd
            })
            .collect();
        FleetState {
            gitrepos: vec![ready],
            bundles: vec![bundle],
            deployments,
            ..FleetState::default()
        }
    }

    #[test]
    fn a_bundle_removed_from_the_repo_is_waited_for_until_its_deployments_are_gone() {
        let mut state = rolled_out(&[("c1", "m:2", "m:2", "m:2")]);
        assert_eq!(readiness(&state, &[]), Readiness::Ready);
        // The repo's new commit dropped bundle app-old: its Bundle is gone, but c2's and c1's agents have not
        // uninstalled it yet. A BundleDeployment of another repo's gone Bundle is not this repo's concern.
        for (bundle, repo, cluster) in [
            ("app-old", "app", "c2"),
            ("app-old", "app", "c1"),
            ("other-x", "other", "c1"),
        ] {
            let mut bd = state.deployments[0].clone();
            bd.metadata.name = Some(format!("{bundle}-{cluster}"));
            let labels = bd.metadata.labels.get_or_insert_default();
            labels.insert(labels::BUNDLE_NAME.into(), bundle.into());
            labels.insert(labels::REPO_NAME.into(), repo.into());
            labels.insert(labels::CLUSTER.into(), cluster.into());
            state.deployments.push(bd);
        }
        assert_eq!(
            readiness(&state, &[]),
            Readiness::Waiting(vec![
                "bundle fleet-default/app-old: removed from the repo, still deployed on c1, c2"
                    .into()
            ])
        );
        state.deployments.retain(|bd| {
            bd.labels().get(labels::BUNDLE_NAME).map(String::as_str) != Some("app-old")
        });
        assert_eq!(readiness(&state, &[]), Readiness::Ready);
    }

    #[test]
    fn a_deployment_id_only_staged_by_the_rollout_is_not_deployed_yet() {
        assert_eq!(
            readiness(
                &rolled_out(&[("c1", "m:2", "m:2", "m:2"), ("c2", "m:2", "m:2", "m:2")]),
                &[]
            ),
            Readiness::Ready
        );
        // A BundleDeployment written before staging existed (no stagedDeploymentID) is judged as before.
        assert_eq!(
            readiness(&rolled_out(&[("c1", "", "m:2", "m:2")]), &[]),
            Readiness::Ready
        );
        // c2 is labelled with the new commit, applied and ready, and its Bundle counts it ready: but it still
        // runs the previous deploymentID while the new one is only staged.
        assert_eq!(
            readiness(
                &rolled_out(&[("c1", "m:2", "m:2", "m:2"), ("c2", "m:2", "m:1", "m:1")]),
                &[]
            ),
            Readiness::Waiting(vec![
                "bundle fleet-default/app-x: only staged (the rollout holds it back) on c2".into()
            ])
        );
        // With one not yet applied (c1) as well, both are named.
        assert_eq!(
            readiness(
                &rolled_out(&[
                    ("c3", "m:2", "m:1", "m:1"),
                    ("c1", "m:2", "m:2", "m:1"),
                    ("c2", "m:2", "m:1", "m:1"),
                ]),
                &[]
            ),
            Readiness::Waiting(vec![
                "bundle fleet-default/app-x: not yet applied on c1; only staged (the rollout holds it back) on c2, c3"
                    .into()
            ])
        );
    }
}
