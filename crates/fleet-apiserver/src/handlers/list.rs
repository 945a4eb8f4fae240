//! GET on a collection: label and field selectors, `limit`/`continue` pagination over a resourceVersion, and
//! `List`, `Table` or `PartialObjectMetadataList` encoding.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::present;
use crate::handlers::table;
use crate::http::request::Request;
use crate::state::Inner;
use crate::storage::object;
use crate::storage::selectors::{FieldSelector, LabelSelector};

/// Objects of the request's collection that match its selectors, and the resourceVersion they were read at.
pub fn matching(inner: &Inner, req: &Request) -> ApiResult<(Vec<Arc<Value>>, u64)> {
    let labels = LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""))?;
    let fields = FieldSelector::parse(req.query.get("fieldSelector").unwrap_or(""))?;
    let (objects, rv) = inner.store.list(
        &req.rt.storage_key(),
        req.path.namespace.as_deref().filter(|ns| !ns.is_empty()),
    );
    let objects = objects
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .collect();
    Ok((objects, rv))
}

pub fn list(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let (mut objects, mut rv) = matching(inner, req)?;
    if let Some(token) = req.query.get("continue") {
        let (token_rv, after) = decode_continue(token)?;
        rv = token_rv;
        objects.retain(|o| {
            (object::namespace(o), object::name(o)) > (after.0.as_str(), after.1.as_str())
        });
    }
    let mut next = None;
    if let Some(limit) = req.query.u64("limit")?.filter(|l| *l > 0)
        && objects.len() as u64 > limit
    {
        objects.truncate(limit as usize);
        let last = objects.last().map(|o| {
            (
                object::namespace(o).to_string(),
                object::name(o).to_string(),
            )
        });
        next = last.map(|last| encode_continue(rv, &last));
    }
    let accept = req.accept();
    let body = if table::wants_table(accept) {
        table::table(&req.rt, &objects, Some(rv), next.as_deref())
    } else if table::wants_metadata(accept) {
        table::partial_metadata_list(&objects, rv, next.as_deref())
    } else {
        let items: Vec<Value> = objects.iter().map(|o| present(&req.rt, o)).collect();
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if let Some(next) = &next {
            metadata["continue"] = json!(next);
        }
        json!({"kind": req.rt.list_kind(), "apiVersion": req.rt.api_version(), "metadata": metadata, "items": items})
    };
    Ok(axum::Json(body).into_response())
}

fn encode_continue(rv: u64, after: &(String, String)) -> String {
    let raw = json!({"rv": rv, "ns": after.0, "name": after.1}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

fn decode_continue(token: &str) -> ApiResult<(u64, (String, String))> {
    let invalid = || ApiError::bad_request(format!("invalid continue token {token:?}"));
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| invalid())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| invalid())?;
    let rv = v.get("rv").and_then(Value::as_u64).ok_or_else(invalid)?;
    let ns = v.get("ns").and_then(Value::as_str).ok_or_else(invalid)?;
    let name = v.get("name").and_then(Value::as_str).ok_or_else(invalid)?;
    Ok((rv, (ns.to_string(), name.to_string())))
}
