//! Helm hooks among rendered objects (`helm.sh/hook` annotations). Install and upgrade hooks are applied with
//! the release, `pre-*` before every other object and `post-*` after, each group in `helm.sh/hook-weight`
//! order. Limitation, reported in the `Installed` condition's message rather than skipped silently: the agent
//! does not wait for a hook Job to complete before the next phase, and hooks for other events (`test`,
//! `pre-delete`, `post-delete`, `pre-rollback`, `post-rollback`) are not run.

use serde_json::Value;

use crate::render::Desired;

/// Helm's hook annotation.
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";
/// Helm's hook weight annotation.
pub const WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";

/// When an object is applied relative to the release's other objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    Pre,
    Release,
    Post,
}

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The phase of an object, or `None` for a hook the agent does not run.
pub fn phase(object: &Value) -> Option<Phase> {
    let Some(hooks) = annotation(object, HOOK_ANNOTATION) else {
        return Some(Phase::Release);
    };
    let events: Vec<&str> = hooks.split(',').map(str::trim).collect();
    if events
        .iter()
        .any(|e| *e == "pre-install" || *e == "pre-upgrade")
    {
        Some(Phase::Pre)
    } else if events
        .iter()
        .any(|e| *e == "post-install" || *e == "post-upgrade")
    {
        Some(Phase::Post)
    } else {
        None
    }
}

/// The `helm.sh/hook-weight` of an object (0 when absent or not a number).
pub fn weight(object: &Value) -> i64 {
    annotation(object, WEIGHT_ANNOTATION)
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0)
}

/// Splits rendered objects into those the agent applies and a description of each hook it does not run.
pub fn split(objects: Vec<Desired>) -> (Vec<Desired>, Vec<String>) {
    let mut applied = Vec::new();
    let mut not_run = Vec::new();
    for desired in objects {
        match phase(&desired.object) {
            Some(_) => applied.push(desired),
            None => not_run.push(format!(
                "{} ({})",
                desired.object_ref,
                annotation(&desired.object, HOOK_ANNOTATION).unwrap_or_default()
            )),
        }
    }
    (applied, not_run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hook(events: &str, weight: &str) -> Value {
        json!({"metadata": {"annotations": {HOOK_ANNOTATION: events, WEIGHT_ANNOTATION: weight}}})
    }

    #[test]
    fn hooks_are_phased_and_weighted() {
        assert_eq!(phase(&json!({"metadata": {}})), Some(Phase::Release));
        assert_eq!(
            phase(&hook("pre-install,pre-upgrade", "0")),
            Some(Phase::Pre)
        );
        assert_eq!(phase(&hook("post-upgrade", "0")), Some(Phase::Post));
        assert_eq!(phase(&hook("test", "0")), None);
        assert_eq!(phase(&hook("pre-delete", "0")), None);
        assert_eq!(weight(&hook("pre-install", "-5")), -5);
        assert_eq!(weight(&hook("pre-install", "x")), 0);
    }
}
