//! `dependsOn`: a BundleDeployment waits until the BundleDeployments it depends on (by bundle name, or by a
//! label selector over the BundleDeployments in its own namespace) are in one of the accepted states
//! (`Ready` by default). Evaluated against the agent's watch cache: no extra requests.

use fleet_api::{BundleDeployment, BundleState};
use fleet_target::selector::SelectorExt;

/// Label carrying the bundle name on every BundleDeployment.
const BUNDLE_NAME_LABEL: &str = "fleet.cattle.io/bundle-name";

/// Dependencies that are not in an accepted state: their names (sorted), or a note that no bundle matches a
/// selector. Its text is the BundleDeployment's status message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dependent bundle(s) are not ready: [{}]", waiting.join(" "))]
pub struct NotReady {
    pub waiting: Vec<String>,
}

/// `Ok` when every dependency is satisfied, else what it waits for.
pub fn check(bd: &BundleDeployment, all: &[&BundleDeployment]) -> Result<(), NotReady> {
    let mut waiting = Vec::new();
    for dependency in &bd.spec.depends_on {
        let accepted: Vec<BundleState> = if dependency.accepted_states.is_empty() {
            vec![BundleState::Ready]
        } else {
            dependency.accepted_states.clone()
        };
        let selector = dependency.selector.as_ref();
        let matched: Vec<&&BundleDeployment> = all
            .iter()
            .filter(|other| other.metadata.name != bd.metadata.name)
            .filter(|other| {
                let labels = other.metadata.labels.clone().unwrap_or_default();
                let by_name = !dependency.name.is_empty()
                    && (other.metadata.name.as_deref() == Some(dependency.name.as_str())
                        || labels.get(BUNDLE_NAME_LABEL) == Some(&dependency.name));
                let by_selector = selector.as_ref().is_some_and(|s| s.matches(&labels));
                by_name || by_selector
            })
            .collect();
        if matched.is_empty() {
            waiting.push(if dependency.name.is_empty() {
                "no bundle matches the selector".to_string()
            } else {
                dependency.name.clone()
            });
            continue;
        }
        for other in matched {
            let state = other.state();
            if !accepted.contains(&state) {
                waiting.push(other.metadata.name.clone().unwrap_or_default());
            }
        }
    }
    if waiting.is_empty() {
        Ok(())
    } else {
        waiting.sort();
        waiting.dedup();
        Err(NotReady { waiting })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{BundleDeploymentSpec, BundleDeploymentStatus, BundleRef, LabelSelector};
    use std::collections::BTreeMap;

    fn bd(name: &str, labels: &[(&str, &str)], ready: bool) -> BundleDeployment {
        let mut bd = BundleDeployment::new(
            name,
            BundleDeploymentSpec {
                deployment_id: "s-1:a".into(),
                staged_deployment_id: "s-1:a".into(),
                ..Default::default()
            },
        );
        bd.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        bd.status = Some(BundleDeploymentStatus {
            applied_deployment_id: "s-1:a".into(),
            ready,
            non_modified: true,
            ..Default::default()
        });
        bd
    }

    #[test]
    fn waits_for_named_and_selected_bundles() {
        let db = bd("db", &[("tier", "data")], false);
        let cache = bd("cache", &[("tier", "data")], true);
        let mut app = bd("app", &[], false);
        app.spec.depends_on = vec![BundleRef {
            name: "db".into(),
            ..Default::default()
        }];
        let all = [&db, &cache];
        assert_eq!(
            check(&app, &all),
            Err(NotReady {
                waiting: vec!["db".into()]
            })
        );
        assert_eq!(
            check(&app, &all).unwrap_err().to_string(),
            "dependent bundle(s) are not ready: [db]"
        );
        app.spec.depends_on = vec![BundleRef {
            selector: Some(LabelSelector {
                match_labels: BTreeMap::from([("tier".into(), "data".into())]),
                ..Default::default()
            }),
            ..Default::default()
        }];
        assert_eq!(
            check(&app, &all),
            Err(NotReady {
                waiting: vec!["db".into()]
            })
        );
        app.spec.depends_on[0].accepted_states = vec![BundleState::Ready, BundleState::NotReady];
        assert_eq!(check(&app, &all), Ok(()));
        app.spec.depends_on = vec![BundleRef {
            name: "missing".into(),
            ..Default::default()
        }];
        assert_eq!(
            check(&app, &all),
            Err(NotReady {
                waiting: vec!["missing".into()]
            })
        );
    }
}
