//! ClusterRegistrationToken handling (Fleet's `clusterregistrationtoken` handler): a token with a `ttl`
//! is deleted once it expires; otherwise it gets a ServiceAccount `SafeConcatName(token, uid)` allowed to
//! create ClusterRegistrations in the token's namespace and to read grants in the system registration
//! namespace, and the Secret `<token>` of type `fleet.cattle.io/cluster-registration-values` whose key
//! `values` holds the fleet-agent chart values (`clusterNamespace`, `apiServerURL`, `apiServerCA`, `token`,
//! `systemRegistrationNamespace`, `tokenName`). `status.expires` and `status.secretName` record both. The
//! ServiceAccount, Role and RoleBinding in the token's namespace are owned by the token; the Role and
//! RoleBinding in the system registration namespace are deleted with an expired token ([`remove_grants`])
//! and with the import token of a Cluster that leaves.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use fleet_api::ClusterRegistrationToken;
use fleet_bundle::names::safe_concat_name;
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use serde_json::json;

use super::registration::{SYSTEM_REGISTRATION_NAMESPACE, apply, encode, ensure_namespace};
use crate::context::Context;
use crate::delete::delete;
use crate::error::{Error, Result};
use crate::gitrepo::poll::parse_go_duration;
use crate::status::apply_status;

/// The Secret type of the agent values.
pub const VALUES_SECRET_TYPE: &str = "fleet.cattle.io/cluster-registration-values";
/// Token lifetime when the registration token has no TTL (seconds).
const UNLIMITED_SECONDS: i64 = 10 * 365 * 24 * 3600;

/// When a token expires: its creation time plus its `ttl`; `None` without a TTL. A TTL that is not a Go
/// duration is an error naming the field.
pub fn expiry(token: &ClusterRegistrationToken) -> Result<Option<DateTime<Utc>>> {
    let Some(ttl) = token.spec.ttl.as_deref().filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let object = format!(
        "ClusterRegistrationToken {}/{}",
        token.namespace().unwrap_or_default(),
        token.name_any()
    );
    let ttl = parse_go_duration(ttl)
        .ok_or_else(|| Error::invalid(&object, format!("spec.ttl {ttl:?} is not a duration")))?;
    let created = token
        .metadata
        .creation_timestamp
        .as_ref()
        .and_then(|t| DateTime::from_timestamp(t.0.as_second(), 0))
        .unwrap_or_else(Utc::now);
    let ttl = chrono::Duration::from_std(ttl)
        .map_err(|_| Error::invalid(&object, "spec.ttl is too large"))?;
    Ok(Some(created + ttl))
}

/// Reconciles one ClusterRegistrationToken.
pub fn reconcile(
    token: Arc<ClusterRegistrationToken>,
    ctx: Arc<Context>,
) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(token, ctx).boxed()
}

