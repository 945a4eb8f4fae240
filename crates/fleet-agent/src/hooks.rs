//! Helm hooks among a chart's rendered objects (`helm.sh/hook` annotations), run as Helm runs them:
//! `pre-install`/`pre-upgrade` hooks before the release's objects are applied and `post-install`/
//! `post-upgrade` hooks after, one at a time in `helm.sh/hook-weight` order (then install order by kind, then
//! name). A Job hook must complete and a Pod hook must succeed before the next step; other kinds are done once
//! applied. A hook that fails, or does not finish within the Helm timeout (`helm.timeoutSeconds`, else
//! Helm's 5 minutes), fails the deployment with a message naming it. `helm.sh/hook-delete-policy` is
//! honoured: `before-hook-creation` (the default) replaces a hook left from an earlier run,
//! `hook-succeeded` and `hook-failed` delete it afterwards. Hooks are not part of the release: they are not
//! in the inventory, not monitored and not pruned. Hooks for other events (`test`, `pre-delete`,
//! `post-delete`, `pre-rollback`, `post-rollback`) are not run; they are named in the `Installed`
//! condition's message rather than skipped silently.
//!
//! The runner never blocks the agent: [`Run::advance`] starts or checks the current hook and returns
//! [`Progress::Waiting`] until it finished; the hook's watch event (or the retry tick) advances it again.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kube::api::DeleteParams;
use serde_json::Value;

use crate::apply::{ObjectError, apply_one};
use crate::downstream::Downstream;
use crate::error::is_not_found;
use crate::inventory::object_key;
use crate::order::install_rank;
use crate::render::Desired;

/// Helm's hook annotation.
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";
/// Helm's hook weight annotation.
pub const WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
/// Helm's hook deletion policy annotation.
pub const DELETE_POLICY_ANNOTATION: &str = "helm.sh/hook-delete-policy";
/// Helm's default timeout for hooks.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The release operation hooks run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Install,
    Upgrade,
}

/// Before or after the release's objects are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pre,
    Post,
}

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn events(object: &Value) -> Vec<&str> {
    annotation(object, HOOK_ANNOTATION)
        .map(|hooks| hooks.split(',').map(str::trim).collect())
        .unwrap_or_default()
}

/// Whether an object is a Helm hook of any event.
pub fn is_hook(object: &Value) -> bool {
    annotation(object, HOOK_ANNOTATION).is_some()
}

/// Whether a hook runs at `phase` of `event`.
pub fn runs_at(object: &Value, event: Event, phase: Phase) -> bool {
    let name = match (phase, event) {
        (Phase::Pre, Event::Install) => "pre-install",
        (Phase::Pre, Event::Upgrade) => "pre-upgrade",
        (Phase::Post, Event::Install) => "post-install",
        (Phase::Post, Event::Upgrade) => "post-upgrade",
    };
    events(object).contains(&name)
}

/// The `helm.sh/hook-weight` of an object (0 when absent or not a number).
pub fn weight(object: &Value) -> i64 {
    annotation(object, WEIGHT_ANNOTATION)
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0)
}

/// Whether a hook has a deletion policy; `before-hook-creation` applies when none is given.
pub fn has_delete_policy(object: &Value, policy: &str) -> bool {
    match annotation(object, DELETE_POLICY_ANNOTATION) {
        None => policy == "before-hook-creation",
        Some(policies) => policies.split(',').map(str::trim).any(|p| p == policy),
    }
}

/// Rendered objects sorted out: the release's own objects, the hooks the agent runs, and a description of
/// each hook it does not run.
#[derive(Debug, Default)]
pub struct Split {
    pub release: Vec<Desired>,
    pub hooks: Vec<Desired>,
    pub not_run: Vec<String>,
}

/// Splits a chart's rendered objects.
pub fn split(objects: Vec<Desired>) -> Split {
    let mut split = Split::default();
    for desired in objects {
        let object = &desired.object;
        if !is_hook(object) {
            split.release.push(desired);
        } else if [Event::Install, Event::Upgrade]
            .iter()
            .any(|e| runs_at(object, *e, Phase::Pre) || runs_at(object, *e, Phase::Post))
        {
            split.hooks.push(desired);
        } else {
            let events = annotation(object, HOOK_ANNOTATION).unwrap_or_default();
            split
                .not_run
                .push(format!("{} ({events})", desired.object_ref));
        }
    }
    split
}

