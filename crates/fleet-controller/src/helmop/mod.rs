//! The HelmOp reconciler (Fleet 0.13's HelmOps): a HelmOp becomes one Bundle of its name
//! ([`bundle`]) that names the chart (repository, chart, concrete version) instead of holding its files,
//! as Fleet's HelmOp controller does; the agents download the chart themselves. The version constraint is
//! resolved against the repository index or the OCI tags ([`source`]) when the chart reference changes and
//! every `pollingInterval` (no polling without one, as in Fleet), and the Bundle moves to a newer version
//! that satisfies it. The `helmSecretName` credentials reach the agents as Secret copies in their cluster
//! namespaces ([`access`]), never through the Bundle or status. A chart source that cannot be reached keeps
//! the last good Bundle and reports why (`Accepted` or `Polled` False, and `Ready`). Status is the GitRepo
//! aggregation over the Bundle's BundleDeployments ([`crate::status::gitrepo::aggregate_base`]). A
//! finalizer deletes the Bundle when the HelmOp is deleted.

pub mod access;
pub mod bundle;
pub mod source;
pub mod state;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use fleet_api::{
    Bundle, BundleDeployment, HELMOP_ACCEPTED, HELMOP_LABEL, HELMOP_POLLED, HelmOp, HelmOpStatus,
    labels,
};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};

use crate::context::{Context, FIELD_MANAGER, lock};
use crate::delete::delete_labelled;
use crate::error::{Error, Result};
use crate::finalize::with_finalizer;
use crate::gitrepo::poll;
use crate::index::StoredDeployment;
use crate::index::tally::RepoTally;
use crate::status::{apply_status, conditions};

/// Fleet's finalizer on HelmOps.
pub const FINALIZER: &str = "fleet.cattle.io/helmop-finalizer";

pub use state::State;

/// Reconciles one HelmOp.
pub fn reconcile(helmop: Arc<HelmOp>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(helmop, ctx).boxed()
}

async fn reconcile_inner(helmop: Arc<HelmOp>, ctx: Arc<Context>) -> Result<Action> {
    with_finalizer(&ctx, FINALIZER, helmop, |event, ctx| async move {
        match event {
            Event::Apply(helmop) => apply(&helmop, &ctx).await,
            Event::Cleanup(helmop) => cleanup(&helmop, &ctx).await,
        }
    })
    .await
}

/// Sends a reconcile of the HelmOp a labelled Bundle or BundleDeployment belongs to whenever one changes
/// (its status is the HelmOp's), until the watches end.
pub async fn watch(
    client: kube::Client,
    wake: tokio::sync::mpsc::UnboundedSender<ObjectRef<HelmOp>>,
) {
    let config = watcher::Config::default().labels(HELMOP_LABEL);
    let owner = |labels: &BTreeMap<String, String>, namespace: Option<&str>| {
        let name = labels.get(HELMOP_LABEL)?;
        let namespace = labels
            .get(labels::BUNDLE_NAMESPACE)
            .map(String::as_str)
            .or(namespace)?;
        Some(ObjectRef::<HelmOp>::new(name).within(namespace))
    };
    let deployments = watcher(Api::<BundleDeployment>::all(client.clone()), config.clone())
        .default_backoff()
        .touched_objects()
        .filter_map(|bd| async move { bd.ok().and_then(|bd| owner(bd.labels(), None)) });
    let bundles = watcher(Api::<Bundle>::all(client), config)
        .default_backoff()
        .touched_objects()
        .filter_map(|b| async move {
            b.ok()
                .and_then(|b| owner(b.labels(), b.namespace().as_deref()))
        });
    let mut both = futures::stream::select(deployments.boxed(), bundles.boxed());
    while let Some(reference) = both.next().await {
        if wake.send(reference).is_err() {
            return;
        }
    }
}

/// The chart reference a version was resolved for: a change resolves again at once.
fn source_key(helmop: &HelmOp) -> String {
    let helm = helmop.spec.bundle.options.helm.clone().unwrap_or_default();
    format!(
        "{}\n{}\n{}\n{}\n{}",
        helm.repo,
        helm.chart,
        helm.version,
        helmop.spec.helm_secret_name,
        helmop.spec.insecure_skip_tls_verify
    )
}

