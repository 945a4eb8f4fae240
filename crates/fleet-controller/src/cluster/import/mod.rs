//! Manager-initiated registration (Fleet's agentmanagement `import` controller, the way Rancher registers
//! clusters): a Cluster with `spec.kubeConfigSecret` gets its agent installed by the controller, through the
//! kubeconfig in that Secret (key `value`; keys `apiServerURL`/`apiServerCA` override the controller's hub
//! address). The controller gives the Cluster a random `clientID` when it has none, creates the
//! ClusterRegistrationToken `import-token-<cluster>` (TTL 12 h, owned by the Cluster), and installs the
//! agent's objects ([`manifests`]) with a `fleet-agent-bootstrap` Secret made from the token's values; the
//! agent then registers through the token flow ([`super::registration`]) and finds its Cluster by clientID.
//!
//! The agent is installed again from scratch (credentials deleted, a new bootstrap Secret: it registers
//! anew) when `spec.redeployAgentGeneration` differs from `status.agentDeployedGeneration`, when the hub
//! address changed, or when `spec.agentNamespace` moved; it is updated in place (server-side apply) when its
//! objects changed otherwise: agent settings, the controller's version (its default image) or the agent
//! defaults of the `fleet-controller` ConfigMap. What was applied last is remembered per Cluster, and after
//! a restart read back from the Deployment's [`SETTINGS_ANNOTATION`]. Changes of the manager configuration
//! and of the kubeconfig Secret wake the Cluster ([`watch`]). A deleted Cluster's agent is removed
//! through the finalizer [`FINALIZER`] once the Cluster's BundleDeployments are gone and the agent has
//! uninstalled them (no inventory left downstream), or the leave timeout ran out. Failures are reported in the condition `Imported` (never with the Secret's content).

pub mod downstream;
pub mod manifests;
pub mod secret_namespace;
pub mod watch;

use std::sync::Arc;
use std::time::Duration;

use fleet_api::{Cluster, ClusterRegistrationToken};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use serde_json::{Value, json};
use sha2::Digest;

use self::manifests::{AgentDefaults, BootstrapValues, Object, agent_namespace};
pub use self::secret_namespace::kubeconfig_secret_namespace;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::finalize::with_finalizer;
use crate::status::conditions;

/// The finalizer that removes a Cluster's agent from its downstream cluster.
pub const FINALIZER: &str = "fleet.cattle.io/agent-import";
/// The field manager of the status fields this controller writes (the Cluster reconciler writes others).
pub const STATUS_MANAGER: &str = "fleet-controller-import";
/// Annotation on the downstream Deployment: the hash of the agent objects last applied.
pub const SETTINGS_ANNOTATION: &str = "fleet.cattle.io/agent-settings-hash";
/// The condition reporting the import.
pub const IMPORTED: &str = "Imported";
pub use crate::cluster::names::IMPORT_TOKEN_PREFIX;
/// The import token's lifetime (Fleet's `ClusterImportTokenTTL`).
const IMPORT_TOKEN_TTL: &str = "12h";
/// How soon a Cluster waiting for its token's values or for its leave looks again.
const WAIT: Duration = Duration::from_secs(1);

/// Reconciles one Cluster's agent.
pub fn reconcile(cluster: Arc<Cluster>, ctx: Arc<Context>) -> BoxFuture<'static, Result<Action>> {
    reconcile_inner(cluster, ctx).boxed()
}

async fn reconcile_inner(cluster: Arc<Cluster>, ctx: Arc<Context>) -> Result<Action> {
    let ours = cluster.finalizers().iter().any(|f| f == FINALIZER);
    if cluster.spec.kube_config_secret.is_empty() && !ours {
        return Ok(Action::await_change());
    }
    let leaving = cluster.metadata.deletion_timestamp.is_some();
    if leaving && !ours {
        return Ok(Action::await_change());
    }
    // The agent uninstalls the Cluster's bundles while it leaves: it stays until they are gone. It is
    // removed before the leave revokes its credentials ([`crate::cluster::leave::leave`] waits for this finalizer), so it
    // never runs with a token the hub refuses.
    if leaving && let Some(wait) = uninstalling(&cluster, &ctx).await? {
        return Ok(wait);
    }
    with_finalizer(&ctx, FINALIZER, cluster, |event, ctx| async move {
        match event {
            Event::Apply(cluster) => import(&cluster, &ctx).await,
            Event::Cleanup(cluster) => remove(&cluster, &ctx).await,
        }
    })
    .await
}

