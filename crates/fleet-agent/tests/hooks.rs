//! Helm hooks: pre- and post-install/upgrade hook Jobs run in order around the release's objects and are
//! waited for; a failed or timed-out hook fails the deployment with a message naming it; deletion policies are
//! honoured. No kubelet or Job controller exists here, so the test plays the Job controller by setting each
//! Job's status.

mod common;

use common::*;
use fleet_api::{BundleDeploymentOptions, GenericMap, HelmOptions};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const CHART: &str = "apiVersion: v2\nname: app\nversion: 0.1.0\n";
const VALUES: &str = "version: one\n";
const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: {{ .Values.version | quote }}\n";

fn job(name: &str, hook: &str, weight: i64, policy: Option<&str>) -> String {
    let policy = policy
        .map(|p| format!("\n    helm.sh/hook-delete-policy: {p}"))
        .unwrap_or_default();
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {hook}\n    helm.sh/hook-weight: \"{weight}\"{policy}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n"
    )
}

fn options(values: serde_json::Value, timeout_seconds: i64) -> BundleDeploymentOptions {
    let values: GenericMap = serde_json::from_value(values).unwrap();
    BundleDeploymentOptions {
        helm: Some(HelmOptions {
            values: Some(values),
            timeout_seconds,
            ..Default::default()
        }),
        ..options_in("hooked")
    }
}

/// Sets a Job's status as the Job controller would: `Complete` or `Failed`.
async fn finish(jobs: &Api<Job>, name: &str, condition: &str) {
    let status = json!({"status": {"conditions": [{"type": condition, "status": "True",
        "reason": if condition == "Failed" { "BackoffLimitExceeded" } else { "Completed" }}]}});
    jobs.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn job_exists(jobs: &Api<Job>, name: &str) -> bool {
    jobs.get_opt(name).await.unwrap().is_some()
}

#[tokio::test]
async fn hooks_run_in_order_are_waited_for_and_failures_name_the_hook() {
    let (hub, downstream) = hub_with_agent().await;
    let jobs: Api<Job> = Api::namespaced(downstream.client.clone(), "hooked");
    let config_maps: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "hooked");
    let migrate = job(
        "migrate",
        "pre-install,pre-upgrade",
        5,
        Some("hook-succeeded"),
    );
    let prepare = job("prepare", "pre-install", -1, Some("hook-succeeded"));
    let notify = job("notify", "post-install,post-upgrade", 0, None);
    let files = [
        ("Chart.yaml", CHART),
        ("values.yaml", VALUES),
        ("templates/config.yaml", CONFIG),
        ("templates/migrate.yaml", migrate.as_str()),
        ("templates/prepare.yaml", prepare.as_str()),
        ("templates/notify.yaml", notify.as_str()),
        (
            "templates/test.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: smoke\n  annotations:\n    helm.sh/hook: test\nspec:\n  containers:\n  - name: main\n    image: busybox\n",
        ),
    ];
    let id = publish(&hub.client, "app", &files, options(json!({}), 0), |_| {}).await;

    // Install: the lighter pre-install hook runs first, alone; nothing of the release is applied yet.
    let status = wait_status(&hub.client, "app", "waiting for prepare", |s| {
        condition(s, "Deployed").message.contains("prepare")
    })
    .await;
    assert_eq!(condition(&status, "Deployed").status, "Unknown");
    assert_eq!(status.display.state, "WaitApplied");
    assert!(job_exists(&jobs, "prepare").await);
    assert!(!job_exists(&jobs, "migrate").await, "one hook at a time");
    assert!(config_maps.get_opt("app").await.unwrap().is_none());

    finish(&jobs, "prepare", "Complete").await;
    wait_status(&hub.client, "app", "waiting for migrate", |s| {
        condition(s, "Deployed").message.contains("migrate")
    })
    .await;
    assert!(
        !job_exists(&jobs, "prepare").await,
        "hook-succeeded deletes it"
    );
    assert!(config_maps.get_opt("app").await.unwrap().is_none());

    finish(&jobs, "migrate", "Complete").await;
    let status = wait_status(&hub.client, "app", "waiting for notify", |s| {
        condition(s, "Deployed").message.contains("notify")
    })
    .await;
    assert_ne!(status.applied_deployment_id, id, "post hooks still run");
    let config = config_maps.get("app").await.unwrap();
    assert_eq!(config.data.unwrap()["version"], "one");

    finish(&jobs, "notify", "Complete").await;
    let status = wait_status(&hub.client, "app", "installed", |s| {
        s.applied_deployment_id == id && s.ready
    })
    .await;
    assert_eq!(status.display.state, "Ready");
    assert!(
        job_exists(&jobs, "notify").await,
        "no deletion policy: the hook stays until the next run replaces it"
    );
    let names: Vec<&str> = status
        .resources
        .iter()
        .map(|r| r.object.name.as_str())
        .collect();
    assert_eq!(names, ["app"], "hooks are not release resources");
    assert!(
        condition(&status, "Installed")
            .message
            .contains("pod.v1 hooked/smoke (test)"),
        "hooks not run are named: {}",
        condition(&status, "Installed").message
    );

    // Upgrade: pre-upgrade runs (pre-install does not); its failure fails the deployment, naming the hook,
    // and the release's objects keep their old version.
    let id = publish(
        &hub.client,
        "app",
        &files,
        options(json!({"version": "two"}), 0),
        |_| {},
    )
    .await;
    wait_status(&hub.client, "app", "waiting for migrate again", |s| {
        condition(s, "Deployed").message.contains("migrate")
    })
    .await;
    assert!(!job_exists(&jobs, "prepare").await, "pre-install only");
    finish(&jobs, "migrate", "Failed").await;
    let status = wait_status(&hub.client, "app", "hook failed", |s| {
        condition(s, "Deployed").status == "False"
    })
    .await;
    assert_ne!(status.applied_deployment_id, id);
    assert_eq!(status.display.state, "ErrApplied");
    let message = &condition(&status, "Deployed").message;
    assert!(
        message.starts_with("Helm hook job.batch hooked/migrate (pre-install,pre-upgrade) failed: job failed: BackoffLimitExceeded"),
        "{message}"
    );
    let config = config_maps.get("app").await.unwrap();
    assert_eq!(config.data.unwrap()["version"], "one");
    assert!(
        job_exists(&jobs, "migrate").await,
        "no hook-failed policy: the failed Job is kept for inspection"
    );
}

#[tokio::test]
async fn a_hook_that_does_not_finish_times_out() {
    let (hub, downstream) = hub_with_agent().await;
    let stuck = job("stuck", "pre-install", 0, Some("hook-failed"));
    let files = [
        ("Chart.yaml", CHART),
        ("values.yaml", VALUES),
        ("templates/config.yaml", CONFIG),
        ("templates/stuck.yaml", stuck.as_str()),
    ];
    publish(&hub.client, "slow", &files, options(json!({}), 1), |_| {}).await;
    let status = wait_status(&hub.client, "slow", "timed out", |s| {
        condition(s, "Deployed").status == "False"
    })
    .await;
    assert_eq!(
        condition(&status, "Deployed").message,
        "Helm hook job.batch hooked/stuck (pre-install) failed: timed out after 1s"
    );
    let jobs: Api<Job> = Api::namespaced(downstream.client.clone(), "hooked");
    wait_for("hook-failed deletes the Job", || {
        let jobs = jobs.clone();
        async move { (!job_exists(&jobs, "stuck").await).then_some(()) }
    })
    .await;
    let config_maps: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), "hooked");
    assert!(config_maps.get_opt("app").await.unwrap().is_none());
}
