//! Agent-side registration against an embedded hub. The controller's side of the protocol (granting) is not
//! wired in yet, so these tests play the hub's part by hand: they see the ClusterRegistration, create the
//! ServiceAccount and RBAC Fleet's controller grants, and write the grant Secret where Fleet writes it.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use fleet_agent::registration::{self, BOOTSTRAP_SECRET};
use fleet_agent::tls::TlsMode;
use fleet_agent::{Agent, AgentConfig, Error, Scope};
use fleet_api::ClusterRegistration;
use fleet_testing::secret_data;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const AGENT_NS: &str = "cattle-fleet-system";
const OTHER_CLUSTER_NS: &str = "cluster-fleet-default-other-000000000000";

/// A hub with the registration namespaces, served on loopback, and an "import" token allowed to create
/// ClusterRegistrations and read grants.
async fn registration_hub() -> (fleet_testing::TestCluster, String, String) {
    let hub = hub().await;
    for ns in [
        "fleet-default",
        "cattle-fleet-clusters-system",
        OTHER_CLUSTER_NS,
    ] {
        create_namespace(&hub.client, ns).await;
    }
    let (addr, _) = hub.serve_loopback().await;
    let import_token = service_account_token(
        &hub.client,
        "fleet-default",
        "import",
        &[
            ("fleet-default", json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["clusterregistrations"], "verbs": ["create"]}])),
            ("cattle-fleet-clusters-system", json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}])),
        ],
        None,
    )
    .await;
    (hub, format!("http://{addr}"), import_token)
}

