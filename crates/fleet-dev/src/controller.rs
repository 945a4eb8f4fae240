//! The controller inside dev mode: started (and restarted) in-process with [`fleet_controller::run`], its
//! shared context kept in a [`ControllerSlot`] so that a local repository change triggers a GitRepo at once
//! (the path the push webhook takes: mark it requested, wake its reconcile), and a webhook receiver on
//! loopback that hands pushes to the controller's own webhook handler, whichever controller runs now.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::any;
use fleet_controller::metrics::Metrics;
use fleet_controller::placement::PlacementSettings;
use fleet_controller::{Context, Settings};
use http::{HeaderMap, Method, StatusCode};
use tokio::sync::oneshot;

use crate::error::Result;
use crate::task::Task;

/// The running controller's context, if one runs.
#[derive(Default)]
pub struct ControllerSlot {
    context: RwLock<Option<Arc<Context>>>,
}

impl ControllerSlot {
    fn set(&self, context: Option<Arc<Context>>) {
        *self.context.write().unwrap_or_else(|p| p.into_inner()) = context;
    }

    /// The context of the controller running now.
    pub fn context(&self) -> Option<Arc<Context>> {
        self.context
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Makes the GitRepo `namespace/name` fetch now, as a push webhook does; false when no controller runs.
    pub fn trigger(&self, namespace: &str, name: &str) -> bool {
        let Some(ctx) = self.context() else {
            return false;
        };
        fleet_controller::context::lock(&ctx.webhook_requests)
            .insert(format!("{namespace}/{name}"));
        ctx.triggers.gitrepo(namespace, name);
        true
    }
}

/// A controller running in this process until stopped.
pub struct RunningController {
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    slot: Arc<ControllerSlot>,
}

impl RunningController {
    /// Starts the controller against `hub` with `placement`'s heartbeat timeout and records its context in
    /// `slot` once it is wired.
    pub async fn start(
        hub: kube::Client,
        settings: Settings,
        placement: PlacementSettings,
        slot: Arc<ControllerSlot>,
    ) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let (started_tx, started_rx) = oneshot::channel();
        let task = tokio::spawn(fleet_controller::run(
            hub,
            settings,
            Arc::new(Metrics::new()),
            async move {
                let _ = stopped.await;
            },
            move |ctx| {
                let _ = ctx.placement_settings.set(placement);
                let _ = started_tx.send(ctx);
            },
        ));
        if let Ok(ctx) = started_rx.await {
            slot.set(Some(ctx));
        }
        RunningController {
            stop: Some(stop),
            task: Some(task),
            slot,
        }
    }

    /// Stops the controller: in-flight reconciles finish (for at most 30 s, then it is aborted).
    pub async fn stop(mut self) {
        self.slot.set(None);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(30), &mut task)
                .await
                .is_err()
        {
            tracing::warn!("the controller did not stop within 30 s; aborting it");
            task.abort();
        }
    }
}

impl Drop for RunningController {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// The push-webhook receiver (`/` and `/webhook`) on `127.0.0.1:<free port>`, answered by the controller's
/// webhook handler; 503 while no controller runs.
pub struct WebhookReceiver {
    pub addr: SocketAddr,
    _serving: Task,
}

impl WebhookReceiver {
    pub async fn start(slot: Arc<ControllerSlot>) -> Result<Self> {
        let router = Router::new()
            .route("/", any(receive))
            .route("/webhook", any(receive))
            .with_state(slot);
        let (listener, addr) = crate::served::bind_loopback().await?;
        let serving = Task::spawn(async move {
            if let Err(err) = axum::serve(listener, router).await {
                tracing::error!(%addr, error = %err, "webhook receiver stopped");
            }
        });
        Ok(WebhookReceiver {
            addr,
            _serving: serving,
        })
    }

    /// `http://127.0.0.1:<port>/webhook`.
    pub fn url(&self) -> String {
        format!("http://{}/webhook", self.addr)
    }
}

async fn receive(
    State(slot): State<Arc<ControllerSlot>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    match slot.context() {
        Some(ctx) => fleet_controller::webhook::handle(&ctx, &method, &headers, &body).await,
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "the controller is not running".to_string(),
        ),
    }
}