/// Fleet's status hash: SHA-224 of the JSON of a value, hex.
pub fn status_hash(value: &impl serde::Serialize) -> String {
    let json = serde_json::to_vec(value).unwrap_or_default();
    sha2::Sha224::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The agent defaults of the manager configuration ([`crate::cluster::config::ManagerConfig`]).
async fn agent_defaults(ctx: &Context) -> Result<AgentDefaults> {
    let config =
        crate::cluster::config::ManagerConfig::load(&ctx.client, &ctx.settings.system_namespace)
            .await?;
    let tls_mode = config.checked_agent_tls_mode(&format!(
        "ConfigMap {}/{}",
        ctx.settings.system_namespace,
        crate::cluster::config::CONFIG_MAP
    ))?;
    Ok(AgentDefaults {
        tls_mode,
        image: config.agent_image,
        image_pull_policy: config.agent_image_pull_policy,
        system_default_registry: config.system_default_registry,
        checkin_interval: config.agent_checkin_interval_text,
    })
}

/// Installs or updates the agent, recording the outcome in the `Imported` condition.
async fn import(cluster: &Cluster, ctx: &Context) -> Result<Action> {
    if cluster.spec.kube_config_secret.is_empty() {
        return Ok(Action::await_change());
    }
    if cluster.spec.client_id.is_empty() {
        // Fleet gives an imported Cluster a random clientID: the agent registers with it.
        let id: String = rand::random::<[u8; 24]>()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let api: Api<Cluster> =
            Api::namespaced(ctx.client.clone(), &cluster.namespace().unwrap_or_default());
        api.patch(
            &cluster.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"clientID": id}})),
        )
        .await?;
        return Ok(Action::await_change());
    }
    match deploy(cluster, ctx).await {
        Ok(Some(status)) => {
            write_status(cluster, ctx, status, Ok(())).await?;
            // Changes of the manager configuration and of the kubeconfig Secret wake it ([`watch`]).
            Ok(Action::await_change())
        }
        Ok(None) => Ok(Action::requeue(WAIT)),
        Err(err) => {
            write_status(cluster, ctx, previous_status(cluster), Err(&err)).await?;
            Err(err)
        }
    }
}

/// The status fields of this controller as they are now.
fn previous_status(cluster: &Cluster) -> Value {
    let status = cluster.status.clone().unwrap_or_default();
    json!({
        "agentDeployedGeneration": status.agent_deployed_generation,
        "agentMigrated": status.agent_migrated,
        "cattleNamespaceMigrated": status.cattle_namespace_migrated,
        "agentNamespaceMigrated": status.agent_namespace_migrated,
        "apiServerURL": status.api_server_url,
        "apiServerCAHash": status.api_server_ca_hash,
        "agentEnvVarsHash": status.agent_env_vars_hash,
        "agentTolerationsHash": status.agent_tolerations_hash,
        "agentAffinityHash": status.agent_affinity_hash,
        "agentResourcesHash": status.agent_resources_hash,
        "agentPrivateRepoURL": status.agent_private_repo_url,
        "agentHostNetwork": status.agent_host_network,
    })
}

