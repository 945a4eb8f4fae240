//! Watches: newline-delimited JSON events from a resourceVersion (or the current state), filtered by
//! namespace and selectors, with BOOKMARKs, `sendInitialEvents`, `timeoutSeconds`, and an in-stream 410
//! `ERROR` event when the requested resourceVersion is older than the kept history.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::{present, presented_as_stored};
use crate::handlers::table;
use crate::http::request::Request;
use crate::kinds::registry::ResourceType;
use crate::state::Inner;
use crate::storage::selectors::{FieldSelector, LabelSelector};
use crate::storage::store::{EventKind, Subscription, WatchEvent};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Filter {
    resource: String,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn selects(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }

    /// The event type this watch reports for `event`, if any: a modification that moves an object into the
    /// selection is ADDED for this watch, one that moves it out is DELETED, as kube-apiserver reports them.
    fn classify(&self, event: &WatchEvent) -> Option<&'static str> {
        if event.key.resource != self.resource
            || self
                .namespace
                .as_ref()
                .is_some_and(|ns| *ns != event.key.namespace)
        {
            return None;
        }
        let now = self.selects(&event.object);
        match event.kind {
            EventKind::Added => now.then_some("ADDED"),
            EventKind::Deleted => now.then_some("DELETED"),
            EventKind::Modified => {
                let before = event
                    .previous
                    .as_deref()
                    .is_some_and(|old| self.selects(old));
                match (before, now) {
                    (true, true) => Some("MODIFIED"),
                    (false, true) => Some("ADDED"),
                    (true, false) => Some("DELETED"),
                    (false, false) => None,
                }
            }
        }
    }
}

struct Stream {
    rt: std::sync::Arc<ResourceType>,
    filter: Filter,
    as_table: bool,
    /// Lines to send before reading live events.
    pending: std::collections::VecDeque<Bytes>,
    sub: Option<Subscription>,
    position: u64,
    deadline: Instant,
    bookmarks: bool,
    bookmark_interval: Duration,
    done: bool,
}

pub fn watch(inner: &Arc<Inner>, req: &Request) -> ApiResult<Response> {
    let mut field_text = req.query.get("fieldSelector").unwrap_or("").to_string();
    if let Some(name) = &req.path.name {
        // `/watch/.../{name}`: the legacy single-object watch.
        if !field_text.is_empty() {
            field_text.push(',');
        }
        field_text.push_str(&format!("metadata.name={name}"));
    }
    let filter = Filter {
        resource: req.rt.storage_key(),
        namespace: req.path.namespace.clone(),
        labels: LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""))?,
        fields: FieldSelector::parse(&field_text)?,
    };
    let timeout = req
        .query
        .u64("timeoutSeconds")?
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT);
    let as_table = table::wants_table(req.accept());
    let send_initial = req.query.flag("sendInitialEvents");
    let rv = req.query.get("resourceVersion").filter(|rv| *rv != "0");
    let mut pending = std::collections::VecDeque::new();
    let sub = match (rv, send_initial) {
        (Some(rv), false) => {
            let rv: u64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?;
            match inner.store.subscribe(rv) {
                Ok(sub) => Some(sub),
                Err(err) => {
                    pending.push_back(line(&json!({"type": "ERROR", "object": err.to_status()})));
                    None
                }
            }
        }
        _ => {
            let (snapshot, sub) = inner
                .store
                .subscribe_with_snapshot(&filter.resource, filter.namespace.as_deref());
            for obj in snapshot.iter().filter(|o| filter.selects(o)) {
                pending.push_back(event_line(&req.rt, "ADDED", obj, as_table));
            }
            if send_initial {
                pending.push_back(bookmark(&req.rt, sub.position, true));
            }
            Some(sub)
        }
    };
    let position = sub.as_ref().map(|s| s.position).unwrap_or(0);
    let state = Stream {
        rt: req.rt.clone(),
        filter,
        as_table,
        pending,
        sub,
        position,
        deadline: Instant::now() + timeout,
        bookmarks: req.query.flag("allowWatchBookmarks"),
        bookmark_interval: inner.config.bookmark_interval,
        done: false,
    };
    let stream = futures::stream::unfold(state, |mut state| async move {
        let line = next_line(&mut state).await?;
        Some((Ok::<Bytes, std::convert::Infallible>(line), state))
    });
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

async fn next_line(state: &mut Stream) -> Option<Bytes> {
    loop {
        if let Some(line) = state.pending.pop_front() {
            return Some(line);
        }
        if state.done {
            return None;
        }
        let Some(sub) = state.sub.as_mut() else {
            state.done = true;
            continue;
        };
        if let Some(event) = sub.backlog.pop_front() {
            handle_event(state, &event);
            continue;
        }
        let now = Instant::now();
        if now >= state.deadline {
            state.done = true;
            continue;
        }
        let wait = if state.bookmarks {
            state.bookmark_interval.min(state.deadline - now)
        } else {
            state.deadline - now
        };
        match tokio::time::timeout(wait, sub.live.recv()).await {
            Ok(Ok(event)) => {
                if event.rv > state.position {
                    handle_event(state, &event);
                }
            }
            Ok(Err(RecvError::Lagged(_))) => {
                let err = ApiError::expired(
                    "the watch fell behind the event stream; resourceVersion too old",
                );
                state
                    .pending
                    .push_back(line(&json!({"type": "ERROR", "object": err.to_status()})));
                state.done = true;
            }
            Ok(Err(RecvError::Closed)) => state.done = true,
            Err(_) if state.bookmarks && Instant::now() < state.deadline => {
                state
                    .pending
                    .push_back(bookmark(&state.rt, state.position, false));
            }
            Err(_) => {}
        }
    }
}

fn handle_event(state: &mut Stream, event: &Arc<WatchEvent>) {
    state.position = state.position.max(event.rv);
    if let Some(kind) = state.filter.classify(event) {
        state
            .pending
            .push_back(event_line(&state.rt, kind, &event.object, state.as_table));
    }
}

fn event_line(rt: &ResourceType, kind: &str, obj: &Arc<Value>, as_table: bool) -> Bytes {
    let object = if as_table {
        table::table(rt, std::slice::from_ref(obj), None, None)
    } else if presented_as_stored(rt, obj) {
        // The common case: write the shared object without copying it.
        let mut buf = format!("{{\"type\":\"{kind}\",\"object\":").into_bytes();
        if serde_json::to_writer(&mut buf, &**obj).is_ok() {
            buf.extend_from_slice(b"}\n");
            return Bytes::from(buf);
        }
        present(rt, obj)
    } else {
        present(rt, obj)
    };
    line(&json!({"type": kind, "object": object}))
}

fn bookmark(rt: &ResourceType, rv: u64, initial_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        &json!({"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": metadata}}),
    )
}

fn line(value: &Value) -> Bytes {
    let mut buf = serde_json::to_vec(value).unwrap_or_default();
    buf.push(b'\n');
    Bytes::from(buf)
}
