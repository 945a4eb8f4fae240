//! The downstream side of manager-initiated registration: a client built from the kubeconfig in a Cluster's
//! `kubeConfigSecret` (key `value`, as Rancher writes it), and applying or removing the agent's objects
//! ([`super::manifests`]) there. Errors name the Secret and key, never its content.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::json;

use super::manifests::{
    AGENT_NAME, BOOTSTRAP_SECRET, CREDENTIALS_SECRET, MANAGED_BY, MANAGED_BY_LABEL, NETWORK_POLICY,
    Object, POD_DISRUPTION_BUDGET, PRIORITY_CLASS, cluster_role_binding_name, cluster_role_name,
};
use crate::context::FIELD_MANAGER;
use crate::error::{Error, Result};

/// The key of the kubeconfig in a `kubeConfigSecret` (Fleet's `KubeConfigSecretValueKey`).
pub const KUBECONFIG_KEY: &str = "value";
/// How long one request to a downstream cluster may take (Fleet's `RestConfigTimeout`).
const TIMEOUT: Duration = Duration::from_secs(15);

/// The kubeconfig Secret of a Cluster, as read from the hub.
pub struct KubeconfigSecret {
    /// `namespace/name`, for messages.
    pub name: String,
    pub kubeconfig: String,
    /// Key `apiServerURL`: where this cluster's agent reaches the hub, overriding the controller's setting.
    pub api_server_url: String,
    /// Key `apiServerCA`.
    pub api_server_ca: String,
}

/// Reads the Secret `name` in `namespace`; `None` when it does not exist.
pub async fn read_secret(
    hub: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<KubeconfigSecret>> {
    let Some(secret) = Api::<Secret>::namespaced(hub.clone(), namespace)
        .get_opt(name)
        .await?
    else {
        return Ok(None);
    };
    let data = secret.data.unwrap_or_default();
    let text = |key: &str| {
        data.get(key)
            .map(|b| String::from_utf8_lossy(&b.0).into_owned())
            .unwrap_or_default()
    };
    Ok(Some(KubeconfigSecret {
        name: format!("{namespace}/{name}"),
        kubeconfig: text(KUBECONFIG_KEY),
        api_server_url: text("apiServerURL"),
        api_server_ca: text("apiServerCA"),
    }))
}

/// A client for the cluster the Secret's kubeconfig points at. The parser's own messages are not passed on:
/// they may quote the text, and with it a credential.
pub async fn client(secret: &KubeconfigSecret) -> Result<kube::Client> {
    let object = format!("Secret {}", secret.name);
    if secret.kubeconfig.trim().is_empty() {
        return Err(Error::invalid(
            object,
            format!("key {KUBECONFIG_KEY} is missing or empty"),
        ));
    }
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&secret.kubeconfig).map_err(|_| {
        Error::invalid(
            &object,
            format!("key {KUBECONFIG_KEY} does not hold a valid kubeconfig"),
        )
    })?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|_| {
            Error::invalid(
                &object,
                format!(
                    "the kubeconfig in key {KUBECONFIG_KEY} has no usable current context, cluster or user"
                ),
            )
        })?;
    config.connect_timeout = Some(TIMEOUT);
    config.read_timeout = Some(TIMEOUT);
    config.write_timeout = Some(TIMEOUT);
    kube::Client::try_from(config).map_err(|err| {
        Error::invalid(
            &object,
            format!("cannot build a client from key {KUBECONFIG_KEY}: {err}"),
        )
    })
}

