//! Shared test setup: a server reached in-process and over loopback HTTP; the resource version a watch starts
//! from.

#![allow(dead_code)]

use fleet_apiserver::ApiServer;

/// How a test reaches the server.
#[derive(Debug, Clone, Copy)]
pub enum Transport {
    InProcess,
    Loopback,
}

pub async fn client(server: &ApiServer, transport: Transport) -> kube::Client {
    match transport {
        Transport::InProcess => server.client(),
        Transport::Loopback => {
            let addr = server.spawn_loopback().await.expect("bind loopback");
            let config = kube::Config::new(format!("http://{addr}").parse().expect("url"));
            kube::Client::try_from(config).expect("client")
        }
    }
}

pub const TRANSPORTS: [Transport; 2] = [Transport::InProcess, Transport::Loopback];

/// Polls `check` until it holds (work the server does in the background, e.g. emptying a namespace);
/// panics naming `what` if it does not within 10 seconds.
pub async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1000 {
        if check().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 10 seconds");
}

/// The resource version of a list of `api`'s objects: where a watch that must see every later write starts.
pub async fn list_version<K>(api: &kube::Api<K>) -> String
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&Default::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("a list has a resource version")
}