/// Writes this controller's status fields and the `Imported` condition when they differ from the Cluster's.
async fn write_status(
    cluster: &Cluster,
    ctx: &Context,
    fields: Value,
    outcome: std::result::Result<(), &Error>,
) -> Result<()> {
    let status = cluster.status.clone().unwrap_or_default();
    let mut list = status.conditions.clone();
    let (ok, reason, message) = match outcome {
        Ok(()) => (true, "", String::new()),
        Err(err) => (false, "Error", err.to_string()),
    };
    conditions::set(
        &mut list,
        IMPORTED,
        ok,
        reason,
        &message,
        &conditions::now(),
    );
    if list == status.conditions && fields == previous_status(cluster) {
        return Ok(());
    }
    let mut body = fields;
    // An unset field is left out, not applied as null.
    if let Some(map) = body.as_object_mut() {
        map.retain(|_, value| !value.is_null());
    }
    body["conditions"] = json!(list);
    let api: Api<Cluster> =
        Api::namespaced(ctx.client.clone(), &cluster.namespace().unwrap_or_default());
    let patch = json!({"apiVersion": fleet_api::API_VERSION, "kind": "Cluster", "status": body});
    api.patch_status(
        &cluster.name_any(),
        &PatchParams::apply(STATUS_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}

/// The hash of the agent's objects, as recorded on its Deployment.
fn settings_hash(objects: &[Object]) -> String {
    let bodies: Vec<&Value> = objects.iter().map(|o| &o.body).collect();
    status_hash(&bodies)
}

/// Brings the downstream agent up to date. `Ok(None)`: waiting for the import token's values.
async fn deploy(cluster: &Cluster, ctx: &Context) -> Result<Option<Value>> {
    let object = format!(
        "Cluster {}/{}",
        cluster.namespace().unwrap_or_default(),
        cluster.name_any()
    );
    let secret_ns = kubeconfig_secret_namespace(cluster)?;
    let secret = downstream::read_secret(&ctx.client, &secret_ns, &cluster.spec.kube_config_secret)
        .await?
        .ok_or_else(|| {
            Error::invalid(
                &object,
                format!(
                    "kubeConfigSecret {secret_ns}/{} does not exist",
                    cluster.spec.kube_config_secret
                ),
            )
        })?;
    let (config_url, config_ca) =
        super::token::hub_address(&ctx.client, &ctx.settings.system_namespace).await?;
    let api_server_url = if secret.api_server_url.is_empty() {
        config_url
    } else {
        secret.api_server_url.clone()
    };
    let api_server_ca = if secret.api_server_ca.is_empty() {
        config_ca
    } else {
        secret.api_server_ca.clone()
    };
    if api_server_url.is_empty() {
        return Err(Error::invalid(
            object,
            format!(
                "no apiServerURL for the agent: set apiServerURL in the fleet chart's values or key apiServerURL of Secret {}",
                secret.name
            ),
        ));
    }
    let defaults = agent_defaults(ctx).await?;
    let mut objects = manifests::agent_objects(cluster, &defaults)?;
    let hash = settings_hash(&objects);
    if let Some(deployment) = objects.iter_mut().find(|o| o.kind == "Deployment") {
        deployment.body["metadata"]["annotations"] = json!({SETTINGS_ANNOTATION: hash});
    }
    let status = cluster.status.clone().unwrap_or_default();
    let spec = &cluster.spec;
    let namespace = agent_namespace(cluster);
    let reported_ns = status
        .agent
        .as_ref()
        .map(|a| a.namespace.clone())
        .unwrap_or_default();
    let moved = !reported_ns.is_empty() && reported_ns != namespace;
    let ca_hash = status_hash(&api_server_ca);
    let reinstall = status.agent_deployed_generation != Some(spec.redeploy_agent_generation)
        || status.api_server_url != api_server_url
        || status.api_server_ca_hash != ca_hash;
    let uid = cluster.uid().unwrap_or_default();
    let remembered = ctx.agent_imports.get(&uid);
    let fields = json!({
        "agentDeployedGeneration": spec.redeploy_agent_generation,
        "agentMigrated": true,
        "cattleNamespaceMigrated": true,
        "agentNamespaceMigrated": true,
        "apiServerURL": api_server_url,
        "apiServerCAHash": ca_hash,
        "agentEnvVarsHash": status_hash(&spec.agent_env_vars),
        "agentTolerationsHash": status_hash(&spec.agent_tolerations),
        "agentAffinityHash": status_hash(&spec.agent_affinity),
        "agentResourcesHash": status_hash(&spec.agent_resources),
        "agentPrivateRepoURL": spec.private_repo_url,
        "agentHostNetwork": spec.host_network.unwrap_or(false),
    });
    if !reinstall && remembered.as_deref() == Some(hash.as_str()) {
        return Ok(Some(fields));
    }
    let client = downstream::client(&secret).await?;
    client.apiserver_version().await?;
    if !reinstall && remembered.is_none() {
        // After a restart: what the Deployment says was applied.
        let applied = downstream::get(&client, "Deployment", &namespace, manifests::AGENT_NAME)
            .await?
            .and_then(|d| d.annotations().get(SETTINGS_ANNOTATION).cloned());
        if applied.as_deref() == Some(hash.as_str()) {
            ctx.agent_imports.record(&uid, &hash);
            return Ok(Some(fields));
        }
    }
    // The namespace is part of the objects: a move changed them. Until the moved agent checks in, the one
    // already installed in the new namespace counts as up to date (above), so the move is made once.
    let reinstall = reinstall || moved;
    if reinstall {
        let Some(bootstrap) =
            bootstrap_secret(cluster, ctx, &api_server_url, &api_server_ca).await?
        else {
            return Ok(None);
        };
        if moved {
            downstream::remove(&client, &reported_ns, true).await?;
        }
        downstream::remove(&client, &namespace, false).await?;
        objects.insert(1, bootstrap);
        tracing::info!(cluster = %object, namespace, "installing the agent");
    } else {
        tracing::info!(cluster = %object, namespace, "updating the agent");
    }
    downstream::apply(&client, &objects).await?;
    downstream::remove_unwanted_scheduling(&client, &namespace, &objects).await?;
    ctx.agent_imports.record(&uid, &hash);
    Ok(Some(fields))
}

/// The bootstrap Secret from the values of the Cluster's import token (created when missing); `None` while
/// the token has no values yet.
async fn bootstrap_secret(
    cluster: &Cluster,
    ctx: &Context,
    api_server_url: &str,
    api_server_ca: &str,
) -> Result<Option<Object>> {
    let namespace = cluster.namespace().unwrap_or_default();
    let name = fleet_bundle::names::safe_concat_name(&[&format!(
        "{IMPORT_TOKEN_PREFIX}{}",
        cluster.name_any()
    )]);
    let tokens: Api<ClusterRegistrationToken> = Api::namespaced(ctx.client.clone(), &namespace);
    if tokens.get_opt(&name).await?.is_none() {
        let token: ClusterRegistrationToken = serde_json::from_value(json!({
            "apiVersion": fleet_api::API_VERSION, "kind": "ClusterRegistrationToken",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": [{
                "apiVersion": fleet_api::API_VERSION, "kind": "Cluster",
                "name": cluster.name_any(), "uid": cluster.uid().unwrap_or_default()}]},
            "spec": {"ttl": IMPORT_TOKEN_TTL},
        }))
        .map_err(|err| Error::invalid(&name, err.to_string()))?;
        match tokens.create(&PostParams::default(), &token).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(err) => return Err(err.into()),
        }
        return Ok(None);
    }
    let Some(secret) = Api::<Secret>::namespaced(ctx.client.clone(), &namespace)
        .get_opt(&name)
        .await?
    else {
        return Ok(None);
    };
    let values = secret
        .data
        .unwrap_or_default()
        .remove("values")
        .map(|b| b.0)
        .unwrap_or_default();
    let values: Value = serde_json::from_slice(&values).map_err(|_| {
        Error::waiting(
            format!("Secret {namespace}/{name}"),
            "key values is not the JSON the token controller writes",
        )
    })?;
    let field = |key: &str| values[key].as_str().unwrap_or_default().to_string();
    let (token, registration_ns) = (field("token"), field("systemRegistrationNamespace"));
    if token.is_empty() {
        return Err(Error::waiting(
            format!("Secret {namespace}/{name}"),
            "key values holds no token",
        ));
    }
    Ok(Some(manifests::bootstrap_secret(
        cluster,
        &BootstrapValues {
            api_server_url,
            api_server_ca,
            token: &token,
            token_name: &name,
            cluster_namespace: &namespace,
            system_registration_namespace: &registration_ns,
        },
    )))
}

