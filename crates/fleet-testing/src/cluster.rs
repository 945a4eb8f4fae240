//! Embedded API servers for tests: a hub or a downstream cluster, reached in-process or over loopback HTTP.

use fleet_apiserver::ApiServer;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use std::net::SocketAddr;

/// One embedded API server and an admin client talking to it in-process.
#[derive(Clone)]
pub struct TestCluster {
    pub server: ApiServer,
    pub client: kube::Client,
}

impl TestCluster {
    /// A fresh in-memory cluster with only the built-in kinds.
    pub fn empty() -> Self {
        let server = ApiServer::in_memory();
        let client = server.client();
        Self { server, client }
    }

    /// A fresh in-memory cluster with Fleet's CRDs (`fleet.cattle.io/v1alpha1`) installed and served.
    pub async fn with_fleet_crds() -> Self {
        let cluster = Self::empty();
        cluster.install_crds(fleet_api::crds()).await;
        cluster
    }

    /// Creates CRDs through the API, as `kubectl apply` would; they are served as soon as this returns.
    pub async fn install_crds(&self, crds: Vec<CustomResourceDefinition>) {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        for crd in crds {
            let name = crd.metadata.name.clone().unwrap_or_default();
            api.create(&PostParams::default(), &crd)
                .await
                .unwrap_or_else(|err| panic!("creating CRD {name}: {err}"));
        }
    }

    /// An in-process client acting as `user` through the `Impersonate-User` header (as `kubectl --as` does), so RBAC
    /// applies to it; `None` gives an admin client. This is how tests stand in for an agent's downstream credentials.
    pub fn client_as(&self, user: Option<&str>) -> kube::Client {
        let user = user.map(str::to_string);
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut request: http::Request<kube::client::Body>| {
                if let Some(user) = &user {
                    let value = user.parse().expect("a user name is a valid header value");
                    request.headers_mut().insert("Impersonate-User", value);
                }
                request
            })
            .service(self.server.service());
        kube::Client::new(service, "default")
    }

    /// Serves the cluster on 127.0.0.1 over plain HTTP and returns a kubeconfig (YAML) pointing at it.
    pub async fn serve_loopback(&self) -> (SocketAddr, String) {
        let addr = self.server.spawn_loopback().await.expect("bind 127.0.0.1");
        let kubeconfig = self.server.kubeconfig(&format!("http://{addr}"));
        (addr, kubeconfig)
    }
}
