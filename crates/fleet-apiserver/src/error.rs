//! Errors answered as `meta/v1 Status` objects with kube-apiserver's reasons, codes and message shapes.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

/// An API error, rendered as a `Status` object with the HTTP code it carries.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{reason} ({code}): {message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        let mut details = json!({ "name": name, "kind": kind });
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        self.details = Some(details);
        self
    }

    /// `configmaps "x" not found` (kind is the plural resource name, as kube-apiserver writes it).
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// A path that no served resource matches.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// A namespaced object addressed with an empty namespace segment (`/namespaces//configmaps/x`): the
    /// answer of kube-apiserver's storage, which cannot build the object's key.
    pub fn namespace_required() -> Self {
        Self::bad_request("Namespace parameter required.")
    }

    /// A method the matched path does not serve, as kube-apiserver's router answers it (e.g. POST on the
    /// all-namespaces collection of a namespaced resource).
    pub fn method_not_routed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// Optimistic-concurrency failure on a stale resourceVersion.
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    pub fn stale_resource_version(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 with field causes, as kube-apiserver words it: `Deployment.apps "x" is invalid: spec.selector:
    /// Required value` (the kind qualified by its group; each cause's reason follows its message's kind).
    pub fn invalid(group: &str, kind: &str, name: &str, causes: &[(String, String)]) -> Self {
        let summary: Vec<String> = causes
            .iter()
            .map(|(field, msg)| format!("{field}: {msg}"))
            .collect();
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let message = match summary.len() {
            1 => format!("{qualified} \"{name}\" is invalid: {}", summary[0]),
            _ => format!(
                "{qualified} \"{name}\" is invalid: [{}]",
                summary.join(", ")
            ),
        };
        let mut err = Self::new(422, "Invalid", message).with_details(group, kind, name);
        let causes: Vec<Value> = causes
            .iter()
            .map(|(field, msg)| json!({ "reason": cause_reason(msg), "message": msg, "field": field }))
            .collect();
        if let Some(details) = err.details.as_mut() {
            details["causes"] = Value::Array(causes);
        }
        err
    }

    /// A JSON patch that cannot be applied to the stored object (a failed `test`, a path that is not there):
    /// kube-apiserver answers it as a generic server response, 422 `Invalid` with a fixed message and empty
    /// details, keeping none of the patch library's text.
    pub fn json_patch_not_applicable() -> Self {
        let mut err = Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        );
        err.details = Some(json!({}));
        err
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method})"),
        )
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn too_large() -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728",
        )
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
            ),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status["code"] = json!(self.code);
        status
    }
}

/// `configmaps` or `deployments.apps`, as kube-apiserver names a resource in messages.
pub fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, axum::Json(self.to_status())).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The `StatusCause` reason of a field error, from the words its message starts with (Go's `field.Error`
/// types: Required value, Unsupported value, Forbidden, Duplicate value, Invalid value, ...).
fn cause_reason(message: &str) -> &'static str {
    const REASONS: [(&str, &str); 6] = [
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
    ];
    REASONS
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map_or("FieldValueInvalid", |(_, reason)| reason)
}
