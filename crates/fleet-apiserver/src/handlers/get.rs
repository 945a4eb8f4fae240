//! GET on one object (or its `status`).

use axum::response::Response;
use http::StatusCode;

use crate::error::{ApiError, ApiResult};
use crate::handlers::respond::{object_key, respond_object};
use crate::http::request::Request;
use crate::state::Inner;

pub fn get(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let name = req.path.name.clone().unwrap_or_default();
    let obj = inner
        .store
        .get(&object_key(req, &name))
        .ok_or_else(|| ApiError::not_found(&req.rt.group, &req.rt.plural, &name))?;
    Ok(respond_object(req, StatusCode::OK, &obj))
}
