//! Cluster properties for targeting, collected from the downstream cluster at each check-in and written
//! into the Cluster's `status.properties` and `status.resourceUsage` on the hub when they changed:
//! the Kubernetes version and node count (KubeFleet's property names), CPU and memory capacity and
//! allocatable summed over the nodes, and what is available after the requests of scheduled, non-terminal
//! pods (never below 0). Custom claims come from OCM's cluster-scoped `ClusterClaim` objects
//! (`cluster.open-cluster-management.io/v1alpha1`, `spec.value`), so claims users already keep work
//! unchanged; each becomes a property under its name (the built-in names win a clash). Claims labelled
//! `open-cluster-management.io/spoke-only` stay on the cluster, as in OCM. When the ClusterClaim CRD is
//! not installed there are simply no claims.

use std::collections::BTreeMap;

use fleet_api::{
    Cluster, PROPERTY_KUBERNETES_VERSION, PROPERTY_NODE_COUNT, PropertyValue, RESOURCE_CPU,
    RESOURCE_MEMORY, ResourceUsage,
};
use fleet_target::quantity::parse_quantity;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::json;

use crate::error::{Error, Result, is_not_found};
use crate::heartbeat::ClusterRef;

/// API group of OCM's ClusterClaim.
pub const CLAIM_GROUP: &str = "cluster.open-cluster-management.io";
/// Label that keeps a claim on the downstream cluster (OCM's).
pub const SPOKE_ONLY_LABEL: &str = "open-cluster-management.io/spoke-only";
/// Field manager owning `status.properties` and `status.resourceUsage` of the Cluster.
const FIELD_MANAGER: &str = "fleet-agent-properties";
/// How many pods one list page holds.
const POD_PAGE: u32 = 500;

/// CPU (millicores) and memory (bytes) of a set of nodes or pods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    pub cpu_millis: i64,
    pub memory_bytes: i64,
}

impl Resources {
    fn add(&mut self, list: Option<&BTreeMap<String, Quantity>>) {
        let Some(list) = list else { return };
        self.cpu_millis += amount(list, RESOURCE_CPU, 1000.0);
        self.memory_bytes += amount(list, RESOURCE_MEMORY, 1.0);
    }

    fn minus(self, used: Resources) -> Resources {
        Resources {
            cpu_millis: (self.cpu_millis - used.cpu_millis).max(0),
            memory_bytes: (self.memory_bytes - used.memory_bytes).max(0),
        }
    }

    fn to_map(self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (RESOURCE_CPU.to_string(), format_cpu(self.cpu_millis)),
            (
                RESOURCE_MEMORY.to_string(),
                format_memory(self.memory_bytes),
            ),
        ])
    }
}

fn amount(list: &BTreeMap<String, Quantity>, name: &str, scale: f64) -> i64 {
    list.get(name)
        .and_then(|q| parse_quantity(&q.0))
        .map(|value| (value * scale).round() as i64)
        .unwrap_or(0)
}

