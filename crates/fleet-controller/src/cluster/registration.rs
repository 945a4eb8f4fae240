//! ClusterRegistration handling (Fleet's `clusterregistration` controller): finds or creates the Cluster
//! by clientID in the registration's namespace, waits for its cluster namespace, creates the per-request
//! ServiceAccount there, grants it exactly what an agent needs (its BundleDeployments and their status,
//! secrets and configmaps of its cluster namespace, Content, its own Cluster's status), writes the grant
//! Secret `c-<sha256(clientID‖clientRandom)>` with a token for that ServiceAccount into the system
//! registration namespace, marks the registration granted and deletes older registrations of the same
//! clientID.

use std::sync::Arc;
use std::time::Duration;

use fleet_api::{Cluster, ClusterRegistration};
use fleet_bundle::names::{key_hash, safe_concat_name};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::context::{Context, FIELD_MANAGER};
use crate::delete::{delete, delete_labelled};
use crate::error::{Error, Result};
use crate::status::apply_status;

/// Where grant Secrets are written (Fleet's default `systemRegistrationNamespace`).
pub const SYSTEM_REGISTRATION_NAMESPACE: &str = "cattle-fleet-clusters-system";
/// The ClusterRole every agent is bound to in its cluster namespace.
pub const BUNDLE_DEPLOYMENT_ROLE: &str = "fleet-bundle-deployment";
/// The ClusterRole granting read access to Content.
pub const CONTENT_ROLE: &str = "fleet-content";
/// How long a granted token is valid (seconds).
const TOKEN_SECONDS: i64 = 10 * 365 * 24 * 3600;

/// Name of the grant Secret for a registration (Fleet's naming rule, shared with the agent).
pub use fleet_bundle::names::grant_secret_name;

/// The name of a Cluster created for `client_id`.
pub fn cluster_name_for(client_id: &str) -> String {
    safe_concat_name(&["cluster", &key_hash(client_id)])
}

/// Registration labels copied to the Cluster: `fleet.cattle.io/*` and `management.cattle.io/*` dropped,
/// except `created-by-agent-pod`.
fn sanitize_labels(
    labels: &std::collections::BTreeMap<String, String>,
) -> serde_json::Map<String, Value> {
    labels
        .iter()
        .filter(|(key, _)| {
            key.as_str() == fleet_api::labels::CREATED_BY_AGENT_POD
                || !(key.starts_with("fleet.cattle.io/")
                    || key.starts_with("management.cattle.io/"))
        })
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect()
}

/// The rules of [`BUNDLE_DEPLOYMENT_ROLE`].
pub fn bundle_deployment_rules() -> Value {
    json!([
        {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["fleet.cattle.io"], "resources": ["bundledeployments/status"], "verbs": ["update", "patch"]},
        {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get"]},
    ])
}

/// The rules of [`CONTENT_ROLE`].
pub fn content_rules() -> Value {
    json!([{"apiGroups": ["fleet.cattle.io"], "resources": ["contents"], "verbs": ["get"]}])
}

/// Server-side applies `body` as `name` (apiVersion, kind and name filled in).
pub(crate) async fn apply<K>(api: &Api<K>, name: &str, body: Value) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    let mut body = body;
    body["apiVersion"] = json!(K::api_version(&()));
    body["kind"] = json!(K::kind(&()));
    body["metadata"]["name"] = json!(name);
    Ok(api
        .patch(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?)
}

/// Reconciles one ClusterRegistration.
pub fn reconcile(
    registration: Arc<ClusterRegistration>,
    ctx: Arc<Context>,
) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(registration, ctx).boxed()
}

