//! HelmOps end to end in dev mode, against real chart servers (the HTTPS chart repository with basic auth
//! and a private CA, and `docker-registry` filled by the real `helm push`, shared with the chart source
//! tests): a HelmOp deploys its chart through the controller (version resolved, Bundle written) and the
//! agents (which download the chart themselves with the copied credentials); a new version that satisfies
//! the constraint is deployed after a poll; a source that is down keeps the last deployment and says why;
//! wrong credentials are a clear error; the password appears nowhere; status and printer columns are
//! Fleet's; deleting the HelmOp removes what it deployed.

mod support;

#[path = "../../fleet-chart-source/tests/servers/mod.rs"]
mod servers;

use std::process::Command;

use fleet_api::{Bundle, BundleDeployment, HELMOP_LABEL, HelmOp};
use fleet_dev::Dev;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use servers::{ChartRepo, PASSWORD, Registry, USER, serve_versions};
use support::*;

async fn start(clusters: usize) -> (Dev, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let dev = dev_mode(clusters, Vec::new(), state.path()).await;
    (dev, state)
}

async fn create_helmop(dev: &Dev, name: &str, spec: Value) {
    let helmop: HelmOp = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "HelmOp",
        "metadata": {"name": name, "namespace": WORKSPACE},
        "spec": spec,
    }))
    .unwrap();
    helmops(dev)
        .create(&PostParams::default(), &helmop)
        .await
        .unwrap();
}

fn helmops(dev: &Dev) -> Api<HelmOp> {
    Api::namespaced(dev.hub_client(), WORKSPACE)
}

async fn helmop(dev: &Dev, name: &str) -> HelmOp {
    helmops(dev).get(name).await.unwrap()
}

fn condition(helmop: &HelmOp, type_: &str) -> Option<(String, String)> {
    helmop
        .status
        .as_ref()?
        .base
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.message.clone()))
}

/// The label `chart: <name>-<version>` the test chart puts on its ConfigMap `<release>-<chart>`.
async fn chart_label(dev: &Dev, cluster: &str, name: &str) -> Option<String> {
    configmap(dev, cluster, "apps", name)
        .await
        .and_then(|cm| cm.metadata.labels.unwrap_or_default().get("chart").cloned())
}

/// Everything on the hub a password could leak into: the HelmOps, Bundles and BundleDeployments (specs and
/// statuses) and the Events.
async fn assert_no_password_on_hub(dev: &Dev) {
    let client = dev.hub_client();
    let mut texts = Vec::new();
    for op in helmops(dev).list(&ListParams::default()).await.unwrap() {
        texts.push(serde_json::to_string(&op).unwrap());
    }
    for bundle in Api::<Bundle>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        texts.push(serde_json::to_string(&bundle).unwrap());
    }
    for bd in Api::<BundleDeployment>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        texts.push(serde_json::to_string(&bd).unwrap());
    }
    for event in Api::<Event>::all(client)
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        texts.push(serde_json::to_string(&event).unwrap());
    }
    assert!(texts.len() > 3);
    for text in texts {
        assert!(
            !text.contains(PASSWORD),
            "the password shows on the hub: {text}"
        );
    }
}