async fn write_bootstrap(downstream: &kube::Client, url: &str, token: &str) {
    let secrets: Api<Secret> = Api::namespaced(downstream.clone(), AGENT_NS);
    let bootstrap: Secret = serde_json::from_value(json!({
        "metadata": {"name": BOOTSTRAP_SECRET},
        "data": secret_data(&[("apiServerURL", url), ("token", token), ("clusterNamespace", "fleet-default"),
            ("systemRegistrationNamespace", "cattle-fleet-clusters-system")]),
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &bootstrap)
        .await
        .unwrap();
}

/// The hub's part: waits for the `nth` ClusterRegistration and grants it with a fresh ServiceAccount.
async fn grant(hub: &kube::Client, nth: usize) -> ClusterRegistration {
    let registrations: Api<ClusterRegistration> = Api::namespaced(hub.clone(), "fleet-default");
    let request = wait_for("a ClusterRegistration", || {
        let registrations = registrations.clone();
        async move {
            let mut items = registrations.list(&Default::default()).await.ok()?.items;
            items.sort_by_key(|r| r.metadata.creation_timestamp.clone());
            (items.len() >= nth).then(|| items.swap_remove(nth - 1))
        }
    })
    .await;
    // Fleet's grant: BundleDeployments of this cluster's namespace (read, status), its secrets, and Content.
    let token = service_account_token(
        hub,
        CLUSTER_NS,
        &format!("request-{nth}"),
        &[(CLUSTER_NS, json!([
            {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments/status"], "verbs": ["update", "patch"]},
            {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get"]}]))],
        Some(json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["contents"], "verbs": ["get"]}])),
    )
    .await;
    let name =
        registration::grant_secret_name(&request.spec.client_id, &request.spec.client_random);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name},
        "data": secret_data(&[("token", &token), ("deploymentNamespace", CLUSTER_NS),
            ("clusterNamespace", "fleet-default"), ("clusterName", "c1"), ("systemNamespace", AGENT_NS)]),
    }))
    .unwrap();
    Api::<Secret>::namespaced(hub.clone(), "cattle-fleet-clusters-system")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    request
}

/// The whole registration round: writes the bootstrap Secret downstream, lets the agent connect while the hub
/// grants its `nth` ClusterRegistration, and returns the agent's hub client and stored credentials.
async fn register(
    hub: &kube::Client,
    downstream: &kube::Client,
    url: &str,
    import_token: &str,
    nth: usize,
) -> (kube::Client, registration::Credentials) {
    write_bootstrap(downstream, url, import_token).await;
    let connecting = {
        let downstream = downstream.clone();
        tokio::spawn(async move {
            registration::connect(
                &downstream,
                AGENT_NS,
                Some("client-1"),
                BTreeMap::new(),
                Duration::from_secs(60),
                TlsMode::default(),
            )
            .await
        })
    };
    grant(hub, nth).await;
    connecting.await.unwrap().unwrap()
}

/// An empty downstream cluster with the agent's namespace and a bootstrap Secret for `url` and `token` in it,
/// and that Secret as the agent reads it.
async fn bootstrapped_downstream(
    url: &str,
    token: &str,
) -> (fleet_testing::TestCluster, registration::Bootstrap) {
    let downstream = fleet_testing::TestCluster::empty();
    create_namespace(&downstream.client, AGENT_NS).await;
    write_bootstrap(&downstream.client, url, token).await;
    let read = registration::bootstrap(&downstream.client, AGENT_NS)
        .await
        .unwrap()
        .expect("bootstrap secret");
    (downstream, read)
}

/// [`registration::register`] of `client_id` with `labels` from `bootstrap`, in a task (so that the test can
/// play the hub meanwhile), with a minute's patience and the default TLS mode.
fn spawn_register(
    downstream: &kube::Client,
    bootstrap: registration::Bootstrap,
    client_id: String,
    labels: BTreeMap<String, String>,
) -> tokio::task::JoinHandle<Result<registration::Credentials, Error>> {
    let downstream = downstream.clone();
    tokio::spawn(async move {
        registration::register(
            &downstream,
            AGENT_NS,
            &bootstrap,
            &client_id,
            labels,
            Duration::from_secs(60),
            TlsMode::default(),
        )
        .await
    })
}

#[tokio::test]
async fn registers_with_a_bootstrap_token_and_stores_the_grant() {
    let (hub, url, import_token) = registration_hub().await;
    let (downstream, read) = bootstrapped_downstream(&url, &import_token).await;
    let client_id = registration::client_id(&downstream.client, None)
        .await
        .unwrap();
    let kube_system = Api::<Namespace>::all(downstream.client.clone())
        .get("kube-system")
        .await
        .unwrap();
    assert_eq!(Some(client_id.clone()), kube_system.metadata.uid);
    let labels = BTreeMap::from([("env".to_string(), "test".to_string())]);
    let registering = spawn_register(&downstream.client, read, client_id, labels);
    let request = grant(&hub.client, 1).await;
    assert!(
        request
            .metadata
            .name
            .as_deref()
            .unwrap()
            .starts_with("request-")
    );
    assert_eq!(request.spec.cluster_labels["env"], "test");

    let credentials = registering.await.unwrap().unwrap();
    assert_eq!(credentials.deployment_namespace, CLUSTER_NS);
    assert_eq!(credentials.cluster.name, "c1");
    let secrets: Api<Secret> = Api::namespaced(downstream.client.clone(), AGENT_NS);
    assert!(
        secrets.get_opt(BOOTSTRAP_SECRET).await.unwrap().is_none(),
        "bootstrap removed"
    );
    let stored = registration::credentials(&downstream.client, AGENT_NS)
        .await
        .unwrap()
        .expect("credentials secret");
    assert_eq!(stored, credentials);
    assert!(
        stored
            .kubeconfig
            .contains(&format!("namespace: {CLUSTER_NS}"))
    );

    let agent_hub = registration::client_from_kubeconfig(&stored.kubeconfig)
        .await
        .unwrap();
    // The agent runs with nothing but the granted credentials: watch, Content, status.
    start_agent(&agent_hub, &downstream, Scope::new(AGENT_NS, ""));
    let cm = config_map("granted", "1");
    let id = publish_in(&hub.client, "granted", &[("cm.yaml", &cm)], "apps").await;
    wait_status(
        &hub.client,
        "granted",
        "deployed with granted credentials",
        |s| s.applied_deployment_id == id && s.ready,
    )
    .await;
    // The same credentials are refused (403) another cluster's BundleDeployments.
    let refused = Api::<fleet_api::BundleDeployment>::namespaced(agent_hub, OTHER_CLUSTER_NS)
        .list(&Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(status) if status.code == 403),
        "{refused}"
    );
}

