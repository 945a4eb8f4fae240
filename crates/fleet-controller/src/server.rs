//! The controller's HTTP endpoints (axum): `/metrics` (Prometheus text format), `/healthz`, and the git
//! push webhook on `/` and `/webhook`.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{any, get};

use crate::context::Context;
use crate::metrics::Metrics;

/// `/metrics` and `/healthz` only.
pub fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(serve_metrics))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(metrics)
}

/// The webhook receiver.
pub fn webhook_router(ctx: Arc<Context>) -> Router {
    Router::new()
        .route("/", any(receive))
        .route("/webhook", any(receive))
        .with_state(ctx)
}

async fn serve_metrics(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.encode(),
    )
}

async fn receive(
    State(ctx): State<Arc<Context>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    crate::webhook::handle(&ctx, &method, &headers, &body).await
}

/// Serves `router` on `addr` until `shutdown` resolves.
pub async fn serve(
    addr: std::net::SocketAddr,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "listening");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}
