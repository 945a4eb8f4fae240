//! The controller's error policy, one for every reconciler: what a failed reconcile's [`Error`] means
//! ([`Retry`], decided by [`Error::retry`] from the error's kind) and when the object is reconciled again.
//! Like Flux's controllers: an out-of-date copy is retried soon, a failure outside the object (API server,
//! network, a chart source or git remote down) is retried with an exponential backoff per object
//! ([`Backoff`], capped, forgotten after a successful reconcile), and an object whose own input is wrong is
//! stalled: reported on its status as a `Stalled` condition and not retried until it (or an object it
//! references and the controller watches) changes.

pub mod backoff;

use std::time::Duration;

use kube::runtime::controller::Action;

use crate::error::Error;
pub use crate::error::Retry;
pub use backoff::{BACKOFF_MAX, BACKOFF_MIN, Backoff, backoff_delay};

/// How soon a reconcile that met an out-of-date copy of its object runs again.
pub const SOON: Duration = Duration::from_millis(200);
/// The shared error policy: what the controller does after `error` from reconciling `key`.
pub fn policy(error: &Error, key: &str, backoff: &Backoff) -> Action {
    match error.retry() {
        Retry::Soon => Action::requeue(SOON),
        Retry::Backoff => Action::requeue(backoff.failed(key)),
        Retry::Stalled => {
            backoff.stalled(key);
            Action::await_change()
        }
    }
}

/// The condition a stalled object carries (the type GitRepos already use for a commit that cannot be read).
pub const STALLED: &str = crate::status::gitrepo::STALLED;

/// Sets (`message` given) or clears the `Stalled` condition of `object`'s status, keeping its other
/// conditions: the object is read again (the copy the reconcile had does not hold what it wrote) and
/// patched against that version, read again after a conflict. Failures are only logged: the error itself
/// was already logged by the policy.
pub async fn report_stalled<K>(api: kube::Api<K>, object: &K, message: Option<&str>)
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    use kube::ResourceExt;
    let name = object.name_any();
    for _ in 0..3 {
        let current = match api.get_status(&name).await {
            Ok(current) => current,
            Err(error) => {
                tracing::debug!(object = %name, %error, "could not read the object to report Stalled");
                return;
            }
        };
        let Ok(value) = serde_json::to_value(&current) else {
            return;
        };
        let mut conditions = value
            .pointer("/status/conditions")
            .cloned()
            .and_then(|c| serde_json::from_value::<Vec<fleet_api::Condition>>(c).ok())
            .unwrap_or_default();
        let stalled =
            fleet_api::find_condition(&conditions, STALLED).is_some_and(|c| c.status == "True");
        let now = crate::status::conditions::now();
        match message {
            Some(message) => crate::status::conditions::set(
                &mut conditions,
                STALLED,
                true,
                "Error",
                message,
                &now,
            ),
            None if stalled => {
                crate::status::conditions::set(&mut conditions, STALLED, false, "", "", &now)
            }
            None => return,
        }
        let patch = serde_json::json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": {"conditions": conditions},
        });
        match api
            .patch_status(
                &name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => return,
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(error) => {
                tracing::debug!(object = %name, %error, "could not report the Stalled condition");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> Error {
        Error::Kube(kube::Error::Api(Box::new(
            serde_json::from_value(serde_json::json!({
                "status": "Failure", "code": code, "message": "m", "reason": "r",
            }))
            .unwrap(),
        )))
    }

    #[test]
    fn errors_are_classified_by_kind() {
        assert_eq!(api_error(409).retry(), Retry::Soon);
        for code in [500, 503, 429, 403, 404] {
            assert_eq!(api_error(code).retry(), Retry::Backoff, "{code}");
        }
        let unreachable = fleet_git::GitError::Unreachable {
            url: "https://git".into(),
            reason: "connection refused".into(),
        };
        assert_eq!(Error::Git(unreachable).retry(), Retry::Backoff);
        let missing_ref = fleet_git::GitError::RefNotFound {
            url: "https://git".into(),
            reference: "main".into(),
        };
        assert_eq!(Error::Git(missing_ref).retry(), Retry::Stalled);
        assert_eq!(
            Error::invalid("Cluster ns/c", "spec.x is wrong").retry(),
            Retry::Stalled
        );
        assert_eq!(
            Error::waiting("BundleDeployment ns/b", "its options secret does not exist").retry(),
            Retry::Backoff
        );
        assert_eq!(Error::Task("panicked".into()).retry(), Retry::Backoff);
        let source_down = Error::ChartSource(crate::helmop::source::SourceProblem::Resolve(
            "connection refused".into(),
        ));
        assert_eq!(source_down.retry(), Retry::Backoff);
    }

    #[test]
    fn backoff_doubles_per_object_up_to_the_cap_and_resets_on_success() {
        let backoff = Backoff::default();
        let delays: Vec<Duration> = (0..4).map(|_| backoff.failed("helmop/ns/a")).collect();
        assert_eq!(
            delays,
            [1, 2, 4, 8].map(Duration::from_secs).to_vec(),
            "doubling from the first delay"
        );
        // Another object has its own count.
        assert_eq!(backoff.failed("helmop/ns/b"), BACKOFF_MIN);
        for _ in 0..20 {
            backoff.failed("helmop/ns/a");
        }
        assert_eq!(backoff.failed("helmop/ns/a"), BACKOFF_MAX);
        assert_eq!(backoff_delay(u32::MAX), BACKOFF_MAX);
        assert!(!backoff.succeeded("helmop/ns/a"));
        assert_eq!(backoff.failures("helmop/ns/a"), 0);
        assert_eq!(backoff.failed("helmop/ns/a"), BACKOFF_MIN);
        assert_eq!(backoff.failures("helmop/ns/b"), 1);
    }

    #[test]
    fn the_policy_requeues_by_class_and_stalls_without_a_requeue() {
        let backoff = Backoff::default();
        assert_eq!(
            policy(&api_error(409), "k", &backoff),
            Action::requeue(SOON)
        );
        assert_eq!(backoff.failures("k"), 0, "a conflict is not a failure");
        assert_eq!(
            policy(&api_error(503), "k", &backoff),
            Action::requeue(BACKOFF_MIN)
        );
        assert_eq!(
            policy(&api_error(503), "k", &backoff),
            Action::requeue(BACKOFF_MIN * 2)
        );
        assert_eq!(
            policy(&Error::invalid("HelmOp ns/k", "bad"), "k", &backoff),
            Action::await_change()
        );
        assert_eq!(backoff.failures("k"), 0);
        assert!(
            backoff.succeeded("k"),
            "a stalled object's condition is cleared"
        );
        assert!(!backoff.succeeded("k"));
    }
}
