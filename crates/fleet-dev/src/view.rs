//! What dev mode shows: a snapshot of the hub's GitRepos, Bundles and Clusters, rendered as a table (for a
//! terminal, redrawn when it changes) or as one line per object (for logs and pipes, printed when that
//! object's line changes). An agent is shown as not seen when the controller's `Healthy` condition on its
//! Cluster says its heartbeat timed out (dev mode sets that timeout: [`crate::Tuning::not_seen_after`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use fleet_api::{Bundle, BundleDeployment, Cluster, Condition, GitRepo};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::{Api, ListParams};

use fleet_controller::placement::membership::HEALTHY;

use crate::error::{Error, Result};

/// The hub's Fleet objects at one moment.
#[derive(Debug, Clone, Default)]
pub struct FleetState {
    pub gitrepos: Vec<GitRepo>,
    pub bundles: Vec<Bundle>,
    pub clusters: Vec<Cluster>,
    /// Not shown, but what readiness is judged on (see [`crate::ready`]).
    pub deployments: Vec<BundleDeployment>,
}

/// Whether a Cluster's agent checks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSeen {
    /// Never checked in.
    Never,
    /// Checked in `ago` ago; the controller counts the Cluster healthy.
    Seen { ago: Duration },
    /// Last checked in `ago` ago, and the controller's `Healthy` condition says the heartbeat timed out.
    NotSeen { ago: Duration },
}

/// How a Cluster's agent stands at `now`: the age of its last check-in, judged by the controller's
/// `Healthy` condition (false once the check-in is older than the heartbeat timeout).
pub fn agent_seen(cluster: &Cluster, now: Timestamp) -> AgentSeen {
    let Some(status) = cluster.status.as_ref() else {
        return AgentSeen::Never;
    };
    let Some(last) = status.agent.as_ref().and_then(|a| a.last_seen.as_ref()) else {
        return AgentSeen::Never;
    };
    let ms = (now.as_millisecond() - last.0.as_millisecond()).max(0) as u64;
    let ago = Duration::from_millis(ms);
    let timed_out = condition(&status.conditions, HEALTHY).is_some_and(|c| c.status == "False");
    if timed_out {
        AgentSeen::NotSeen { ago }
    } else {
        AgentSeen::Seen { ago }
    }
}

impl FleetState {
    /// Lists the three kinds (and the BundleDeployments) on the hub.
    pub async fn fetch(hub: &kube::Client) -> Result<Self> {
        let params = ListParams::default();
        let gitrepos = Api::<GitRepo>::all(hub.clone())
            .list(&params)
            .await
            .map_err(|e| Error::kube("listing GitRepos", e))?;
        let bundles = Api::<Bundle>::all(hub.clone())
            .list(&params)
            .await
            .map_err(|e| Error::kube("listing Bundles", e))?;
        let clusters = Api::<Cluster>::all(hub.clone())
            .list(&params)
            .await
            .map_err(|e| Error::kube("listing Clusters", e))?;
        let deployments = Api::<BundleDeployment>::all(hub.clone())
            .list(&params)
            .await
            .map_err(|e| Error::kube("listing BundleDeployments", e))?;
        let mut state = FleetState {
            gitrepos: gitrepos.items,
            bundles: bundles.items,
            clusters: clusters.items,
            deployments: deployments.items,
        };
        state.gitrepos.sort_by_key(key);
        state.bundles.sort_by_key(key);
        state.clusters.sort_by_key(key);
        Ok(state)
    }

    /// The table shown on a terminal.
    pub fn table(&self, now: Timestamp) -> String {
        let mut out = String::new();
        let gitrepos: Vec<Vec<String>> = self
            .gitrepos
            .iter()
            .map(|r| vec![key(r), gitrepo_ready(r), short_commit(r), gitrepo_status(r)])
            .collect();
        write_table(
            &mut out,
            &["GITREPO", "CLUSTERS READY", "COMMIT", "STATUS"],
            &gitrepos,
        );
        let bundles: Vec<Vec<String>> = self
            .bundles
            .iter()
            .map(|b| vec![key(b), bundle_ready(b), bundle_state(b)])
            .collect();
        write_table(&mut out, &["BUNDLE", "CLUSTERS READY", "STATE"], &bundles);
        let clusters: Vec<Vec<String>> = self
            .clusters
            .iter()
            .map(|c| {
                vec![
                    key(c),
                    labels(c),
                    cluster_bundles(c),
                    match agent_seen(c, now) {
                        AgentSeen::Never => "never".to_string(),
                        AgentSeen::Seen { ago } => format!("{}s ago", ago.as_secs()),
                        AgentSeen::NotSeen { ago } => {
                            format!("{}s ago (NOT SEEN)", ago.as_secs())
                        }
                    },
                ]
            })
            .collect();
        write_table(
            &mut out,
            &["CLUSTER", "LABELS", "BUNDLES READY", "LAST SEEN"],
            &clusters,
        );
        out
    }

    /// One line per object (keyed by kind and name), free of clock readings so a line changes only when
    /// the object's state does.
    pub fn lines(&self, now: Timestamp) -> BTreeMap<String, String> {
        let mut lines = BTreeMap::new();
        for r in &self.gitrepos {
            let id = format!("gitrepo {}", key(r));
            let line = format!(
                "{id}: {} clusters ready, commit {}, {}",
                gitrepo_ready(r),
                short_commit(r),
                gitrepo_status(r)
            );
            lines.insert(id, line);
        }
        for b in &self.bundles {
            let id = format!("bundle {}", key(b));
            let line = format!(
                "{id}: {} clusters ready, {}",
                bundle_ready(b),
                bundle_state(b)
            );
            lines.insert(id, line);
        }
        for c in &self.clusters {
            let id = format!("cluster {}", key(c));
            let agent = match agent_seen(c, now) {
                AgentSeen::Never => "agent not checked in yet".to_string(),
                AgentSeen::Seen { .. } => "agent seen".to_string(),
                AgentSeen::NotSeen { .. } => format!(
                    "agent NOT SEEN since {}",
                    c.status
                        .as_ref()
                        .and_then(|s| s.agent.as_ref())
                        .and_then(|a| a.last_seen.as_ref())
                        .map(|t| t.0.to_string())
                        .unwrap_or_default()
                ),
            };
            let line = format!(
                "{id} [{}]: {} bundles ready, {agent}",
                labels(c),
                cluster_bundles(c)
            );
            lines.insert(id, line);
        }
        lines
    }
}

