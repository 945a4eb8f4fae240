//! Shared test setup: a hub and downstream clusters (embedded API servers reached through the real kube
//! client), publishing bundles as the controller does (Content + BundleDeployment), agents running in the
//! background, and a bounded wait on conditions.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use fleet_agent::{Agent, AgentConfig, Downstream, Scope};
use fleet_api::{BundleDeployment, BundleDeploymentOptions, BundleDeploymentSpec, Content};
use fleet_testing::TestCluster;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

pub const CLUSTER_NS: &str = "cluster-fleet-default-c1-0123456789ab";

/// Waits until `check` returns `Some`, polling (fleet-testing's bounded wait).
pub use fleet_testing::eventually as wait_for;

/// A downstream cluster as the agent reaches it: impersonation through `Impersonate-User`.
pub fn downstream_of(cluster: &TestCluster) -> Downstream {
    let cluster = cluster.clone();
    Downstream::new(Arc::new(move |user: Option<&str>| cluster.client_as(user)))
}

/// A hub with Fleet's CRDs and the cluster namespace.
pub async fn hub() -> TestCluster {
    let hub = TestCluster::with_fleet_crds().await;
    create_namespace(&hub.client, CLUSTER_NS).await;
    hub
}

pub async fn create_namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    let _ = api.create(&PostParams::default(), &ns).await;
}

/// Starts an agent for `scope` against the hub's cluster namespace; it stops when the test ends (or when the
/// returned task is aborted). Its resync tick is an hour, so readiness and drift are seen through its watches
/// alone.
pub fn start_agent(
    hub: &kube::Client,
    downstream: &TestCluster,
    scope: Scope,
) -> tokio::task::JoinHandle<fleet_agent::error::Result<()>> {
    let mut config = AgentConfig::new(hub.clone(), CLUSTER_NS, scope);
    config.monitor_interval = Duration::from_secs(3600);
    config.retry_interval = Duration::from_millis(100);
    let agent = Agent::new(config, downstream_of(downstream));
    tokio::spawn(agent.run())
}

/// A hub, an empty downstream cluster, and the default agent (`cattle-fleet-system`) between them.
pub async fn hub_with_agent() -> (TestCluster, TestCluster) {
    let hub = hub().await;
    let downstream = TestCluster::empty();
    start_agent(
        &hub.client,
        &downstream,
        Scope::new("cattle-fleet-system", ""),
    );
    (hub, downstream)
}

pub use fleet_testing::bundle_resources as resources;

/// Publishes a bundle as the controller does: its Content, and the BundleDeployment (created or updated)
/// pointing at it. Returns the deploymentID.
pub async fn publish(
    hub: &kube::Client,
    name: &str,
    files: &[(&str, &str)],
    options: BundleDeploymentOptions,
    customize: impl FnOnce(&mut BundleDeploymentSpec),
) -> String {
    let resources = resources(files);
    let manifest_id = fleet_bundle::hash::manifest_id(&resources);
    let content: Content = serde_json::from_value(json!({
        "apiVersion": fleet_api::API_VERSION,
        "kind": "Content",
        "metadata": {"name": manifest_id},
        "content": fleet_bundle::resources::base64_gzip(&fleet_bundle::hash::manifest_bytes(&resources)),
        "sha256sum": fleet_bundle::hash::manifest_sha256(&resources),
    }))
    .unwrap();
    let _ = Api::<Content>::all(hub.clone())
        .create(&PostParams::default(), &content)
        .await;
    let deployment_id = fleet_bundle::hash::deployment_id(&manifest_id, &options);
    let mut spec = BundleDeploymentSpec {
        deployment_id: deployment_id.clone(),
        staged_deployment_id: deployment_id.clone(),
        options: options.clone(),
        staged_options: options,
        ..Default::default()
    };
    customize(&mut spec);
    let mut bd = BundleDeployment::new(name, spec);
    bd.metadata.labels = Some(
        [("fleet.cattle.io/bundle-name".to_string(), name.to_string())]
            .into_iter()
            .collect(),
    );
    let api: Api<BundleDeployment> = Api::namespaced(hub.clone(), CLUSTER_NS);
    let body = serde_json::to_value(&bd).unwrap();
    api.patch(
        name,
        &PatchParams::apply("test-controller").force(),
        &Patch::Apply(body),
    )
    .await
    .unwrap();
    deployment_id
}

/// [`wait_status`] until the BundleDeployment `name` reports deploymentID `id` applied; that status.
pub async fn wait_applied(
    hub: &kube::Client,
    name: &str,
    id: &str,
    what: &str,
) -> fleet_api::BundleDeploymentStatus {
    wait_status(hub, name, what, |s| s.applied_deployment_id == id).await
}

/// The BundleDeployment's status once `check` accepts it.
pub async fn wait_status(
    hub: &kube::Client,
    name: &str,
    what: &str,
    check: impl Fn(&fleet_api::BundleDeploymentStatus) -> bool,
) -> fleet_api::BundleDeploymentStatus {
    let api: Api<BundleDeployment> = Api::namespaced(hub.clone(), CLUSTER_NS);
    wait_for(what, || {
        let api = api.clone();
        let check = &check;
        async move {
            let bd = api.get(name).await.ok()?;
            let status = bd.status?;
            check(&status).then_some(status)
        }
    })
    .await
}