async fn reconcile_inner(
    token: Arc<ClusterRegistrationToken>,
    ctx: Arc<Context>,
) -> Result<Action> {
    let client = ctx.client.clone();
    let namespace = token.namespace().unwrap_or_default();
    let name = token.name_any();
    let tokens: Api<ClusterRegistrationToken> = Api::namespaced(client.clone(), &namespace);
    let expires = expiry(&token)?;
    let now = Utc::now();
    if expires.is_some_and(|at| at <= now) {
        tracing::info!(namespace, name, "registration token expired; deleting it");
        remove_grants(&client, &token).await?;
        delete(&tokens, &name).await?;
        return Ok(Action::await_change());
    }
    let requeue = |expires: Option<DateTime<Utc>>| match expires {
        Some(at) => {
            Action::requeue((at - now).to_std().unwrap_or_default() + Duration::from_millis(100))
        }
        None => Action::await_change(),
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    if secrets.get_opt(&name).await?.is_some() {
        return Ok(requeue(expires));
    }
    let account = account_name(&token);
    // Owned by the token, in its namespace: deleted with it. The Role and RoleBinding in the system
    // registration namespace cannot be owned across namespaces: [`remove_grants`] deletes them.
    let owner = json!([{"apiVersion": fleet_api::API_VERSION, "kind": "ClusterRegistrationToken",
        "name": name, "uid": token.uid().unwrap_or_default()}]);
    apply(
        &Api::<ServiceAccount>::namespaced(client.clone(), &namespace),
        &account,
        json!({"metadata": {"ownerReferences": owner}}),
    )
    .await?;
    let subjects = json!([{"kind": "ServiceAccount", "name": account, "namespace": namespace}]);
    ensure_namespace(&client, SYSTEM_REGISTRATION_NAMESPACE).await?;
    for (role_ns, rules) in [
        (
            namespace.as_str(),
            json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["clusterregistrations"], "verbs": ["create"]}]),
        ),
        (
            SYSTEM_REGISTRATION_NAMESPACE,
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
        ),
    ] {
        let metadata = if role_ns == namespace {
            json!({"ownerReferences": owner})
        } else {
            json!({})
        };
        apply(
            &Api::<Role>::namespaced(client.clone(), role_ns),
            &account,
            json!({"metadata": metadata, "rules": rules}),
        )
        .await?;
        apply(
            &Api::<RoleBinding>::namespaced(client.clone(), role_ns),
            &account,
            json!({"metadata": metadata,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
                "subjects": subjects}),
        )
        .await?;
    }
    let seconds = expires.map_or(UNLIMITED_SECONDS, |at| (at - now).num_seconds().max(1));
    let request: TokenRequest =
        serde_json::from_value(json!({"spec": {"audiences": [], "expirationSeconds": seconds}}))
            .map_err(|err| Error::invalid(&name, err.to_string()))?;
    let issued: TokenRequest = Api::<ServiceAccount>::namespaced(client.clone(), &namespace)
        .create_subresource("token", &account, &PostParams::default(), &request)
        .await?;
    let bearer = issued.status.map(|s| s.token).unwrap_or_default();
    let (api_server_url, api_server_ca) =
        hub_address(&client, &ctx.settings.system_namespace).await?;
    // JSON is YAML: the chart values as Fleet writes them.
    let values = serde_json::to_string_pretty(&json!({
        "clusterNamespace": namespace,
        "apiServerURL": api_server_url,
        "apiServerCA": api_server_ca,
        "token": bearer,
        "systemRegistrationNamespace": SYSTEM_REGISTRATION_NAMESPACE,
        "tokenName": name,
    }))
    .map_err(|err| Error::invalid(&name, err.to_string()))?;
    apply(
        &secrets,
        &name,
        json!({"metadata": {"ownerReferences": owner}, "type": VALUES_SECRET_TYPE,
            "data": {"values": encode(&values)}}),
    )
    .await?;
    apply_status(
        &tokens,
        &name,
        &json!({
            "expires": expires.map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            "secretName": name,
        }),
    )
    .await?;
    Ok(requeue(expires))
}

/// The ServiceAccount (and Role and RoleBinding) name of a token: `SafeConcatName(token, uid)`.
pub fn account_name(token: &ClusterRegistrationToken) -> String {
    safe_concat_name(&[&token.name_any(), &token.uid().unwrap_or_default()])
}

/// Deletes what a token was granted outside its namespace (its Role and RoleBinding in the system
/// registration namespace), which no ownerReference can take along; call it before the token goes.
pub async fn remove_grants(client: &kube::Client, token: &ClusterRegistrationToken) -> Result<()> {
    let account = account_name(token);
    let bindings = Api::<RoleBinding>::namespaced(client.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    let roles = Api::<Role>::namespaced(client.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    // Both are tried; the first failure is reported.
    let binding = delete(&bindings, &account).await;
    let role = delete(&roles, &account).await;
    binding.and(role)
}

/// The hub address agents use: `apiServerURL` and `apiServerCA` of the manager configuration (the ConfigMap
/// `fleet-controller`, key `config`, in the controller's namespace, as Fleet's chart renders it); empty when
/// unset.
pub async fn hub_address(
    client: &kube::Client,
    system_namespace: &str,
) -> Result<(String, String)> {
    let config = super::config::ManagerConfig::load(client, system_namespace).await?;
    Ok((config.api_server_url, config.api_server_ca))
}