fn kubectl_get_helmops(dev: &Dev) -> String {
    let tools = servers::repo_root().join(".tools/bin");
    let output = Command::new(tools.join("kubectl"))
        .arg("--kubeconfig")
        .arg(dev.hub_kubeconfig())
        .args(["get", "helmops", "-n", WORKSPACE])
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn helmop_from_an_https_repository_deploys_polls_and_survives_a_source_outage() {
    let home = tempfile::tempdir().unwrap();
    let served = home.path().join("served");
    serve_versions(home.path(), "app", &["1.0.0"], &served);
    let repo = ChartRepo::start(&served);
    let (dev, _state) = start(2).await;
    create_secret(
        &dev,
        "repo-creds",
        None,
        json!({"username": USER, "password": PASSWORD, "cacerts": repo.pki.ca}),
    )
    .await;
    create_helmop(
        &dev,
        "web",
        json!({
            "helm": {"repo": repo.url(), "chart": "app", "version": "^1.0",
                     "values": {"color": "green"}},
            "namespace": "apps",
            "helmSecretName": "repo-creds",
            "pollingInterval": "1s",
            "labels": {"team": "web"},
        }),
    )
    .await;

    // Both clusters (the default ClusterGroup) get version 1.0.0, downloaded by their agents.
    for cluster in ["cluster-1", "cluster-2"] {
        eventually(&format!("1.0.0 on {cluster}"), || async {
            (chart_label(&dev, cluster, "web-app").await? == "app-1.0.0").then_some(())
        })
        .await;
        assert_eq!(
            configmap_value(&dev, cluster, "apps", "web-app", "color")
                .await
                .as_deref(),
            Some("green")
        );
    }
    let ready = eventually("HelmOp Ready with 2/2", || async {
        let op = helmop(&dev, "web").await;
        let status = op.status.clone()?;
        (status.base.display.ready_bundle_deployments == "2/2"
            && condition(&op, "Ready") == Some(("True".into(), String::new())))
        .then_some(op)
    })
    .await;
    let status = ready.status.clone().unwrap();
    assert_eq!(status.version, "1.0.0");
    assert_eq!(
        (
            status.base.ready_clusters,
            status.base.desired_ready_clusters
        ),
        (2, 2)
    );
    assert_eq!(status.base.summary.ready, 2);
    assert!(
        status.base.resource_counts.ready >= 2,
        "{:?}",
        status.base.resource_counts
    );
    assert_eq!(condition(&ready, "Accepted").unwrap().0, "True");
    assert_eq!(condition(&ready, "Polled").unwrap().0, "True");
    assert!(status.last_polling_time.is_some());

    // The Bundle: the HelmOp's name and label, the chart reference with the resolved version, no files.
    let bundle = Api::<Bundle>::namespaced(dev.hub_client(), WORKSPACE)
        .get("web")
        .await
        .unwrap();
    let labels = bundle.metadata.labels.clone().unwrap();
    assert_eq!(labels[HELMOP_LABEL], "web");
    assert_eq!(labels["team"], "web");
    let chart = bundle.spec.options.helm.clone().unwrap();
    assert_eq!(
        (chart.chart.as_str(), chart.version.as_str()),
        ("app", "1.0.0")
    );
    assert!(bundle.spec.resources.is_empty());
    assert_eq!(
        bundle.spec.helm_op_options.clone().unwrap().secret_name,
        "repo-creds"
    );
    // Each BundleDeployment names the access Secret, copied into its cluster namespace for the agent.
    let deployments = Api::<BundleDeployment>::all(dev.hub_client())
        .list(&ListParams::default().labels(&format!("{HELMOP_LABEL}=web")))
        .await
        .unwrap();
    assert_eq!(deployments.items.len(), 2);
    let contents = Api::<fleet_api::Content>::all(dev.hub_client())
        .list(&ListParams::default())
        .await
        .unwrap();
    for bd in &deployments.items {
        let manifest_id = bd.spec.deployment_id.split(':').next().unwrap();
        assert!(
            !contents
                .items
                .iter()
                .any(|c| c.metadata.name.as_deref() == Some(manifest_id)),
            "no Content is written for a HelmOp, as in Fleet: {manifest_id}"
        );
        assert_eq!(
            bd.spec.helm_chart_options.clone().unwrap().secret_name,
            "repo-creds"
        );
        let namespace = bd.metadata.namespace.clone().unwrap();
        let copy = Api::<Secret>::namespaced(dev.hub_client(), &namespace)
            .get("repo-creds")
            .await
            .unwrap();
        assert_eq!(
            copy.type_.as_deref(),
            Some("fleet.cattle.io/bundle-helmops-access/v1alpha1")
        );
    }

    // Printer columns as Fleet's.
    let table = kubectl_get_helmops(&dev);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "NAME",
            "REPO",
            "CHART",
            "VERSION",
            "BUNDLEDEPLOYMENTS-READY",
            "STATUS",
            "AGE"
        ]
    );
    // The status message is empty when Ready; AGE comes last.
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..5],
        ["web", repo.url().as_str(), "app", "1.0.0", "2/2"]
    );
    assert_eq!(row.len(), 6, "{table}");

    // A new version that satisfies the constraint (and one that does not) is published: the next poll
    // moves the Bundle and both clusters to 1.1.0.
    serve_versions(home.path(), "app", &["1.1.0", "2.0.0"], &served);
    for cluster in ["cluster-1", "cluster-2"] {
        eventually(&format!("1.1.0 on {cluster}"), || async {
            (chart_label(&dev, cluster, "web-app").await? == "app-1.1.0").then_some(())
        })
        .await;
    }
    eventually("status.version 1.1.0", || async {
        (helmop(&dev, "web").await.status?.version == "1.1.0").then_some(())
    })
    .await;

    // The repository goes down: the next poll says why, and the deployed Bundle stays.
    drop(repo);
    let down = eventually("Polled=False", || async {
        let op = helmop(&dev, "web").await;
        (condition(&op, "Polled")?.0 == "False").then_some(op)
    })
    .await;
    let (_, message) = condition(&down, "Polled").unwrap();
    assert!(
        message.contains("could not get a chart version"),
        "{message}"
    );
    assert!(message.contains("index.yaml"), "{message}");
    let (ready, ready_message) = condition(&down, "Ready").unwrap();
    assert_eq!(
        (ready.as_str(), ready_message.as_str()),
        ("False", message.as_str())
    );
    let kept = Api::<Bundle>::namespaced(dev.hub_client(), WORKSPACE)
        .get("web")
        .await
        .unwrap();
    assert_eq!(kept.spec.options.helm.unwrap().version, "1.1.0");

    // New values need the chart again, which the agents cannot download now: the BundleDeployments say so
    // and what is deployed stays.
    helmops(&dev)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"helm": {"values": {"color": "red"}}}})),
        )
        .await
        .unwrap();
    eventually("a download error on the BundleDeployments", || async {
        let bds = Api::<BundleDeployment>::all(dev.hub_client())
            .list(&ListParams::default().labels(&format!("{HELMOP_LABEL}=web")))
            .await
            .ok()?;
        bds.items
            .iter()
            .all(|bd| {
                bd.status.as_ref().is_some_and(|s| {
                    s.conditions.iter().any(|c| {
                        c.type_ == "Deployed"
                            && c.status == "False"
                            && c.message.contains("downloading chart")
                    })
                })
            })
            .then_some(())
    })
    .await;
    for cluster in ["cluster-1", "cluster-2"] {
        assert_eq!(
            configmap_value(&dev, cluster, "apps", "web-app", "color")
                .await
                .as_deref(),
            Some("green"),
            "{cluster} keeps what was deployed"
        );
    }
    assert_no_password_on_hub(&dev).await;

    // Deleting the HelmOp deletes its Bundle and what it deployed.
    helmops(&dev)
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    eventually("Bundle and objects gone", || async {
        let bundle = Api::<Bundle>::namespaced(dev.hub_client(), WORKSPACE)
            .get_opt("web")
            .await
            .ok()?;
        let left = configmap(&dev, "cluster-1", "apps", "web-app").await;
        (bundle.is_none() && left.is_none()).then_some(())
    })
    .await;
    dev.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn oci_helmop_deploys_and_wrong_credentials_are_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let registry = Registry::start(true);
    registry.push_versions(home.path(), "app", &["0.3.0"], "charts");
    let reference = format!("oci://{}/charts/app", registry.host());
    let (dev, _state) = start(1).await;
    create_secret(
        &dev,
        "oci-creds",
        None,
        json!({"username": USER, "password": PASSWORD, "basicHTTP": "true"}),
    )
    .await;
    create_helmop(
        &dev,
        "oci",
        json!({
            "helm": {"repo": reference, "version": ">=0.1.0"},
            "namespace": "apps",
            "helmSecretName": "oci-creds",
        }),
    )
    .await;
    eventually("the OCI chart deployed", || async {
        (chart_label(&dev, "cluster-1", "oci-app").await? == "app-0.3.0").then_some(())
    })
    .await;
    let op = eventually("status version", || async {
        let op = helmop(&dev, "oci").await;
        (op.status.as_ref()?.version == "0.3.0").then_some(op)
    })
    .await;
    // Without a pollingInterval there is no polling (Fleet's default).
    assert!(condition(&op, "Polled").is_none());
    assert!(op.status.unwrap().last_polling_time.is_none());

    // Wrong credentials: the HelmOp is not accepted, no Bundle is written, and the message says what the
    // registry answered without the password.
    let wrong = "wr0ng-Passw0rd-77";
    create_secret(
        &dev,
        "bad-creds",
        None,
        json!({"username": USER, "password": wrong, "basicHTTP": "true"}),
    )
    .await;
    create_helmop(
        &dev,
        "bad",
        json!({
            "helm": {"repo": reference, "version": "0.3.0"},
            "helmSecretName": "bad-creds",
        }),
    )
    .await;
    let bad = eventually("Accepted=False", || async {
        let op = helmop(&dev, "bad").await;
        (condition(&op, "Accepted")?.0 == "False").then_some(op)
    })
    .await;
    let (_, message) = condition(&bad, "Accepted").unwrap();
    assert!(message.contains("401"), "{message}");
    assert!(message.contains("credentials"), "{message}");
    assert!(!message.contains(wrong), "{message}");
    assert_eq!(condition(&bad, "Ready").unwrap().1, message);
    assert!(
        Api::<Bundle>::namespaced(dev.hub_client(), WORKSPACE)
            .get_opt("bad")
            .await
            .unwrap()
            .is_none()
    );
    let table = kubectl_get_helmops(&dev);
    assert!(table.contains("401"), "{table}");
    assert_no_password_on_hub(&dev).await;
    assert!(
        !table.contains(wrong) && !table.contains(PASSWORD),
        "{table}"
    );
    dev.shutdown().await;
}