fn key<K: ResourceExt>(object: &K) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

fn gitrepo_ready(repo: &GitRepo) -> String {
    let status = repo.status.clone().unwrap_or_default();
    format!(
        "{}/{}",
        status.base.ready_clusters, status.base.desired_ready_clusters
    )
}

fn short_commit(repo: &GitRepo) -> String {
    let commit = repo
        .status
        .as_ref()
        .map(|s| s.commit.as_str())
        .unwrap_or_default();
    if commit.is_empty() {
        "-".to_string()
    } else {
        commit.chars().take(7).collect()
    }
}

/// `Ready`, or the message saying why not (a git or read error first).
pub fn gitrepo_status(repo: &GitRepo) -> String {
    let conditions = repo
        .status
        .as_ref()
        .map(|s| s.base.conditions.as_slice())
        .unwrap_or_default();
    for type_ in ["Stalled", "GitPolling"] {
        if let Some(c) = condition(conditions, type_) {
            let failing = if type_ == "Stalled" {
                c.status == "True"
            } else {
                c.status == "False"
            };
            if failing && !c.message.is_empty() {
                return c.message.clone();
            }
        }
    }
    match condition(conditions, "Ready") {
        Some(c) if c.status == "True" => "Ready".to_string(),
        Some(c) if !c.message.is_empty() => c.message.clone(),
        _ => "waiting".to_string(),
    }
}

fn bundle_ready(bundle: &Bundle) -> String {
    let summary = bundle
        .status
        .as_ref()
        .map(|s| s.summary.clone())
        .unwrap_or_default();
    format!("{}/{}", summary.ready, summary.desired_ready)
}

fn bundle_state(bundle: &Bundle) -> String {
    let status = bundle.status.clone().unwrap_or_default();
    let state = if !status.display.state.is_empty() {
        status.display.state.clone()
    } else if status.summary.desired_ready == 0 {
        "not deployed yet".to_string()
    } else {
        "Ready".to_string()
    };
    match condition(&status.conditions, "Ready") {
        Some(c) if c.status != "True" && !c.message.is_empty() => format!("{state}: {}", c.message),
        _ => state,
    }
}

fn labels(cluster: &Cluster) -> String {
    cluster
        .labels()
        .iter()
        .filter(|(k, _)| !k.contains('/') && k.as_str() != "name")
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn cluster_bundles(cluster: &Cluster) -> String {
    let ready = cluster
        .status
        .as_ref()
        .map(|s| s.display.ready_bundles.clone())
        .unwrap_or_default();
    if ready.is_empty() {
        "-".to_string()
    } else {
        ready
    }
}

fn write_table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<width$}   ");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    if rows.is_empty() {
        out.push_str("(none)\n");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Cluster last seen at `last_seen`, with the controller's `Healthy` condition when `healthy` is set.
    fn cluster(last_seen: Option<&str>, healthy: Option<bool>) -> Cluster {
        let mut status = json!({"display": {"readyBundles": "1/1"}});
        if let Some(seen) = last_seen {
            status["agent"] = json!({"lastSeen": seen});
        }
        if let Some(healthy) = healthy {
            status["conditions"] =
                json!([{"type": HEALTHY, "status": if healthy { "True" } else { "False" }}]);
        }
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "cluster-1", "namespace": "fleet-default",
                "labels": {"env": "dev", "name": "cluster-1"}},
            "spec": {},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn an_agent_is_not_seen_when_the_controller_says_its_heartbeat_timed_out() {
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        assert_eq!(agent_seen(&cluster(None, None), now), AgentSeen::Never);
        assert_eq!(
            agent_seen(&cluster(Some("2026-01-01T00:00:50Z"), Some(true)), now),
            AgentSeen::Seen {
                ago: Duration::from_secs(10)
            }
        );
        // Before the controller has judged, a check-in counts as seen.
        assert_eq!(
            agent_seen(&cluster(Some("2026-01-01T00:00:00Z"), None), now),
            AgentSeen::Seen {
                ago: Duration::from_secs(60)
            }
        );
        assert_eq!(
            agent_seen(&cluster(Some("2026-01-01T00:00:00Z"), Some(false)), now),
            AgentSeen::NotSeen {
                ago: Duration::from_secs(60)
            }
        );
    }

    #[test]
    fn lines_and_table_name_each_object() {
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let state = FleetState {
            clusters: vec![cluster(Some("2026-01-01T00:00:00Z"), Some(false))],
            ..FleetState::default()
        };
        let lines = state.lines(now);
        assert_eq!(
            lines["cluster fleet-default/cluster-1"],
            "cluster fleet-default/cluster-1 [env=dev]: 1/1 bundles ready, agent NOT SEEN since 2026-01-01T00:00:00Z"
        );
        let table = state.table(now);
        assert!(
            table.contains("fleet-default/cluster-1   env=dev   1/1"),
            "{table}"
        );
        assert!(table.contains("60s ago (NOT SEEN)"), "{table}");
    }
}