/// `Some(requeue)` while the Cluster's BundleDeployments are still on the hub, or the agent of a leaving
/// Cluster still has inventories downstream (it has not yet uninstalled every BundleDeployment it deployed:
/// BundleDeployments are deleted by the leave, their objects are removed by the agent after), for at most
/// the leave timeout since the deletion.
async fn uninstalling(cluster: &Cluster, ctx: &Context) -> Result<Option<Action>> {
    if cluster.spec.kube_config_secret.is_empty() {
        return Ok(None);
    }
    let waited = cluster
        .metadata
        .deletion_timestamp
        .as_ref()
        .map(|t| crate::placement::unix_now() - t.0.as_second())
        .unwrap_or_default();
    let timeout = crate::placement::settings(ctx).leave_timeout.as_secs();
    let within_timeout = u64::try_from(waited).unwrap_or_default() < timeout;
    let cluster_ns = crate::cluster::names::cluster_namespace(
        &cluster.namespace().unwrap_or_default(),
        &cluster.name_any(),
    );
    let deployments: Api<fleet_api::BundleDeployment> =
        Api::namespaced(ctx.client.clone(), &cluster_ns);
    let remaining = deployments
        .list_metadata(&kube::api::ListParams::default().limit(1))
        .await?;
    if within_timeout && !remaining.items.is_empty() {
        return Ok(Some(Action::requeue(WAIT)));
    }
    let secret_ns = kubeconfig_secret_namespace(cluster)?;
    let Some(secret) =
        downstream::read_secret(&ctx.client, &secret_ns, &cluster.spec.kube_config_secret).await?
    else {
        return Ok(None);
    };
    let client = downstream::client(&secret).await?;
    if !downstream::has_inventories(&client, &agent_namespace(cluster)).await? {
        return Ok(None);
    }
    if within_timeout {
        return Ok(Some(Action::requeue(WAIT)));
    }
    tracing::warn!(
        cluster = %format!("{}/{}", cluster.namespace().unwrap_or_default(), cluster.name_any()),
        "the agent did not uninstall every bundle within the leave timeout; removing it anyway"
    );
    Ok(None)
}