/// CPU in Kubernetes' canonical spelling: whole cores when exact, else millicores.
pub fn format_cpu(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// Memory in Kubernetes' canonical spelling: the largest exact binary suffix, else bytes.
pub fn format_memory(bytes: i64) -> String {
    const SUFFIXES: [&str; 6] = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"];
    if bytes == 0 {
        return "0".to_string();
    }
    for (index, suffix) in SUFFIXES.iter().enumerate() {
        let unit = 1i64 << (10 * (SUFFIXES.len() - index));
        if bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// What the agent observed about its cluster (without observation times, so two can be compared).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// Property name → value.
    pub properties: BTreeMap<String, String>,
    pub capacity: Resources,
    pub allocatable: Resources,
    pub requested: Resources,
}

impl Observed {
    /// Summarizes nodes, pods, the version and the claims (pure).
    pub fn summarize(
        version: &str,
        nodes: &[Node],
        pods: &[Pod],
        claims: &[DynamicObject],
    ) -> Observed {
        let mut observed = Observed::default();
        for claim in claims {
            let spoke_only = claim
                .metadata
                .labels
                .as_ref()
                .is_some_and(|labels| labels.contains_key(SPOKE_ONLY_LABEL));
            let (Some(name), Some(value)) = (
                claim.metadata.name.as_ref(),
                claim.data.pointer("/spec/value").and_then(|v| v.as_str()),
            ) else {
                continue;
            };
            if !spoke_only {
                observed.properties.insert(name.clone(), value.to_string());
            }
        }
        observed
            .properties
            .insert(PROPERTY_NODE_COUNT.to_string(), nodes.len().to_string());
        observed
            .properties
            .insert(PROPERTY_KUBERNETES_VERSION.to_string(), version.to_string());
        for node in nodes {
            let status = node.status.as_ref();
            observed
                .capacity
                .add(status.and_then(|s| s.capacity.as_ref()));
            observed
                .allocatable
                .add(status.and_then(|s| s.allocatable.as_ref()));
        }
        for pod in pods.iter().filter(|pod| is_scheduled_and_running(pod)) {
            let containers = pod.spec.iter().flat_map(|spec| spec.containers.iter());
            for container in containers {
                let requests = container
                    .resources
                    .as_ref()
                    .and_then(|r| r.requests.as_ref());
                observed.requested.add(requests);
            }
        }
        observed
    }

    /// The Cluster status fields, stamped with `now`.
    pub fn to_status(&self, now: &Time) -> (BTreeMap<String, PropertyValue>, ResourceUsage) {
        let properties = self
            .properties
            .iter()
            .map(|(name, value)| {
                let value = PropertyValue {
                    value: value.clone(),
                    observation_time: Some(now.clone()),
                };
                (name.clone(), value)
            })
            .collect();
        let usage = ResourceUsage {
            capacity: self.capacity.to_map(),
            allocatable: self.allocatable.to_map(),
            available: self.allocatable.minus(self.requested).to_map(),
            observation_time: Some(now.clone()),
        };
        (properties, usage)
    }
}

fn is_scheduled_and_running(pod: &Pod) -> bool {
    let scheduled = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .is_some_and(|node| !node.is_empty());
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    scheduled && !matches!(phase, Some("Succeeded" | "Failed"))
}

/// Reads the version, nodes, pods and claims of the downstream cluster.
pub async fn observe(downstream: &kube::Client) -> Result<Observed> {
    let version = downstream
        .apiserver_version()
        .await
        .map_err(|err| Error::downstream("reading the Kubernetes version", err))?;
    let nodes = list_all(Api::<Node>::all(downstream.clone()), "nodes").await?;
    let pods = list_all(Api::<Pod>::all(downstream.clone()), "pods").await?;
    let claims = claims(downstream).await?;
    Ok(Observed::summarize(
        &version.git_version,
        &nodes,
        &pods,
        &claims,
    ))
}

async fn list_all<K>(api: Api<K>, what: &str) -> Result<Vec<K>>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let mut items = Vec::new();
    let mut params = ListParams::default().limit(POD_PAGE);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|err| Error::kube(format!("downstream: listing {what}"), err))?;
        items.extend(page.items);
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(items),
        }
    }
}

/// The ClusterClaims of the cluster; none when their CRD is not installed.
async fn claims(downstream: &kube::Client) -> Result<Vec<DynamicObject>> {
    let resource = ApiResource {
        group: CLAIM_GROUP.to_string(),
        version: "v1alpha1".to_string(),
        api_version: format!("{CLAIM_GROUP}/v1alpha1"),
        kind: "ClusterClaim".to_string(),
        plural: "clusterclaims".to_string(),
    };
    let api: Api<DynamicObject> = Api::all_with(downstream.clone(), &resource);
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items),
        Err(err) if is_not_found(&err) => Ok(Vec::new()),
        Err(err) => Err(Error::downstream("listing ClusterClaims", err)),
    }
}

