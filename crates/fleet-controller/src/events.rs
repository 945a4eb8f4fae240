//! Kubernetes Events (`events.k8s.io/v1`, through kube's `Recorder`) on GitRepos and Bundles: errors
//! (git polling, reading a commit, targeting) and state transitions, each emitted once when the status
//! that carries it changes. Publishing runs in the background, so a slow or failing event write never
//! holds up a reconcile; a failure is only logged.

use fleet_api::Condition;
use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// The `reportingController` of our events.
pub const REPORTER: &str = "fleet-controller";

/// Publishes events for the controller.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    pub fn new(client: kube::Client) -> Self {
        let reporter = Reporter {
            controller: REPORTER.to_string(),
            instance: std::env::var("HOSTNAME").ok(),
        };
        Events {
            recorder: Recorder::new(client, reporter),
        }
    }

    /// Publishes one event about `object` (in the background).
    pub fn publish<K: Resource<DynamicType = ()>>(
        &self,
        object: &K,
        warning: bool,
        reason: &str,
        note: String,
    ) {
        let reference = object.object_ref(&());
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.to_string(),
            note: Some(truncate(note)),
            action: "Reconcile".to_string(),
            secondary: None,
        };
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            if let Err(err) = recorder.publish(&event, &reference).await {
                tracing::debug!(error = %err, reason = %event.reason, "publishing an event failed");
            }
        });
    }
}

/// The transitions worth an event between two lists of conditions: `(warning, reason, note)` for each
/// condition in `watched` whose status or message changed. `bad` is the status that means failure.
pub fn condition_changes(
    before: &[Condition],
    after: &[Condition],
    watched: &[(&str, &str, &str)],
) -> Vec<(bool, String, String)> {
    let find = |list: &[Condition], type_: &str| {
        list.iter()
            .find(|c| c.type_ == type_)
            .map(|c| (c.status.clone(), c.message.clone()))
    };
    let mut changes = Vec::new();
    for (type_, bad, reason) in watched {
        let (old, new) = (find(before, type_), find(after, type_));
        if old == new {
            continue;
        }
        let Some((status, message)) = new else {
            continue;
        };
        let failing = status == *bad;
        if failing {
            changes.push((true, format!("{reason}Failed"), message));
        } else if old.is_some_and(|(s, _)| s == *bad) {
            changes.push((false, format!("{reason}Recovered"), message));
        }
    }
    changes
}

/// The note of a state change, `from → to`. A display state becomes empty when everything is Ready (as
/// in Fleet), which the note calls Ready.
pub fn state_change(from: &str, to: &str) -> Option<String> {
    if to.is_empty() {
        return (!from.is_empty()).then(|| format!("state {from} → Ready"));
    }
    (from != to).then(|| {
        if from.is_empty() {
            format!("state {to}")
        } else {
            format!("state {from} → {to}")
        }
    })
}

/// Events notes are limited to 1 kB.
fn truncate(mut note: String) -> String {
    const MAX: usize = 1000;
    if note.len() > MAX {
        let mut end = MAX;
        while !note.is_char_boundary(end) {
            end -= 1;
        }
        note.truncate(end);
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str, message: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            message: message.into(),
            ..Condition::default()
        }
    }

    #[test]
    fn failures_and_recoveries_become_events_once() {
        let watched = [("GitPolling", "False", "GitPolling")];
        let ok = [condition("GitPolling", "True", "")];
        let failing = [condition("GitPolling", "False", "authentication failed")];
        assert_eq!(
            condition_changes(&ok, &failing, &watched),
            [(
                true,
                "GitPollingFailed".to_string(),
                "authentication failed".to_string()
            )]
        );
        assert!(condition_changes(&failing, &failing, &watched).is_empty());
        assert_eq!(
            condition_changes(&failing, &ok, &watched)[0].1,
            "GitPollingRecovered"
        );
        assert!(condition_changes(&[], &ok, &watched).is_empty());
        assert_eq!(state_change("", "Ready").unwrap(), "state Ready");
        assert_eq!(
            state_change("NotReady", "Ready").unwrap(),
            "state NotReady → Ready"
        );
        assert_eq!(state_change("Ready", "Ready"), None);
        assert_eq!(
            state_change("NotReady", "").unwrap(),
            "state NotReady → Ready"
        );
        assert_eq!(state_change("", ""), None);
        assert_eq!(truncate("é".repeat(600)).len(), 1000);
    }
}