/// The hooks of one phase of an event, in the order Helm runs them.
pub fn ordered(hooks: &[Desired], event: Event, phase: Phase) -> Vec<&Desired> {
    let mut selected: Vec<&Desired> = hooks
        .iter()
        .filter(|d| runs_at(&d.object, event, phase))
        .collect();
    selected.sort_by(|a, b| {
        let key = |d: &Desired| (weight(&d.object), install_rank(&d.object_ref.kind));
        key(a)
            .cmp(&key(b))
            .then_with(|| a.object_ref.name.cmp(&b.object_ref.name))
    });
    selected
}

/// Why a hook failed once it ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookFailure {
    /// The Job's `Failed` condition, with its reason and message.
    #[error("{}", format!("job failed: {reason} {message}").trim())]
    JobFailed { reason: String, message: String },
    /// The Pod's phase is `Failed`.
    #[error("pod failed")]
    PodFailed,
    /// The hook did not finish within the Helm timeout.
    #[error("timed out after {seconds}s")]
    TimedOut { seconds: u64 },
}

/// Whether a live hook finished: `Some(Ok)` completed, `Some(Err)` failed with the reason, `None` still
/// running. Jobs and Pods run; every other kind is finished once it exists.
pub fn finished(kind: &str, live: &Value) -> Option<Result<(), HookFailure>> {
    match kind {
        "Job" => {
            let conditions = live.pointer("/status/conditions").and_then(Value::as_array);
            let find = |type_: &str| {
                conditions.into_iter().flatten().find(|c| {
                    c.get("type").and_then(Value::as_str) == Some(type_)
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            };
            if find("Complete").is_some() || find("SuccessCriteriaMet").is_some() {
                Some(Ok(()))
            } else {
                find("Failed").map(|c| {
                    let reason = c.get("reason").and_then(Value::as_str).unwrap_or("Failed");
                    let message = c.get("message").and_then(Value::as_str).unwrap_or_default();
                    Err(HookFailure::JobFailed {
                        reason: reason.to_string(),
                        message: message.to_string(),
                    })
                })
            }
        }
        "Pod" => match live.pointer("/status/phase").and_then(Value::as_str) {
            Some("Succeeded") => Some(Ok(())),
            Some("Failed") => Some(Err(HookFailure::PodFailed)),
            _ => None,
        },
        _ => Some(Ok(())),
    }
}

/// How far a phase's hooks are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Every hook of the phase completed.
    Done,
    /// A hook is running (the message names it).
    Waiting(String),
    /// A hook failed or timed out (the message names it).
    Failed(String),
}

/// How long one hook may run: `helm.timeoutSeconds` when set, else Helm's default.
pub fn timeout(options: &fleet_api::BundleDeploymentOptions) -> Duration {
    options
        .helm
        .as_ref()
        .filter(|helm| helm.timeout_seconds > 0)
        .map_or(DEFAULT_TIMEOUT, |helm| {
            Duration::from_secs(helm.timeout_seconds.unsigned_abs())
        })
}

/// What running hooks needs: where, as whom, which hooks, and how long each may take.
pub struct Context<'a> {
    pub downstream: &'a Downstream,
    pub client: kube::Client,
    pub manager: String,
    pub hooks: &'a [Desired],
    pub timeout: Duration,
}

/// The hooks of one deployment of a BundleDeployment (one deploymentID and force-sync generation).
#[derive(Debug, Clone)]
pub struct Run {
    pub deployment_id: String,
    pub generation: i64,
    pub event: Event,
    completed: BTreeSet<String>,
    started: BTreeMap<String, Instant>,
    failed: Option<String>,
}

impl Run {
    pub fn new(deployment_id: &str, generation: i64, event: Event) -> Self {
        Run {
            deployment_id: deployment_id.to_string(),
            generation,
            event,
            completed: BTreeSet::new(),
            started: BTreeMap::new(),
            failed: None,
        }
    }