pub fn condition<'a>(
    status: &'a fleet_api::BundleDeploymentStatus,
    type_: &str,
) -> &'a fleet_api::Condition {
    fleet_api::find_condition(&status.conditions, type_)
        .unwrap_or_else(|| panic!("no {type_} condition"))
}

/// [`publish`] of `files` into `namespace` with no other option; the deploymentID.
pub async fn publish_in(
    hub: &kube::Client,
    name: &str,
    files: &[(&str, &str)],
    namespace: &str,
) -> String {
    publish(hub, name, files, options_in(namespace), |_| {}).await
}

pub fn options_in(namespace: &str) -> BundleDeploymentOptions {
    BundleDeploymentOptions {
        default_namespace: namespace.to_string(),
        ..Default::default()
    }
}

pub fn config_map(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  key: \"{value}\"\n"
    )
}

pub fn deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.27\n"
    )
}

/// Marks a Deployment available through its status subresource, as the deployment controller would.
pub async fn make_available(client: &kube::Client, namespace: &str, name: &str) {
    let api: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), namespace);
    let live = api.get(name).await.unwrap();
    let generation = live.metadata.generation.unwrap_or(1);
    let status = json!({"status": {"observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
        "readyReplicas": 1, "availableReplicas": 1,
        "conditions": [{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// A TCP proxy in front of a hub that can be cut (every connection dropped, new ones refused) and restored:
/// the hub becomes unreachable for the agent, as in a network outage or a hub restart.
pub struct Link {
    pub addr: std::net::SocketAddr,
    up: Arc<std::sync::atomic::AtomicBool>,
    refused: Arc<std::sync::atomic::AtomicUsize>,
    connections: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Link {
    pub async fn to(target: std::net::SocketAddr) -> Link {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let up = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let connections: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let refused = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (up2, conns2, refused2) = (up.clone(), connections.clone(), refused.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !up2.load(std::sync::atomic::Ordering::SeqCst) {
                    refused2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    continue; // dropped: connection refused by closing
                }
                let handle = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                conns2.lock().unwrap().push(handle);
            }
        });
        Link {
            addr,
            up,
            refused,
            connections,
        }
    }

    pub fn cut(&self) {
        self.up.store(false, std::sync::atomic::Ordering::SeqCst);
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }

    /// Connection attempts refused while cut.
    pub fn refused(&self) -> usize {
        self.refused.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn restore(&self) {
        self.up.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A kube client from a kubeconfig text.
pub async fn client_from_kubeconfig(text: &str) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// Plays the hub's part of registration by hand (the controller's is not wired in yet): a ServiceAccount
/// `namespace/name` granted `rules` in each listed namespace (a Role and RoleBinding there), plus a ClusterRole
/// with `cluster_rules` when given, and a token issued for it through the TokenRequest API.
pub async fn service_account_token(
    hub: &kube::Client,
    namespace: &str,
    name: &str,
    grants: &[(&str, serde_json::Value)],
    cluster_rules: Option<serde_json::Value>,
) -> String {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    let sas: Api<ServiceAccount> = Api::namespaced(hub.clone(), namespace);
    let sa: ServiceAccount = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    sas.create(&PostParams::default(), &sa).await.unwrap();
    let subject = json!([{"kind": "ServiceAccount", "name": name, "namespace": namespace}]);
    let role_name = format!("{namespace}-{name}");
    for (grant_ns, rules) in grants {
        let role: Role =
            serde_json::from_value(json!({"metadata": {"name": role_name}, "rules": rules}))
                .unwrap();
        Api::<Role>::namespaced(hub.clone(), grant_ns)
            .create(&PostParams::default(), &role)
            .await
            .unwrap();
        let binding: RoleBinding = serde_json::from_value(json!({"metadata": {"name": role_name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
            "subjects": subject}))
        .unwrap();
        Api::<RoleBinding>::namespaced(hub.clone(), grant_ns)
            .create(&PostParams::default(), &binding)
            .await
            .unwrap();
    }
    if let Some(rules) = cluster_rules {
        let role: ClusterRole =
            serde_json::from_value(json!({"metadata": {"name": role_name}, "rules": rules}))
                .unwrap();
        Api::<ClusterRole>::all(hub.clone())
            .create(&PostParams::default(), &role)
            .await
            .unwrap();
        let binding: ClusterRoleBinding = serde_json::from_value(json!({"metadata": {"name": role_name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
            "subjects": subject}))
        .unwrap();
        Api::<ClusterRoleBinding>::all(hub.clone())
            .create(&PostParams::default(), &binding)
            .await
            .unwrap();
    }
    let request: TokenRequest =
        serde_json::from_value(json!({"spec": {"audiences": [], "expirationSeconds": 3600}}))
            .unwrap();
    let issued: TokenRequest = sas
        .create_subresource("token", name, &PostParams::default(), &request)
        .await
        .unwrap();
    issued.status.unwrap().token
}
