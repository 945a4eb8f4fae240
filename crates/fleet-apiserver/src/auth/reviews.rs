//! Review kinds answered on create and never stored: SelfSubjectAccessReview (`kubectl auth can-i`),
//! SubjectAccessReview, SelfSubjectRulesReview, TokenReview and SelfSubjectReview (`kubectl auth whoami`).

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use crate::auth::authenticate::User;
use crate::auth::rbac::{self, Attributes};
use crate::error::ApiResult;
use crate::http::request::Request;
use crate::state::Inner;

pub fn create(inner: &Inner, req: &Request) -> ApiResult<Response> {
    let mut body = req.object()?;
    body["apiVersion"] = json!(req.rt.api_version());
    body["kind"] = json!(req.rt.kind);
    let status = match req.rt.plural.as_str() {
        "selfsubjectaccessreviews" => access_review(inner, &req.user, &body),
        "subjectaccessreviews" => {
            let spec = body.get("spec").cloned().unwrap_or(Value::Null);
            let user = User {
                name: spec
                    .get("user")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                groups: spec
                    .get("groups")
                    .and_then(Value::as_array)
                    .map(|g| {
                        g.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                uid: String::new(),
            };
            access_review(inner, &user, &body)
        }
        "selfsubjectrulesreviews" => {
            let ns = body
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .unwrap_or("");
            let rules = rbac::rules_for(inner, &req.user, ns);
            let resource_rules: Vec<Value> = rules
                .iter()
                .filter(|r| r.get("resources").is_some())
                .cloned()
                .collect();
            let mut all = resource_rules;
            if req.user.is_superuser() {
                all.push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
            }
            json!({"resourceRules": all, "nonResourceRules": [], "incomplete": false})
        }
        "tokenreviews" => {
            let token = body
                .pointer("/spec/token")
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut headers = http::HeaderMap::new();
            let user = format!("Bearer {token}")
                .parse()
                .ok()
                .and_then(|v| {
                    headers.insert(http::header::AUTHORIZATION, v);
                    inner
                        .auth
                        .authenticate(&headers, |t| crate::auth::tokens::verify(inner, t))
                        .ok()
                })
                .filter(|_| !token.is_empty());
            match user {
                Some(u) => json!({"authenticated": true, "user": user_info(&u)}),
                None => json!({"authenticated": false, "error": "invalid bearer token"}),
            }
        }
        _ => json!({"userInfo": user_info(&req.user)}),
    };
    body["status"] = status;
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

fn user_info(user: &User) -> Value {
    json!({"username": user.name, "uid": user.uid, "groups": user.groups})
}

fn access_review(inner: &Inner, user: &User, body: &Value) -> Value {
    let Some(ra) = body.pointer("/spec/resourceAttributes") else {
        // Non-resource URLs (discovery, health) are open to authenticated users.
        return json!({"allowed": true});
    };
    let s = |f: &str| ra.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let mut resource = s("resource");
    let mut subresource = s("subresource");
    if let Some((r, sub)) = resource.clone().split_once('/') {
        resource = r.to_string();
        subresource = sub.to_string();
    }
    let attrs = Attributes {
        verb: s("verb"),
        group: s("group"),
        resource,
        subresource,
        namespace: s("namespace"),
        name: s("name"),
    };
    if rbac::allowed(inner, user, &attrs) {
        json!({"allowed": true, "reason": "allowed by RBAC"})
    } else {
        json!({"allowed": false})
    }
}