    /// Whether this run is for the given deploymentID and force-sync generation.
    pub fn is_for(&self, deployment_id: &str, generation: i64) -> bool {
        self.deployment_id == deployment_id && self.generation == generation
    }

    /// Starts or checks the hooks of `phase` in order until one is still running or failed.
    pub async fn advance(&mut self, context: &Context<'_>, phase: Phase) -> Progress {
        if let Some(message) = &self.failed {
            return Progress::Failed(message.clone());
        }
        for hook in ordered(context.hooks, self.event, phase) {
            let key = object_key(&hook.object_ref);
            if self.completed.contains(&key) {
                continue;
            }
            let step = self.step(context, hook).await;
            match step {
                Progress::Done => {
                    self.completed.insert(key);
                }
                Progress::Waiting(message) => return Progress::Waiting(message),
                Progress::Failed(message) => {
                    self.failed = Some(message.clone());
                    return Progress::Failed(message);
                }
            }
        }
        Progress::Done
    }

    /// One hook: replace a leftover, create it, then wait for it to finish and apply its deletion policy.
    async fn step(&mut self, context: &Context<'_>, hook: &Desired) -> Progress {
        let (downstream, client) = (context.downstream, &context.client);
        let name = format!(
            "Helm hook {} ({})",
            hook.object_ref,
            annotation(&hook.object, HOOK_ANNOTATION).unwrap_or_default()
        );
        let key = object_key(&hook.object_ref);
        let live = match read(downstream, client, hook).await {
            Ok(live) => live,
            Err(reason) => return Progress::Failed(format!("{name}: {reason}")),
        };
        let Some(&started) = self.started.get(&key) else {
            if let Some(live) = &live {
                if live.pointer("/metadata/deletionTimestamp").is_some() {
                    return Progress::Waiting(format!("waiting for the previous {name} to go"));
                }
                if has_delete_policy(&hook.object, "before-hook-creation") {
                    return match delete(downstream, client, hook).await {
                        Ok(()) => Progress::Waiting(format!("replacing the previous {name}")),
                        Err(reason) => Progress::Failed(format!("{name}: {reason}")),
                    };
                }
            }
            if let Err(reason) = apply_one(downstream, client, &context.manager, hook, false).await
            {
                return Progress::Failed(format!("{name}: {reason}"));
            }
            self.started.insert(key, Instant::now());
            return match finished(&hook.object_ref.kind, &Value::Null) {
                Some(_) => Progress::Done,
                None => Progress::Waiting(format!("waiting for {name}")),
            };
        };
        let Some(live) = live else {
            return Progress::Failed(format!("{name}: deleted before it finished"));
        };
        let outcome = match finished(&hook.object_ref.kind, &live) {
            Some(outcome) => outcome,
            None if started.elapsed() >= context.timeout => Err(HookFailure::TimedOut {
                seconds: context.timeout.as_secs(),
            }),
            None => return Progress::Waiting(format!("waiting for {name}")),
        };
        let policy = if outcome.is_ok() {
            "hook-succeeded"
        } else {
            "hook-failed"
        };
        if has_delete_policy(&hook.object, policy)
            && let Err(reason) = delete(downstream, client, hook).await
        {
            tracing::warn!(hook = %hook.object_ref, %reason, "deleting a finished hook");
        }
        match outcome {
            Ok(()) => Progress::Done,
            Err(reason) => Progress::Failed(format!("{name} failed: {reason}")),
        }
    }
}

async fn read(
    downstream: &Downstream,
    client: &kube::Client,
    hook: &Desired,
) -> Result<Option<Value>, ObjectError> {
    let api = downstream
        .api_for(client, &hook.object_ref)
        .await
        .map_err(ObjectError::unresolved)?;
    let live = api
        .get_opt(&hook.object_ref.name)
        .await
        .map_err(ObjectError::refused)?;
    Ok(live.map(|live| serde_json::to_value(live).unwrap_or(Value::Null)))
}

