//! The agent's Prometheus metrics (prometheus-client) and its HTTP endpoints: `/metrics`, `/healthz` (the
//! process serves) and `/readyz` (the agent is connected to the hub and has checked in or is working).
//! Counted: API requests to the hub and the downstream cluster by verb and answer code (every client the
//! agent makes goes through [`client`]), check-ins by result, and BundleDeployment applies, prunes, drift
//! reports and reconcile errors.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// Labels of an API request count.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `hub` or `downstream`.
    pub client: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`.
    pub verb: String,
    /// The HTTP status code, or `error` when no answer came.
    pub code: String,
}

/// Labels of a result count.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    pub result: String,
}

/// Every metric the agent exports.
pub struct Metrics {
    registry: Registry,
    pub api_requests: Family<RequestLabels, Counter>,
    pub check_ins: Family<ResultLabel, Counter>,
    pub applies: Family<ResultLabel, Counter>,
    pub prunes: Counter,
    pub drift: Counter,
    pub errors: Counter,
    ready: AtomicBool,
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("fleet_agent");
        let api_requests = Family::<RequestLabels, Counter>::default();
        let check_ins = Family::<ResultLabel, Counter>::default();
        let applies = Family::<ResultLabel, Counter>::default();
        let (prunes, drift, errors) = (Counter::default(), Counter::default(), Counter::default());
        registry.register(
            "api_requests",
            "Kubernetes API requests by client (hub, downstream), verb and answer code",
            api_requests.clone(),
        );
        registry.register(
            "check_ins",
            "Check-ins on the hub's Cluster by result",
            check_ins.clone(),
        );
        registry.register(
            "bundle_deployment_applies",
            "BundleDeployment releases applied downstream by result",
            applies.clone(),
        );
        registry.register(
            "objects_pruned",
            "Objects pruned or uninstalled downstream",
            prunes.clone(),
        );
        registry.register(
            "drift_reports",
            "BundleDeployment observations that found drift",
            drift.clone(),
        );
        registry.register(
            "reconcile_errors",
            "BundleDeployment reconciles that failed",
            errors.clone(),
        );
        Metrics {
            registry,
            api_requests,
            check_ins,
            applies,
            prunes,
            drift,
            errors,
            ready: AtomicBool::new(false),
        }
    }

    /// The metrics in Prometheus text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    /// Counts one result (`ok` or `error`).
    pub fn result(family: &Family<ResultLabel, Counter>, ok: bool) {
        let result = if ok { "ok" } else { "error" };
        family
            .get_or_create(&ResultLabel {
                result: result.into(),
            })
            .inc();
    }

    /// Marks the agent ready (connected to the hub) or not.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Whether the agent is ready.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// The verb of a Kubernetes API request, from its method and query.
pub fn verb(method: &http::Method, query: Option<&str>) -> &'static str {
    let watching = query.is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    match *method {
        http::Method::GET if watching => "watch",
        // A collection GET is a list; telling it from a get needs the path's shape, which the code does not
        // need: both read.
        http::Method::GET => "get",
        http::Method::POST => "create",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE => "delete",
        _ => "other",
    }
}

/// A kube client for `config` whose requests are counted under `client` (`hub` or `downstream`).
pub fn client(config: kube::Config, client: &'static str) -> Result<kube::Client, kube::Error> {
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(builder.with_layer(&CountLayer { client }).build())
}

/// A tower layer counting requests into [`global`].
#[derive(Clone, Copy)]
pub struct CountLayer {
    client: &'static str,
}

impl<S> tower::Layer<S> for CountLayer {
    type Service = Counted<S>;
    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            client: self.client,
        }
    }
}

/// The counting service.
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    client: &'static str,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> tower::Service<http::Request<kube::client::Body>> for Counted<S>
where
    S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: 'static,
    B: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
        let verb = verb(request.method(), request.uri().query());
        let client = self.client;
        let future = self.inner.call(request);
        Box::pin(async move {
            let answer = future.await;
            let code = match &answer {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "error".to_string(),
            };
            global()
                .api_requests
                .get_or_create(&RequestLabels {
                    client: client.into(),
                    verb: verb.into(),
                    code,
                })
                .inc();
            answer
        })
    }
}

/// Serves `/metrics`, `/healthz` and `/readyz` on `listener` until the future is dropped.
pub async fn serve(listener: tokio::net::TcpListener) -> std::io::Result<()> {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let router = axum::Router::new()
        .route(
            "/metrics",
            get(|| async {
                (
                    [(
                        header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    global().encode(),
                )
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(|| async {
                if global().is_ready() {
                    (StatusCode::OK, "ok")
                } else {
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "not connected to the hub yet",
                    )
                }
            }),
        );
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
    }
    axum::serve(listener, router).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_kubernetes_names() {
        assert_eq!(
            verb(&http::Method::GET, Some("watch=true&resourceVersion=1")),
            "watch"
        );
        assert_eq!(verb(&http::Method::GET, None), "get");
        assert_eq!(verb(&http::Method::PATCH, Some("fieldManager=x")), "patch");
        assert_eq!(verb(&http::Method::POST, None), "create");
        assert_eq!(verb(&http::Method::DELETE, None), "delete");
    }

    #[test]
    fn counts_appear_in_the_text_format() {
        let metrics = Metrics::new();
        metrics
            .api_requests
            .get_or_create(&RequestLabels {
                client: "hub".into(),
                verb: "patch".into(),
                code: "403".into(),
            })
            .inc();
        Metrics::result(&metrics.check_ins, true);
        let text = metrics.encode();
        assert!(
            text.contains(
                r#"fleet_agent_api_requests_total{client="hub",verb="patch",code="403"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"fleet_agent_check_ins_total{result="ok"} 1"#),
            "{text}"
        );
    }
}
