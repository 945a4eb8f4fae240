//! When dev mode counts as deployed (`--exit-when-ready`): every expected Cluster's agent has checked in,
//! and every GitRepo has read its spec's latest generation, targets at least one cluster, and is Ready on
//! all the clusters it targets; so is each of its Bundles, at the GitRepo's commit and with its latest
//! generation observed, and so is each of their BundleDeployments, labelled with that commit and applied
//! at its deploymentID (the GitRepo's and Bundle's own counts can still describe the previous commit for a
//! moment after a new one was read). Otherwise the reasons, one per object, for a clear timeout message.

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

/// Why the BundleDeployments of a Bundle are not yet applied at `commit` (empty when they are).
fn deployments_waiting(state: &FleetState, namespace: &str, bundle: &str, commit: &str) -> String {
    let mut pending: Vec<String> = state
        .deployments
        .iter()
        .filter(|bd| {
            let labels = bd.labels();
            labels.get(labels::BUNDLE_NAME).map(String::as_str) == Some(bundle)
                && labels.get(labels::BUNDLE_NAMESPACE).map(String::as_str) == Some(namespace)
        })
        .filter(|bd| {
            let status = bd.status.clone().unwrap_or_default();
            bd.labels().get(labels::COMMIT).map(String::as_str) != Some(commit)
                || status.applied_deployment_id != bd.spec.deployment_id
                || !status.ready
        })
        .map(|bd| {
            bd.labels()
                .get(labels::CLUSTER)
                .cloned()
                .unwrap_or_else(|| bd.name_any())
        })
        .collect();
    pending.sort();
    if pending.is_empty() {
        String::new()
    } else {
        format!("not yet applied on {}", pending.join(", "))
    }
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
}