async fn reconcile_inner(
    registration: Arc<ClusterRegistration>,
    ctx: Arc<Context>,
) -> Result<Action> {
    if registration.status.as_ref().is_some_and(|s| s.granted) {
        return Ok(Action::await_change());
    }
    let client = ctx.client.clone();
    let namespace = registration.namespace().unwrap_or_default();
    let reg_name = registration.name_any();
    let spec = &registration.spec;
    let object = format!("ClusterRegistration {namespace}/{reg_name}");
    if spec.client_id.is_empty() || spec.client_random.is_empty() {
        return Err(Error::invalid(
            object,
            "spec.clientID and spec.clientRandom are required",
        ));
    }
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), &namespace);
    let existing = clusters
        .list(&Default::default())
        .await?
        .items
        .into_iter()
        .find(|c| c.spec.client_id == spec.client_id);
    let cluster = match existing {
        Some(cluster) => cluster,
        None => {
            let name = cluster_name_for(&spec.client_id);
            apply(
                &clusters,
                &name,
                json!({"metadata": {"labels": sanitize_labels(&spec.cluster_labels)},
                       "spec": {"clientID": spec.client_id}}),
            )
            .await?
        }
    };
    let cluster_name = cluster.name_any();
    let cluster_ns = cluster
        .status
        .as_ref()
        .map(|s| s.namespace.clone())
        .unwrap_or_default();
    if cluster_ns.is_empty() {
        // The Cluster reconciler creates the namespace and records it; a status change wakes us.
        return Ok(Action::requeue(Duration::from_millis(500)));
    }
    let uid = registration.uid().unwrap_or_default();
    let account = safe_concat_name(&[&reg_name, &uid]);
    let owner = json!([{"apiVersion": fleet_api::API_VERSION, "kind": "ClusterRegistration",
        "name": reg_name, "uid": uid}]);
    apply(
        &Api::<ServiceAccount>::namespaced(client.clone(), &cluster_ns),
        &account,
        json!({"metadata": {"labels": {fleet_api::labels::CLUSTER: cluster_name}}}),
    )
    .await?;
    let subjects = json!([{"kind": "ServiceAccount", "name": account, "namespace": cluster_ns}]);
    // Its own Cluster's status, in the registration namespace.
    let status_role = safe_concat_name(&[&account, "cluster-status"]);
    apply(
        &Api::<Role>::namespaced(client.clone(), &namespace),
        &status_role,
        json!({"metadata": {"ownerReferences": owner}, "rules": [{"apiGroups": ["fleet.cattle.io"],
            "resources": ["clusters/status"], "resourceNames": [cluster_name], "verbs": ["get", "patch"]}]}),
    )
    .await?;
    apply(
        &Api::<RoleBinding>::namespaced(client.clone(), &namespace),
        &status_role,
        json!({"metadata": {"ownerReferences": owner},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": status_role},
            "subjects": subjects}),
    )
    .await?;
    // Its BundleDeployments and their options (secrets, configmaps), in its cluster namespace.
    apply(
        &Api::<ClusterRole>::all(client.clone()),
        BUNDLE_DEPLOYMENT_ROLE,
        json!({"rules": bundle_deployment_rules()}),
    )
    .await?;
    apply(
        &Api::<RoleBinding>::namespaced(client.clone(), &cluster_ns),
        &account,
        json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": BUNDLE_DEPLOYMENT_ROLE}, "subjects": subjects}),
    )
    .await?;
    // Content, cluster-scoped.
    apply(
        &Api::<ClusterRole>::all(client.clone()),
        CONTENT_ROLE,
        json!({"rules": content_rules()}),
    )
    .await?;
    // Cluster-scoped: no ownerReference to the namespaced registration (kube-controller-manager never
    // collects a cluster-scoped dependent of a namespaced owner); labelled instead, and deleted with the
    // registration by [`remove_grants`].
    apply(
        &Api::<ClusterRoleBinding>::all(client.clone()),
        &account,
        json!({"metadata": {"labels": grant_labels(&reg_name, &namespace)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CONTENT_ROLE},
            "subjects": subjects}),
    )
    .await?;
    let request: TokenRequest = serde_json::from_value(
        json!({"spec": {"audiences": [], "expirationSeconds": TOKEN_SECONDS}}),
    )
    .map_err(|err| Error::invalid(&object, err.to_string()))?;
    let issued: TokenRequest = Api::<ServiceAccount>::namespaced(client.clone(), &cluster_ns)
        .create_subresource("token", &account, &PostParams::default(), &request)
        .await?;
    let token = issued.status.map(|s| s.token).unwrap_or_default();
    let grant = grant_secret_name(&spec.client_id, &spec.client_random);
    let system_ns = SYSTEM_REGISTRATION_NAMESPACE;
    ensure_namespace(&client, system_ns).await?;
    apply(
        &Api::<Secret>::namespaced(client.clone(), system_ns),
        &grant,
        json!({"metadata": {"labels": grant_labels(&reg_name, &namespace)},
        "type": "fleet.cattle.io/cluster-registration",
        "data": {
            "token": encode(&token),
            "deploymentNamespace": encode(&cluster_ns),
            "clusterNamespace": encode(&namespace),
            "clusterName": encode(&cluster_name),
            "systemNamespace": encode(&ctx.settings.system_namespace),
        }}),
    )
    .await?;
    apply_status(
        &Api::<ClusterRegistration>::namespaced(client, &namespace),
        &reg_name,
        &json!({"clusterName": cluster_name, "granted": true}),
    )
    .await?;
    tracing::info!(registration = %object, cluster = %cluster_name, "registration granted");
    remove_older_registrations(&ctx.client, &registration, &cluster_ns).await?;
    Ok(Action::await_change())
}