/// Writes the observation into the Cluster's status with server-side apply, so that properties no longer
/// observed (a deleted claim) disappear.
pub async fn report(
    hub: &kube::Client,
    cluster: &ClusterRef,
    observed: &Observed,
    now: &Time,
) -> Result<()> {
    let (properties, usage) = observed.to_status(now);
    let body = json!({
        "apiVersion": fleet_api::API_VERSION,
        "kind": "Cluster",
        "metadata": {"name": cluster.name, "namespace": cluster.namespace},
        "status": {"properties": properties, "resourceUsage": usage},
    });
    let api: Api<Cluster> = Api::namespaced(hub.clone(), &cluster.namespace);
    api.patch_status(
        &cluster.name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(body),
    )
    .await
    .map_err(|err| {
        Error::kube(
            format!(
                "reporting the properties of cluster {}/{}",
                cluster.namespace, cluster.name
            ),
            err,
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(capacity: (&str, &str), allocatable: (&str, &str)) -> Node {
        serde_json::from_value(json!({"metadata": {"name": "n"}, "status": {
            "capacity": {"cpu": capacity.0, "memory": capacity.1, "pods": "110"},
            "allocatable": {"cpu": allocatable.0, "memory": allocatable.1}}}))
        .unwrap()
    }

    fn pod(node: &str, phase: &str, cpu: &str, memory: &str) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {"nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]},
            "status": {"phase": phase}}))
        .unwrap()
    }

    #[test]
    fn sums_nodes_and_subtracts_running_pods() {
        let nodes = [
            node(("4", "16Gi"), ("3800m", "15Gi")),
            node(("2", "8Gi"), ("2", "7Gi")),
        ];
        let pods = [
            pod("n1", "Running", "500m", "1Gi"),
            pod("n1", "Succeeded", "4", "4Gi"),
            pod("", "Pending", "4", "4Gi"),
        ];
        let observed = Observed::summarize("v1.33.0", &nodes, &pods, &[]);
        assert_eq!(observed.properties[PROPERTY_NODE_COUNT], "2");
        assert_eq!(observed.properties[PROPERTY_KUBERNETES_VERSION], "v1.33.0");
        let (_, usage) = observed.to_status(&Time(k8s_openapi::jiff::Timestamp::now()));
        assert_eq!(usage.capacity["cpu"], "6");
        assert_eq!(usage.capacity["memory"], "24Gi");
        assert_eq!(usage.allocatable["cpu"], "5800m");
        assert_eq!(usage.allocatable["memory"], "22Gi");
        assert_eq!(usage.available["cpu"], "5300m");
        assert_eq!(usage.available["memory"], "21Gi");
    }

    #[test]
    fn available_never_goes_below_zero() {
        let nodes = [node(("1", "1Gi"), ("1", "1Gi"))];
        let pods = [pod("n", "Running", "3", "3Gi")];
        let (_, usage) = Observed::summarize("v1", &nodes, &pods, &[])
            .to_status(&Time(k8s_openapi::jiff::Timestamp::now()));
        assert_eq!(usage.available["cpu"], "0");
        assert_eq!(usage.available["memory"], "0");
    }

    #[test]
    fn claims_become_properties_except_spoke_only_and_built_in_names() {
        let claim = |name: &str, value: &str, labels: serde_json::Value| -> DynamicObject {
            serde_json::from_value(
                json!({"apiVersion": "cluster.open-cluster-management.io/v1alpha1",
                "kind": "ClusterClaim", "metadata": {"name": name, "labels": labels},
                "spec": {"value": value}}),
            )
            .unwrap()
        };
        let claims = [
            claim("region.open-cluster-management.io", "eu-west", json!({})),
            claim("secret.example.com", "x", json!({SPOKE_ONLY_LABEL: ""})),
            claim(PROPERTY_NODE_COUNT, "999", json!({})),
        ];
        let observed = Observed::summarize("v1.33.0", &[], &[], &claims);
        assert_eq!(
            observed.properties["region.open-cluster-management.io"],
            "eu-west"
        );
        assert!(!observed.properties.contains_key("secret.example.com"));
        assert_eq!(observed.properties[PROPERTY_NODE_COUNT], "0");
    }

    #[test]
    fn quantities_are_spelled_canonically() {
        assert_eq!(format_cpu(2000), "2");
        assert_eq!(format_cpu(2500), "2500m");
        assert_eq!(format_memory(16 * 1024 * 1024 * 1024), "16Gi");
        assert_eq!(format_memory(1536 * 1024 * 1024), "1536Mi");
        assert_eq!(format_memory(1000), "1000");
        assert_eq!(format_memory(0), "0");
    }
}