/// The API resource of each kind the agent's objects have.
fn resource(kind: &str) -> ApiResource {
    let (group, version, plural) = match kind {
        "Namespace" => ("", "v1", "namespaces"),
        "ServiceAccount" => ("", "v1", "serviceaccounts"),
        "ConfigMap" => ("", "v1", "configmaps"),
        "Secret" => ("", "v1", "secrets"),
        "ClusterRole" => ("rbac.authorization.k8s.io", "v1", "clusterroles"),
        "ClusterRoleBinding" => ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
        "Deployment" => ("apps", "v1", "deployments"),
        "Pod" => ("", "v1", "pods"),
        "NetworkPolicy" => ("networking.k8s.io", "v1", "networkpolicies"),
        "PodDisruptionBudget" => ("policy", "v1", "poddisruptionbudgets"),
        "PriorityClass" => ("scheduling.k8s.io", "v1", "priorityclasses"),
        other => unreachable!("the agent manifests have no {other}"),
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn api(client: &kube::Client, kind: &str, namespace: &str) -> Api<DynamicObject> {
    let resource = resource(kind);
    if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

/// Server-side applies the objects; the Namespace is only created when missing (and then labelled as ours),
/// so that a namespace the user made is never taken over nor, later, deleted.
pub async fn apply(client: &kube::Client, objects: &[Object]) -> Result<()> {
    for object in objects {
        let api = api(client, object.kind, &object.namespace);
        let mut body = object.body.clone();
        let resource = resource(object.kind);
        body["apiVersion"] = json!(resource.api_version);
        body["kind"] = json!(resource.kind);
        if object.kind == "Namespace" {
            let namespace: DynamicObject = serde_json::from_value(body)
                .map_err(|err| Error::invalid(&object.name, err.to_string()))?;
            match api.create(&PostParams::default(), &namespace).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(err) => return Err(err.into()),
            }
            continue;
        }
        api.patch(
            &object.name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?;
    }
    Ok(())
}

/// The label on the agent's inventories (one ConfigMap per deployed BundleDeployment in its namespace).
pub const INVENTORY_LABEL: &str = "fleet.cattle.io/bundle-deployment";

/// Whether the agent in `namespace` still has inventories, i.e. deployed BundleDeployments not yet uninstalled.
pub async fn has_inventories(client: &kube::Client, namespace: &str) -> Result<bool> {
    let list = api(client, "ConfigMap", namespace)
        .list_metadata(
            &kube::api::ListParams::default()
                .labels(INVENTORY_LABEL)
                .limit(1),
        )
        .await?;
    Ok(!list.items.is_empty())
}

/// Deletes the agent's Deployment in `namespace` (its pods then terminate); gone already is fine.
pub async fn stop_agent(client: &kube::Client, namespace: &str) -> Result<()> {
    delete(client, "Deployment", namespace, AGENT_NAME).await
}

/// Whether pods of the agent in `namespace` are left: after its Deployment is deleted they keep running until
/// they have terminated, and still check in with the agent's credentials meanwhile.
pub async fn agent_pods_left(client: &kube::Client, namespace: &str) -> Result<bool> {
    let list = api(client, "Pod", namespace)
        .list_metadata(
            &kube::api::ListParams::default()
                .labels(&format!("app={AGENT_NAME}"))
                .limit(1),
        )
        .await?;
    Ok(!list.items.is_empty())
}

/// Reads one object, `None` when it does not exist.
pub async fn get(
    client: &kube::Client,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<DynamicObject>> {
    Ok(api(client, kind, namespace).get_opt(name).await?)
}

async fn delete(client: &kube::Client, kind: &str, namespace: &str, name: &str) -> Result<()> {
    match api(client, kind, namespace)
        .delete(name, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// Deletes the scheduling objects (PriorityClass, PodDisruptionBudget) of the agent in `namespace` that
/// `objects` no longer hold: the Cluster's `agentSchedulingCustomization` dropped them.
pub async fn remove_unwanted_scheduling(
    client: &kube::Client,
    namespace: &str,
    objects: &[Object],
) -> Result<()> {
    for (kind, object_ns, name) in [
        ("PodDisruptionBudget", namespace, POD_DISRUPTION_BUDGET),
        ("PriorityClass", "", PRIORITY_CLASS),
    ] {
        if !objects.iter().any(|o| o.kind == kind) {
            delete(client, kind, object_ns, name).await?;
        }
    }
    Ok(())
}

/// Deletes every object an agent in `namespace` was installed with, and the credentials it registered
/// (Fleet's `deleteAgentResources`); the namespace itself only when `with_namespace` and the controller
/// created it. Objects already gone are fine.
pub async fn remove(client: &kube::Client, namespace: &str, with_namespace: bool) -> Result<()> {
    stop_agent(client, namespace).await?;
    delete(
        client,
        "PodDisruptionBudget",
        namespace,
        POD_DISRUPTION_BUDGET,
    )
    .await?;
    delete(client, "PriorityClass", "", PRIORITY_CLASS).await?;
    delete(client, "NetworkPolicy", namespace, NETWORK_POLICY).await?;
    delete(
        client,
        "ClusterRoleBinding",
        "",
        &cluster_role_binding_name(namespace),
    )
    .await?;
    delete(client, "ClusterRole", "", &cluster_role_name(namespace)).await?;
    for secret in [BOOTSTRAP_SECRET, CREDENTIALS_SECRET] {
        delete(client, "Secret", namespace, secret).await?;
    }
    delete(client, "ConfigMap", namespace, AGENT_NAME).await?;
    delete(client, "ServiceAccount", namespace, AGENT_NAME).await?;
    if with_namespace
        && let Some(ns) = get(client, "Namespace", "", namespace).await?
        && ns.metadata.labels.unwrap_or_default().get(MANAGED_BY_LABEL)
            == Some(&MANAGED_BY.to_string())
    {
        delete(client, "Namespace", "", namespace).await?;
    }
    Ok(())
}