async fn delete(
    downstream: &Downstream,
    client: &kube::Client,
    hook: &Desired,
) -> Result<(), ObjectError> {
    let api = downstream
        .api_for(client, &hook.object_ref)
        .await
        .map_err(ObjectError::unresolved)?;
    match api
        .delete(&hook.object_ref.name, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(err) if is_not_found(&err) => Ok(()),
        Err(err) => Err(ObjectError::refused(err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::ObjectRef;
    use serde_json::json;

    fn hook(kind: &str, name: &str, events: &str, weight: &str) -> Desired {
        Desired {
            object: json!({"kind": kind, "metadata": {"name": name, "annotations":
                {HOOK_ANNOTATION: events, WEIGHT_ANNOTATION: weight}}}),
            object_ref: ObjectRef {
                kind: kind.into(),
                api_version: "v1".into(),
                namespace: "ns".into(),
                name: name.into(),
            },
        }
    }

    #[test]
    fn hooks_are_selected_by_event_and_phase_and_ordered_by_weight_kind_and_name() {
        let hooks = [
            hook("Job", "late", "pre-install,pre-upgrade", "5"),
            hook("Job", "b", "pre-install", "-1"),
            hook("ConfigMap", "z", "pre-install", "-1"),
            hook("Job", "a", "pre-install", "-1"),
            hook("Job", "after", "post-upgrade", "0"),
        ];
        let names = |event, phase| -> Vec<String> {
            ordered(&hooks, event, phase)
                .iter()
                .map(|d| d.object_ref.name.clone())
                .collect()
        };
        assert_eq!(names(Event::Install, Phase::Pre), ["z", "a", "b", "late"]);
        assert_eq!(names(Event::Upgrade, Phase::Pre), ["late"]);
        assert_eq!(names(Event::Upgrade, Phase::Post), ["after"]);
        assert!(names(Event::Install, Phase::Post).is_empty());
        assert_eq!(weight(&hook("Job", "x", "pre-install", "x").object), 0);
    }

    #[test]
    fn split_keeps_hooks_out_of_the_release_and_names_those_not_run() {
        let mut plain = hook("ConfigMap", "plain", "", "0");
        plain.object["metadata"]["annotations"] = json!({});
        let split = split(vec![
            plain,
            hook("Job", "migrate", "pre-upgrade", "0"),
            hook("Pod", "smoke", "test", "0"),
        ]);
        assert_eq!(split.release.len(), 1);
        assert_eq!(split.hooks[0].object_ref.name, "migrate");
        assert_eq!(split.not_run, ["pod.v1 ns/smoke (test)"]);
    }

    #[test]
    fn delete_policy_defaults_to_before_hook_creation() {
        let mut job = hook("Job", "j", "pre-install", "0").object;
        assert!(has_delete_policy(&job, "before-hook-creation"));
        assert!(!has_delete_policy(&job, "hook-succeeded"));
        job["metadata"]["annotations"][DELETE_POLICY_ANNOTATION] =
            json!("hook-succeeded, hook-failed");
        assert!(has_delete_policy(&job, "hook-failed"));
        assert!(!has_delete_policy(&job, "before-hook-creation"));
    }

    #[test]
    fn jobs_and_pods_finish_by_their_status() {
        let job = |type_: &str| {
            json!({"status": {"conditions": [{"type": type_, "status": "True",
            "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}})
        };
        assert_eq!(finished("Job", &json!({})), None);
        assert_eq!(finished("Job", &job("Complete")), Some(Ok(())));
        assert_eq!(
            finished("Job", &job("Failed")),
            Some(Err(HookFailure::JobFailed {
                reason: "BackoffLimitExceeded".into(),
                message: "Job has reached the specified backoff limit".into()
            }))
        );
        assert_eq!(
            finished("Job", &job("Failed"))
                .unwrap()
                .unwrap_err()
                .to_string(),
            "job failed: BackoffLimitExceeded Job has reached the specified backoff limit"
        );
        assert_eq!(
            finished(
                "Job",
                &json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}})
            ),
            Some(Err(HookFailure::JobFailed {
                reason: "Failed".into(),
                message: String::new()
            }))
        );
        assert_eq!(
            finished("Pod", &json!({"status": {"phase": "Running"}})),
            None
        );
        assert_eq!(
            finished("Pod", &json!({"status": {"phase": "Succeeded"}})),
            Some(Ok(()))
        );
        assert_eq!(finished("ConfigMap", &json!({})), Some(Ok(())));
    }
}