/// Removes a deleted Cluster's agent from its downstream cluster. A kubeconfig Secret that is gone leaves
/// nothing to reach the cluster with: the Cluster is released with a warning.
async fn remove(cluster: &Cluster, ctx: &Context) -> Result<Action> {
    let object = format!(
        "Cluster {}/{}",
        cluster.namespace().unwrap_or_default(),
        cluster.name_any()
    );
    ctx.agent_imports.forget(&cluster.uid().unwrap_or_default());
    if cluster.spec.kube_config_secret.is_empty() {
        return Ok(Action::await_change());
    }
    let secret_ns = kubeconfig_secret_namespace(cluster)?;
    let Some(secret) =
        downstream::read_secret(&ctx.client, &secret_ns, &cluster.spec.kube_config_secret).await?
    else {
        tracing::warn!(cluster = %object, "kubeConfigSecret is gone; the agent cannot be removed from the downstream cluster");
        return Ok(Action::await_change());
    };
    let client = downstream::client(&secret).await?;
    let mut namespaces = vec![agent_namespace(cluster)];
    if let Some(reported) = cluster.status.as_ref().and_then(|s| s.agent.as_ref())
        && !reported.namespace.is_empty()
        && reported.namespace != namespaces[0]
    {
        namespaces.push(reported.namespace.clone());
    }
    // The agent's downstream ServiceAccount and RBAC, and its hub credentials (revoked once this finalizer is
    // gone), are removed only after its pods: a pod still terminating keeps working with them, and would be
    // refused. So the Deployment goes first, and the rest once its pods have terminated.
    for namespace in &namespaces {
        downstream::stop_agent(&client, namespace).await?;
    }
    for namespace in &namespaces {
        if downstream::agent_pods_left(&client, namespace).await? {
            return Err(Error::waiting(
                &object,
                format!("the agent's pods in {namespace} are still terminating"),
            ));
        }
    }
    for namespace in &namespaces {
        downstream::remove(&client, namespace, true).await?;
    }
    let namespace = &namespaces[0];
    tracing::info!(cluster = %object, namespace, "removed the agent");
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(namespace: &str, secret_ns: &str) -> Cluster {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "c", "namespace": namespace},
            "spec": {"kubeConfigSecret": "kc", "kubeConfigSecretNamespace": secret_ns},
        }))
        .unwrap()
    }

    #[test]
    fn kubeconfig_secrets_are_read_only_from_fleet_namespaces() {
        let ns = |c: &Cluster| kubeconfig_secret_namespace(c).map_err(|e| e.to_string());
        assert_eq!(ns(&cluster("fleet-default", "")).unwrap(), "fleet-default");
        assert_eq!(ns(&cluster("team", "team")).unwrap(), "team");
        assert_eq!(ns(&cluster("team", "fleet-local")).unwrap(), "fleet-local");
        assert_eq!(
            ns(&cluster("team", "cluster-team-c-123")).unwrap(),
            "cluster-team-c-123"
        );
        let refused = ns(&cluster("team", "kube-system")).unwrap_err();
        assert!(
            refused.contains("\"kube-system\" is not an allowed"),
            "{refused}"
        );
    }

    #[test]
    fn status_hashes_are_fleets() {
        // Fleet's hashStatusField: SHA-224 over the JSON of the field (`null` for an unset one).
        assert_eq!(
            status_hash(&Option::<String>::None),
            "a7408a8b23aff882d8b95165eb24c3a6b519468539eb2b3072f529cb"
        );
        assert_eq!(
            status_hash(&"x"),
            "f9074d7bc14f35d7b62c8a81b50e18d89c92342314d3dc875f15023e"
        );
    }
}