async fn apply(helmop: &HelmOp, ctx: &Context) -> Result<Action> {
    let namespace = helmop.namespace().unwrap_or_default();
    let name = helmop.name_any();
    let uid = helmop.meta().uid.clone().unwrap_or_default();
    let previous = helmop.status.clone().unwrap_or_default();
    let mut status = previous.clone();
    let now = Timestamp::now();
    let now_text = conditions::now();
    let bundles: Api<Bundle> = Api::namespaced(ctx.client.clone(), &namespace);
    let mut existing = bundles.get_opt(&name).await?;
    let polling = source::polling_interval(helmop);
    // A chart source failure, reported on the status and then returned for the shared backoff.
    let mut failure = None;

    let accepted = match bundle::validate(helmop) {
        Err(message) => Err(message),
        Ok(())
            if existing
                .as_ref()
                .is_some_and(|b| b.spec.helm_op_options.is_none()) =>
        {
            Err(format!(
                "a non-helmops bundle already exists with name {name}; aborting"
            ))
        }
        Ok(()) => Ok(()),
    };
    // An invalid spec (or a Bundle of its name that is not its own) stalls the HelmOp: reported as Stalled
    // (besides Fleet's Accepted) and not tried again, polling included, until the HelmOp changes.
    let stalled = accepted.is_err();
    match accepted {
        Err(message) => {
            ctx.events
                .publish(helmop, true, "FailedToApply", message.clone());
            for type_ in [HELMOP_ACCEPTED, crate::retry::STALLED] {
                let failing = type_ == crate::retry::STALLED;
                conditions::set(
                    &mut status.base.conditions,
                    type_,
                    failing,
                    "Error",
                    &message,
                    &now_text,
                );
            }
            existing = existing.filter(|b| b.spec.helm_op_options.is_some());
        }
        Ok(()) => {
            if fleet_api::find_condition(&status.base.conditions, crate::retry::STALLED).is_some() {
                conditions::set(
                    &mut status.base.conditions,
                    crate::retry::STALLED,
                    false,
                    "",
                    "",
                    &now_text,
                );
            }
            let key = source_key(helmop);
            let known = lock(&ctx.helmops.resolved)
                .get(&uid)
                .filter(|(k, _)| *k == key)
                .map(|(_, version)| version.clone());
            let due = polling.is_some_and(|interval| {
                poll::is_due(status.last_polling_time.as_ref(), interval, now)
            });
            let version = match known {
                Some(version) if !due && existing.is_some() => Some(version),
                _ => {
                    let resolved = source::resolve(ctx, helmop).await?;
                    if polling.is_some() {
                        status.last_polling_time = Some(Time(now));
                    }
                    match resolved {
                        Ok(version) => {
                            if version != previous.version && !previous.version.is_empty() {
                                ctx.events.publish(
                                    helmop,
                                    false,
                                    "GotNewChartVersion",
                                    version.clone(),
                                );
                            }
                            lock(&ctx.helmops.resolved).insert(uid.clone(), (key, version.clone()));
                            if polling.is_some() {
                                conditions::set(
                                    &mut status.base.conditions,
                                    HELMOP_POLLED,
                                    true,
                                    "",
                                    "",
                                    &now_text,
                                );
                            }
                            Some(version)
                        }
                        Err(problem) => {
                            let message = problem.to_string();
                            // A poll that fails is a Polled error; a chart reference that cannot be
                            // resolved at all is not accepted. Either way the last Bundle stays.
                            let condition = if polling.is_some() && existing.is_some() {
                                HELMOP_POLLED
                            } else {
                                HELMOP_ACCEPTED
                            };
                            let known_error = status
                                .base
                                .conditions
                                .iter()
                                .any(|c| c.type_ == condition && c.message == message);
                            if !known_error {
                                ctx.events.publish(
                                    helmop,
                                    true,
                                    "FailedToGetNewChartVersion",
                                    message.clone(),
                                );
                            }
                            conditions::set(
                                &mut status.base.conditions,
                                condition,
                                false,
                                "Error",
                                &message,
                                &now_text,
                            );
                            failure = Some(Error::ChartSource(problem));
                            None
                        }
                    }
                }
            };
            if let Some(version) = version {
                let desired = bundle::build(helmop, &version);
                // Reconciles woken by BundleDeployment status changes find the Bundle as it should be
                // (the stored spec has the CRD's one default).
                let mut stored_form = desired.spec.clone();
                if stored_form.target_customization_mode.is_empty() {
                    stored_form.target_customization_mode =
                        fleet_api::TARGET_CUSTOMIZATION_FIRST_MATCH.to_string();
                }
                let current = existing.as_ref().is_some_and(|b| {
                    (b.spec == desired.spec || b.spec == stored_form)
                        && desired
                            .labels()
                            .iter()
                            .all(|(k, v)| b.labels().get(k) == Some(v))
                });
                if !current {
                    let written = bundles
                        .patch(
                            &name,
                            &PatchParams::apply(FIELD_MANAGER).force(),
                            &Patch::Apply(&desired),
                        )
                        .await?;
                    existing = Some(written);
                }
                status.version = version;
                conditions::set(
                    &mut status.base.conditions,
                    HELMOP_ACCEPTED,
                    true,
                    "",
                    "",
                    &now_text,
                );
            }
        }
    }

    let deployments = Api::<BundleDeployment>::all(ctx.client.clone())
        .list(&ListParams::default().labels(&format!(
            "{HELMOP_LABEL}={name},{}={namespace}",
            labels::BUNDLE_NAMESPACE
        )))
        .await?
        .items;
    if !helmop.spec.helm_secret_name.is_empty() && existing.is_some() {
        let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
        if let Some(secret) = secrets.get_opt(&helmop.spec.helm_secret_name).await? {
            access::ensure(ctx, &ctx.helmops.copies, &secret, &deployments).await?;
        }
    }
    aggregate(&mut status, existing.as_ref(), deployments, &now_text);
    if status != previous {
        let api: Api<HelmOp> = Api::namespaced(ctx.client.clone(), &namespace);
        apply_status(&api, &name, &status).await?;
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    let next_poll = polling.filter(|_| !stalled).map(|interval| {
        poll::remaining(
            status.last_polling_time.as_ref(),
            interval,
            Timestamp::now(),
        )
        .max(Duration::from_millis(100))
    });
    Ok(match next_poll {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

/// The HelmOp's status from its Bundle's BundleDeployments and the Bundle's own error, with the HelmOp's
/// `Accepted` and `Polled` failures reported first.
fn aggregate(
    status: &mut HelmOpStatus,
    bundle: Option<&Bundle>,
    deployments: Vec<BundleDeployment>,
    now: &str,
) {
    let mut tally = RepoTally::default();
    for bd in deployments {
        let name = format!("{}/{}", bd.namespace().unwrap_or_default(), bd.name_any());
        let cluster = fleet_target::model::ClusterKey::new(
            bd.labels()
                .get(labels::CLUSTER_NAMESPACE)
                .cloned()
                .unwrap_or_default(),
            bd.labels()
                .get(labels::CLUSTER)
                .cloned()
                .unwrap_or_default(),
        );
        let stored = Arc::new(StoredDeployment::unshared(bd));
        let state = stored.state();
        tally.add(&name, &cluster, &state, &stored);
    }
    let errors: Option<BTreeMap<String, String>> = bundle.and_then(|b| {
        crate::index::bundle_error(b).map(|error| BTreeMap::from([(b.name_any(), error)]))
    });
    crate::status::gitrepo::aggregate_base(
        &mut status.base,
        Some(&tally),
        errors.as_ref(),
        &[(HELMOP_ACCEPTED, "False"), (HELMOP_POLLED, "False")],
        false,
        now,
    );
}

/// Deletes the HelmOp's Bundle (the Bundle's finalizer removes its BundleDeployments, whose Secret copies
/// go with them).
async fn cleanup(helmop: &HelmOp, ctx: &Context) -> Result<Action> {
    let namespace = helmop.namespace().unwrap_or_default();
    let bundles: Api<Bundle> = Api::namespaced(ctx.client.clone(), &namespace);
    delete_labelled(&bundles, &format!("{HELMOP_LABEL}={}", helmop.name_any())).await?;
    if let Some(uid) = &helmop.meta().uid {
        lock(&ctx.helmops.resolved).remove(uid);
    }
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(cluster: &str, ready: bool) -> BundleDeployment {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "BundleDeployment",
            "metadata": {"name": "web", "namespace": format!("cluster-{cluster}"),
                         "labels": {labels::CLUSTER_NAMESPACE: "fleet-default", labels::CLUSTER: cluster}},
            "spec": {"deploymentID": "s-1:a", "stagedDeploymentID": "s-1:a"},
            "status": {"appliedDeploymentID": "s-1:a", "ready": ready, "nonModified": true,
                       "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]},
        }))
        .unwrap()
    }

    /// The HelmOp's poll ends with `outcome` at `time`, its one BundleDeployment Ready: the Ready condition's
    /// status and message.
    fn polled(
        status: &mut HelmOpStatus,
        outcome: Result<(), &str>,
        time: &str,
    ) -> (String, String) {
        let (ok, reason, message) = match outcome {
            Ok(()) => (true, "", ""),
            Err(message) => (false, "Error", message),
        };
        conditions::set(
            &mut status.base.conditions,
            HELMOP_POLLED,
            ok,
            reason,
            message,
            time,
        );
        aggregate(status, None, vec![deployment("c1", true)], time);
        let ready = fleet_api::find_condition(&status.base.conditions, "Ready").unwrap();
        (ready.status.clone(), ready.message.clone())
    }

    #[test]
    fn status_is_the_gitrepo_aggregation_with_the_helmops_own_failures_first() {
        let mut status = HelmOpStatus::default();
        aggregate(
            &mut status,
            None,
            vec![deployment("c1", true), deployment("c2", false)],
            "t1",
        );
        assert_eq!(status.base.display.ready_bundle_deployments, "1/2");
        assert_eq!(
            (
                status.base.ready_clusters,
                status.base.desired_ready_clusters
            ),
            (1, 2)
        );
        let ready = fleet_api::find_condition(&status.base.conditions, "Ready").unwrap();
        assert_eq!(ready.status, "False");
        assert!(
            !ready.message.contains("could not get"),
            "{}",
            ready.message
        );

        assert_eq!(
            polled(
                &mut status,
                Err("could not get a chart version: down"),
                "t2"
            ),
            ("False".into(), "could not get a chart version: down".into())
        );
        // As on GitRepos (Fleet's display), the source's own error is on the Ready condition, not the display,
        // which speaks of BundleDeployments only; and a HelmOp has no git job to show GitUpdating.
        assert!(!status.base.display.error);
        assert_eq!(status.base.display.state, "");

        assert_eq!(
            polled(&mut status, Ok(()), "t3"),
            ("True".into(), String::new())
        );
        assert_eq!(status.base.display.ready_bundle_deployments, "1/1");
    }
}