#[tokio::test]
async fn revoked_credentials_are_reported_and_a_new_bootstrap_secret_re_registers() {
    let (hub, url, import_token) = registration_hub().await;
    let downstream = fleet_testing::TestCluster::empty();
    create_namespace(&downstream.client, AGENT_NS).await;
    let (agent_hub, _) = register(&hub.client, &downstream.client, &url, &import_token, 1).await;
    let mut config = AgentConfig::new(agent_hub, CLUSTER_NS, Scope::new(AGENT_NS, ""));
    config.monitor_interval = Duration::from_millis(200);
    config.retry_interval = Duration::from_millis(100);
    let running = tokio::spawn(Agent::new(config, downstream_of(&downstream)).run());
    let id = publish_in(
        &hub.client,
        "app",
        &[("cm.yaml", &config_map("app", "1"))],
        "apps",
    )
    .await;
    wait_applied(&hub.client, "app", &id, "deployed").await;

    // The hub revokes the agent: its ServiceAccount (and so its token) is deleted.
    Api::<ServiceAccount>::namespaced(hub.client.clone(), CLUSTER_NS)
        .delete("request-1", &DeleteParams::default())
        .await
        .unwrap();
    publish_in(
        &hub.client,
        "app",
        &[("cm.yaml", &config_map("app", "2"))],
        "apps",
    )
    .await;
    let stopped = tokio::time::timeout(Duration::from_secs(60), running)
        .await
        .expect("the agent stops on revoked credentials")
        .unwrap();
    assert!(matches!(stopped, Err(Error::Revoked(_))), "{stopped:?}");

    // A new bootstrap Secret: connecting registers again, although credentials are stored.
    let (agent_hub, credentials) =
        register(&hub.client, &downstream.client, &url, &import_token, 2).await;
    assert!(credentials.kubeconfig.contains("namespace: "));
    Api::<fleet_api::BundleDeployment>::namespaced(agent_hub, CLUSTER_NS)
        .list(&Default::default())
        .await
        .expect("the new credentials work");
}

#[tokio::test]
async fn a_grant_without_its_namespaces_is_refused_naming_the_key() {
    let (hub, url, import_token) = registration_hub().await;
    let (downstream, read) = bootstrapped_downstream(&url, &import_token).await;
    let registering = spawn_register(
        &downstream.client,
        read,
        "client-1".to_string(),
        BTreeMap::new(),
    );
    let registrations: Api<ClusterRegistration> =
        Api::namespaced(hub.client.clone(), "fleet-default");
    let request = wait_for("a ClusterRegistration", || {
        let registrations = registrations.clone();
        async move {
            registrations
                .list(&Default::default())
                .await
                .ok()?
                .items
                .pop()
        }
    })
    .await;
    // A grant whose deploymentNamespace is empty: every request of the agent would name no namespace.
    let name =
        registration::grant_secret_name(&request.spec.client_id, &request.spec.client_random);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": name},
        "data": secret_data(&[("token", "t"), ("deploymentNamespace", ""),
            ("clusterNamespace", "fleet-default"), ("clusterName", "c1")]),
    }))
    .unwrap();
    Api::<Secret>::namespaced(hub.client.clone(), "cattle-fleet-clusters-system")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let err = registering.await.unwrap().unwrap_err().to_string();
    assert!(
        err.contains("key deploymentNamespace is missing or empty") && err.contains(&name),
        "{err}"
    );
}
