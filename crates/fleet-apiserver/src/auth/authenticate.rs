//! Authentication: who a request is from. Bearer tokens (the admin credential, ServiceAccount tokens issued
//! by TokenRequest or held in token Secrets); with authentication off, every request is the admin.

use std::collections::HashMap;
use std::sync::RwLock;

use http::HeaderMap;

use crate::error::{ApiError, ApiResult};

/// An authenticated identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub groups: Vec<String>,
    pub uid: String,
}

impl User {
    pub fn admin() -> Self {
        User {
            name: "system:admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            uid: String::new(),
        }
    }

    pub fn service_account(namespace: &str, name: &str, uid: &str) -> Self {
        User {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".into(),
            ],
            uid: uid.into(),
        }
    }

    pub fn is_superuser(&self) -> bool {
        self.groups.iter().any(|g| g == "system:masters")
    }

    /// `(namespace, name)` when this user is a ServiceAccount.
    pub fn service_account_ref(&self) -> Option<(&str, &str)> {
        self.name
            .strip_prefix("system:serviceaccount:")?
            .split_once(':')
    }
}

/// Known bearer tokens and the identities they stand for.
#[derive(Debug, Default)]
pub struct Authenticator {
    /// When false, requests without a token are treated as the admin (in-process and loopback test servers).
    pub required: bool,
    tokens: RwLock<HashMap<String, User>>,
}

impl Authenticator {
    pub fn new(required: bool) -> Self {
        Authenticator {
            required,
            tokens: RwLock::default(),
        }
    }

    pub fn add_token(&self, token: impl Into<String>, user: User) {
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.into(), user);
    }

    /// The user a request's bearer token names; `verify` checks tokens that are not registered here
    /// (signed ServiceAccount tokens).
    pub fn authenticate(
        &self,
        headers: &HeaderMap,
        verify: impl Fn(&str) -> Option<User>,
    ) -> ApiResult<User> {
        let bearer = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        match bearer {
            Some(token) => self
                .tokens
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(token)
                .cloned()
                .or_else(|| verify(token))
                .ok_or_else(ApiError::unauthorized),
            None if self.required => Err(ApiError::unauthorized()),
            None => Ok(User::admin()),
        }
    }
}

/// A new random token (256 bits, URL-safe base64).
pub fn new_token() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The admin token kept in `dir/admin.token` (created on first start), or a fresh one without a data dir.
pub fn load_or_create_admin_token(dir: Option<&std::path::Path>) -> std::io::Result<String> {
    let Some(dir) = dir else {
        return Ok(new_token());
    };
    let path = dir.join("admin.token");
    match std::fs::read_to_string(&path) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_string()),
        _ => {
            std::fs::create_dir_all(dir)?;
            let token = new_token();
            std::fs::write(&path, &token)?;
            Ok(token)
        }
    }
}

/// Applies `Impersonate-User` / `Impersonate-Group` headers (kubectl `--as`, `--as-group`) when `may` allows
/// the requesting user to impersonate that name; otherwise 403 as kube-apiserver answers.
pub fn impersonate(
    user: User,
    headers: &HeaderMap,
    may: impl Fn(&User, &str) -> bool,
) -> ApiResult<User> {
    let Some(name) = headers
        .get("impersonate-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return Ok(user);
    };
    if !may(&user, &name) {
        return Err(ApiError::forbidden(format!(
            "users \"{name}\" is forbidden: User \"{}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
            user.name
        )));
    }
    let mut target = match name
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, sa)) => User::service_account(ns, sa, ""),
        None => User {
            name: name.clone(),
            groups: vec!["system:authenticated".into()],
            uid: String::new(),
        },
    };
    for group in headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        if !target.groups.iter().any(|g| g == group) {
            target.groups.push(group.to_string());
        }
    }
    Ok(target)
}