/// The labels naming the registration a grant Secret or ClusterRoleBinding was made for.
fn grant_labels(registration: &str, namespace: &str) -> Value {
    json!({fleet_api::labels::CLUSTER_REGISTRATION: registration,
        fleet_api::labels::CLUSTER_REGISTRATION_NAMESPACE: namespace})
}

/// Deletes what a registration was granted outside its namespace, which its ownerReference cannot take
/// with it: the grant Secrets in the system registration namespace and the ClusterRoleBinding.
pub async fn remove_grants(
    client: &kube::Client,
    namespace: &str,
    registration: &str,
) -> Result<()> {
    let selector = format!(
        "{}={registration},{}={namespace}",
        fleet_api::labels::CLUSTER_REGISTRATION,
        fleet_api::labels::CLUSTER_REGISTRATION_NAMESPACE,
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    delete_labelled(&secrets, &selector).await?;
    delete_labelled(&Api::<ClusterRoleBinding>::all(client.clone()), &selector).await
}

/// Deletes the registrations with the same clientID made before `granted` (Fleet keeps only the newest),
/// with their grants and, in the cluster namespace `cluster_ns`, their ServiceAccounts (which invalidates
/// every token minted for them) and RoleBindings: a cluster that registered again no longer holds the
/// credentials it was given before.
async fn remove_older_registrations(
    client: &kube::Client,
    granted: &ClusterRegistration,
    cluster_ns: &str,
) -> Result<()> {
    let api: Api<ClusterRegistration> =
        Api::namespaced(client.clone(), &granted.namespace().unwrap_or_default());
    // Creation times have second precision: the name breaks ties, so two requests never remove each other.
    let age = |r: &ClusterRegistration| (r.metadata.creation_timestamp.clone(), r.name_any());
    let granted_age = age(granted);
    for older in api.list(&Default::default()).await?.items {
        if older.spec.client_id == granted.spec.client_id && age(&older) < granted_age {
            remove_grants(
                client,
                &older.namespace().unwrap_or_default(),
                &older.name_any(),
            )
            .await?;
            let account = safe_concat_name(&[&older.name_any(), &older.uid().unwrap_or_default()]);
            delete(
                &Api::<RoleBinding>::namespaced(client.clone(), cluster_ns),
                &account,
            )
            .await?;
            delete(
                &Api::<ServiceAccount>::namespaced(client.clone(), cluster_ns),
                &account,
            )
            .await?;
            delete(&api, &older.name_any()).await?;
        }
    }
    Ok(())
}

/// Creates a namespace if it is missing.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<()> {
    apply(
        &Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone()),
        name,
        json!({"metadata": {}}),
    )
    .await
    .map(|_| ())
}

/// Secret data encoding (base64).
pub fn encode(value: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_labels_are_dropped() {
        let labels = [
            ("env", "prod"),
            ("fleet.cattle.io/x", "1"),
            ("management.cattle.io/y", "1"),
            (fleet_api::labels::CREATED_BY_AGENT_POD, "pod"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let kept: Vec<_> = sanitize_labels(&labels).keys().cloned().collect();
        assert_eq!(kept, ["env", fleet_api::labels::CREATED_BY_AGENT_POD]);
    }
}
