//! Summaries of BundleDeployments as Fleet writes them into status: the state of one BundleDeployment
//! (Fleet's `GetDeploymentState`), summaries with the non-ready list capped at 10, the summary state and
//! Fleet's ready message. Pure: the index's tallies ([`super::tally`]) and the status writers
//! ([`crate::status`]) use them.

use fleet_api::{BundleState, BundleSummary, NonReadyResource, find_condition};

use super::stored::StoredDeployment;

pub use super::stored::MAX_NON_READY;

/// The state of one BundleDeployment; `None` (no BundleDeployment yet) is `Pending`.
pub fn deployment_state(bd: Option<&StoredDeployment>) -> BundleState {
    bd.map_or(BundleState::Pending, StoredDeployment::state)
}

/// What a user should read about one BundleDeployment's state.
pub fn deployment_message(bd: Option<&StoredDeployment>, state: &BundleState) -> String {
    let Some(status) = bd.and_then(|bd| bd.status.as_ref()) else {
        return String::new();
    };
    let failing = |kind: &str| {
        find_condition(&status.conditions, kind)
            .filter(|c| c.status == "False" && !c.message.is_empty())
            .map(|c| c.message.clone())
    };
    match state {
        BundleState::ErrApplied => failing("Deployed").unwrap_or_default(),
        BundleState::Modified => status
            .modified_status
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        BundleState::NotReady => status
            .non_ready_status
            .iter()
            .map(|r| {
                format!("{} {}", r.object, r.summary.message.join(", "))
                    .trim()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("; "),
        _ => failing("Ready").unwrap_or_default(),
    }
}

/// Adds one BundleDeployment (named `name` in the list) in `state` to `summary`.
pub fn increment(
    summary: &mut BundleSummary,
    name: impl std::fmt::Display,
    state: &BundleState,
    bd: Option<&StoredDeployment>,
) {
    summary.desired_ready += 1;
    let counter = match state {
        BundleState::Ready => &mut summary.ready,
        BundleState::NotReady => &mut summary.not_ready,
        BundleState::WaitApplied => &mut summary.wait_applied,
        BundleState::ErrApplied => &mut summary.err_applied,
        BundleState::OutOfSync => &mut summary.out_of_sync,
        BundleState::Pending => &mut summary.pending,
        BundleState::Modified => &mut summary.modified,
        BundleState::Other(_) => return,
    };
    *counter += 1;
    if *state != BundleState::Ready && summary.non_ready_resources.len() < MAX_NON_READY {
        summary
            .non_ready_resources
            .push(non_ready_entry(&name.to_string(), state, bd));
    }
}

/// The `nonReadyResources` entry of one BundleDeployment (named `name`) in `state`.
pub fn non_ready_entry(
    name: &str,
    state: &BundleState,
    bd: Option<&StoredDeployment>,
) -> NonReadyResource {
    let status = bd.and_then(|bd| bd.status.as_ref());
    NonReadyResource {
        name: name.to_string(),
        bundle_state: Some(state.clone()),
        message: deployment_message(bd, state),
        modified_status: status
            .map(|s| {
                s.modified_status
                    .iter()
                    .take(MAX_NON_READY)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        non_ready_status: status
            .map(|s| {
                s.non_ready_status
                    .iter()
                    .take(MAX_NON_READY)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The highest-ranked state of a summary's non-ready entries, empty when there are none (everything is
/// Ready, or nothing is desired): Fleet's `summary.GetSummaryState`, the `display.state` of Bundles, Clusters
/// and ClusterGroups.
pub fn summary_state(summary: &BundleSummary) -> String {
    summary
        .non_ready_resources
        .iter()
        .filter_map(|r| r.bundle_state.clone())
        .fold(None::<BundleState>, |acc, s| {
            Some(acc.map_or(s.clone(), |a| a.max_rank(s)))
        })
        .map(|state| state.to_string())
        .unwrap_or_default()
}

/// Fleet's ready message: `State(count) [Kind name: message; …]` per non-ready state, sorted, joined by
/// `; `. Empty when everything is ready.
pub fn ready_message(summary: &BundleSummary, kind: &str) -> String {
    let counts = [
        (BundleState::ErrApplied, summary.err_applied),
        (BundleState::WaitApplied, summary.wait_applied),
        (BundleState::Modified, summary.modified),
        (BundleState::OutOfSync, summary.out_of_sync),
        (BundleState::Pending, summary.pending),
        (BundleState::NotReady, summary.not_ready),
    ];
    let mut messages: Vec<String> = counts
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(state, count)| {
            let names: Vec<String> = summary
                .non_ready_resources
                .iter()
                .filter(|r| r.bundle_state.as_ref() == Some(state))
                .map(|r| {
                    if r.message.is_empty() {
                        format!("{kind} {}", r.name)
                    } else {
                        format!("{kind} {}: {}", r.name, r.message)
                    }
                })
                .collect();
            if names.is_empty() {
                format!("{state}({count})")
            } else {
                format!("{state}({count}) [{}]", names.join("; "))
            }
        })
        .collect();
    messages.sort();
    messages.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{BundleDeployment, BundleDeploymentSpec, BundleDeploymentStatus, Condition};

    fn bd(
        deployed: &str,
        staged: &str,
        applied: &str,
        ready: bool,
        non_modified: bool,
    ) -> StoredDeployment {
        StoredDeployment::unshared(raw_bd(deployed, staged, applied, ready, non_modified))
    }

    fn raw_bd(
        deployed: &str,
        staged: &str,
        applied: &str,
        ready: bool,
        non_modified: bool,
    ) -> BundleDeployment {
        let mut bd = BundleDeployment::new(
            "b",
            BundleDeploymentSpec {
                deployment_id: deployed.into(),
                staged_deployment_id: staged.into(),
                ..Default::default()
            },
        );
        bd.status = Some(BundleDeploymentStatus {
            applied_deployment_id: applied.into(),
            ready,
            non_modified,
            ..Default::default()
        });
        bd
    }

    #[test]
    fn states_follow_fleets_order() {
        assert_eq!(deployment_state(None), BundleState::Pending);
        assert_eq!(
            deployment_state(Some(&bd("a", "a", "", false, false))),
            BundleState::WaitApplied
        );
        let mut failed = raw_bd("a", "a", "", false, false);
        failed.status.as_mut().unwrap().conditions.push(Condition {
            type_: "Deployed".into(),
            status: "False".into(),
            message: "boom".into(),
            ..Default::default()
        });
        let failed = StoredDeployment::unshared(failed);
        assert_eq!(deployment_state(Some(&failed)), BundleState::ErrApplied);
        assert_eq!(
            deployment_message(Some(&failed), &BundleState::ErrApplied),
            "boom"
        );
        assert_eq!(
            deployment_state(Some(&bd("a", "a", "a", false, true))),
            BundleState::NotReady
        );
        assert_eq!(
            deployment_state(Some(&bd("a", "b", "a", true, true))),
            BundleState::OutOfSync
        );
        assert_eq!(
            deployment_state(Some(&bd("a", "a", "a", true, false))),
            BundleState::Modified
        );
        assert_eq!(
            deployment_state(Some(&bd("a", "a", "a", true, true))),
            BundleState::Ready
        );
    }

    #[test]
    fn summary_caps_the_list_and_ranks_states() {
        let mut summary = BundleSummary::default();
        for i in 0..12 {
            increment(
                &mut summary,
                format!("ns/c{i:02}"),
                &BundleState::Pending,
                None,
            );
        }
        increment(&mut summary, "ns/ready", &BundleState::Ready, None);
        assert_eq!(summary.desired_ready, 13);
        assert_eq!(summary.pending, 12);
        assert_eq!(summary.non_ready_resources.len(), MAX_NON_READY);
        assert_eq!(summary_state(&summary), "Pending");
        let wait = bd("a", "a", "", false, false);
        increment(&mut summary, "ns/x", &BundleState::WaitApplied, Some(&wait));
        // The list is full, so the state comes from what it holds, as in Fleet.
        assert_eq!(summary_state(&summary), "Pending");
        assert!(ready_message(&summary, "Cluster").starts_with("Pending(12) [Cluster ns/c00; "));
        assert!(ready_message(&summary, "Cluster").contains("; WaitApplied(1)"));
    }

    #[test]
    fn an_all_ready_summary_has_no_state() {
        // Fleet's GetSummaryState ranks only the non-ready entries: Ready (and nothing desired) is empty.
        let mut summary = BundleSummary::default();
        assert_eq!(summary_state(&summary), "");
        increment(&mut summary, "ns/a", &BundleState::Ready, None);
        assert_eq!(summary.desired_ready, 1);
        assert_eq!(summary_state(&summary), "");
        increment(&mut summary, "ns/b", &BundleState::NotReady, None);
        assert_eq!(summary_state(&summary), "NotReady");
    }
}
