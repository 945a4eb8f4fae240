//! ServiceAccount tokens: signed bearer tokens (HMAC-SHA256 over the ServiceAccount's identity, expiry and,
//! for token Secrets, the Secret's name), issued by the TokenRequest subresource and filled into Secrets of
//! type `kubernetes.io/service-account-token`. A token stops working when its ServiceAccount (or Secret) is
//! deleted or it expires. The signing key lives in the data dir when there is one.

use axum::response::{IntoResponse, Response};
use base64::Engine;
use http::StatusCode;
use serde_json::{Value, json};

use crate::auth::authenticate::User;
use crate::error::{ApiError, ApiResult};
use crate::http::request::Request;
use crate::kinds::registry::ResourceType;
use crate::state::Inner;
use crate::storage::object;
use crate::storage::store::ObjKey;

const PREFIX: &str = "fleet-sa.";
const SECRET_TYPE: &str = "kubernetes.io/service-account-token";

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

/// Issues a token for a ServiceAccount.
pub fn issue(
    inner: &Inner,
    namespace: &str,
    sa: &str,
    sa_uid: &str,
    expires: Option<i64>,
    secret: Option<&str>,
) -> String {
    let claims =
        json!({"ns": namespace, "sa": sa, "uid": sa_uid, "exp": expires, "secret": secret})
            .to_string();
    let payload = b64().encode(claims.as_bytes());
    let signature = b64().encode(inner.signing_key.mac(payload.as_bytes()));
    format!("{PREFIX}{payload}.{signature}")
}

/// The ServiceAccount a token stands for, if it is valid now.
pub fn verify(inner: &Inner, token: &str) -> Option<User> {
    let (payload, signature) = token.strip_prefix(PREFIX)?.split_once('.')?;
    let expected = b64().encode(inner.signing_key.mac(payload.as_bytes()));
    if !constant_time_eq(expected.as_bytes(), signature.as_bytes()) {
        return None;
    }
    let claims: Value = serde_json::from_slice(&b64().decode(payload).ok()?).ok()?;
    let ns = claims.get("ns")?.as_str()?;
    let sa = claims.get("sa")?.as_str()?;
    if let Some(exp) = claims.get("exp").and_then(Value::as_i64)
        && chrono::Utc::now().timestamp() >= exp
    {
        return None;
    }
    let account = inner.store.get(&ObjKey::new("/serviceaccounts", ns, sa))?;
    let uid = claims.get("uid").and_then(Value::as_str).unwrap_or("");
    if !uid.is_empty() && uid != object::uid(&account) {
        return None;
    }
    if let Some(secret) = claims.get("secret").and_then(Value::as_str) {
        inner.store.get(&ObjKey::new("/secrets", ns, secret))?;
    }
    Some(User::service_account(ns, sa, object::uid(&account)))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `POST .../serviceaccounts/{name}/token` (what `kubectl create token` calls).
pub fn token_request(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let namespace = req.path.namespace.clone().unwrap_or_default();
    let name = req.path.name.clone().unwrap_or_default();
    let account = inner
        .store
        .get(&ObjKey::new("/serviceaccounts", &namespace, &name))
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", &name))?;
    let body = if req.body.is_empty() {
        json!({})
    } else {
        req.object()?
    };
    let seconds = body
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600)
        .clamp(600, 1 << 32);
    let expires = chrono::Utc::now() + chrono::Duration::seconds(seconds);
    let token = issue(
        inner,
        &namespace,
        &name,
        object::uid(&account),
        Some(expires.timestamp()),
        None,
    );
    let mut response = body.clone();
    response["apiVersion"] = json!("authentication.k8s.io/v1");
    response["kind"] = json!("TokenRequest");
    let meta = object::metadata_mut(&mut response);
    meta.insert("name".into(), json!(name));
    meta.insert("namespace".into(), json!(namespace));
    meta.insert("creationTimestamp".into(), Value::Null);
    if !response.get("spec").is_some_and(Value::is_object) {
        response["spec"] = json!({});
    }
    response["spec"]["expirationSeconds"] = json!(seconds);
    response["status"] = json!({"token": token, "expirationTimestamp": expires.format("%Y-%m-%dT%H:%M:%SZ").to_string()});
    Ok((StatusCode::CREATED, axum::Json(response)).into_response())
}

/// Fills `data.token`, `data.namespace` and `data.ca.crt` of a new ServiceAccount token Secret.
pub fn fill_secret(inner: &Inner, rt: &ResourceType, obj: &mut Value) {
    if !rt.group.is_empty()
        || rt.plural != "secrets"
        || obj.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
    {
        return;
    }
    let namespace = object::namespace(obj).to_string();
    let secret = object::name(obj).to_string();
    let Some(sa) = object::metadata(obj)
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get("kubernetes.io/service-account.name"))
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let sa_uid = inner
        .store
        .get(&ObjKey::new("/serviceaccounts", &namespace, &sa))
        .map(|a| object::uid(&a).to_string())
        .unwrap_or_default();
    let token = issue(inner, &namespace, &sa, &sa_uid, None, Some(&secret));
    let std64 = base64::engine::general_purpose::STANDARD;
    let data = obj
        .as_object_mut()
        .map(|m| m.entry("data").or_insert_with(|| json!({})));
    if let Some(Value::Object(data)) = data {
        data.insert("token".into(), json!(std64.encode(token)));
        data.insert("namespace".into(), json!(std64.encode(&namespace)));
        if let Some(ca) = &inner.ca_pem {
            data.insert("ca.crt".into(), json!(std64.encode(ca)));
        }
    }
    if let Some(annotations) = object::metadata_mut(obj)
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.insert("kubernetes.io/service-account.uid".into(), json!(sa_uid));
    }
}
