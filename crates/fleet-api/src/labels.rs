//! Well-known label, annotation and Secret-type names of Fleet, spelled as Fleet spells them.

/// Label on Bundles and BundleDeployments: name of the GitRepo they come from.
pub const REPO_NAME: &str = "fleet.cattle.io/repo-name";
/// Label on Bundles and BundleDeployments: the git commit they were read from.
pub const COMMIT: &str = "fleet.cattle.io/commit";
/// Label on BundleDeployments: name of their Bundle.
pub const BUNDLE_NAME: &str = "fleet.cattle.io/bundle-name";
/// Label on BundleDeployments: namespace of their Bundle.
pub const BUNDLE_NAMESPACE: &str = "fleet.cattle.io/bundle-namespace";
/// Label on BundleDeployments: the manifest ID (name of the Content object) they deploy.
pub const CONTENT_NAME: &str = "fleet.cattle.io/content-name";
/// Label on objects Fleet creates and cleans up (`"true"`).
pub const MANAGED: &str = "fleet.cattle.io/managed";
/// Label on BundleDeployments and annotation on cluster namespaces: the Cluster's namespace.
pub const CLUSTER_NAMESPACE: &str = "fleet.cattle.io/cluster-namespace";
/// Label on BundleDeployments and annotation on cluster namespaces: the Cluster's name.
pub const CLUSTER: &str = "fleet.cattle.io/cluster";
/// Annotation on the registration service account: the ClusterRegistration's name.
pub const CLUSTER_REGISTRATION: &str = "fleet.cattle.io/cluster-registration";
/// Annotation on the registration service account: the ClusterRegistration's namespace.
pub const CLUSTER_REGISTRATION_NAMESPACE: &str = "fleet.cattle.io/cluster-registration-namespace";
/// Label on a ClusterRegistration: the ClusterRegistrationToken it was made with.
pub const REGISTRATION_TOKEN: &str = "fleet.cattle.io/registration-token";
/// Label on a Cluster whose agent is managed by another manager (e.g. Rancher).
pub const CLUSTER_MANAGEMENT: &str = "fleet.cattle.io/cluster-management";
/// Label on the `local` Cluster: do not deploy a Fleet agent to it.
pub const LOCAL_AGENT_DISABLED: &str = "fleet.cattle.io/local-agent-disabled";
/// Label clusters get to exclude them from the agent-management bundle's target.
pub const NON_MANAGED_AGENT: &str = "fleet.cattle.io/non-managed-agent";
/// Label a cluster may carry with its human-readable name; `clusterName` also matches it.
pub const CLUSTER_DISPLAY_NAME: &str = "management.cattle.io/cluster-display-name";
/// Label on Clusters created by an agent's registration.
pub const CREATED_BY_AGENT_POD: &str = "fleet.cattle.io/created-by-agent-pod";

/// Annotation on BundleDeployments (our addition): how the agent uninstalls when the BundleDeployment is
/// deleted; [`UNINSTALL_ORPHAN`] leaves the applied objects in place and forgets them.
pub const UNINSTALL: &str = "fleet.cattle.io/uninstall";
/// Value of [`UNINSTALL`]: leave the objects, forget the inventory.
pub const UNINSTALL_ORPHAN: &str = "orphan";

/// Annotation on deployed objects: the object set they belong to.
pub const OBJECTSET_ID: &str = "objectset.rio.cattle.io/id";
/// Label on deployed objects: sha1 of the object-set ID.
pub const OBJECTSET_HASH: &str = "objectset.rio.cattle.io/hash";

/// Chart annotation: service account used for the deployment.
pub const SERVICE_ACCOUNT: &str = "fleet.cattle.io/service-account";
/// Chart annotation: the deploymentID of the release.
pub const BUNDLE_ID: &str = "fleet.cattle.io/bundle-id";
/// Chart annotation: namespace of the agent that owns the release.
pub const AGENT_NAMESPACE: &str = "fleet.cattle.io/agent-namespace";
/// Chart annotation: keep resources when the release is uninstalled.
pub const KEEP_RESOURCES: &str = "fleet.cattle.io/keep-resources";
/// Annotation on GitRepos: hash of the client secret's data.
pub const CLIENT_SECRET_HASH: &str = "fleet.cattle.io/client-secret-hash";
/// Annotation on GitRepos: hash of the Helm secret's data.
pub const HELM_SECRET_HASH: &str = "fleet.cattle.io/helm-secret-hash";

/// Secret type of a Bundle's Helm values.
pub const SECRET_TYPE_BUNDLE_VALUES: &str = "fleet.cattle.io/bundle-values/v1alpha1";
/// Secret type of a BundleDeployment's options (values and staged values).
pub const SECRET_TYPE_BUNDLE_DEPLOYMENT_OPTIONS: &str =
    "fleet.cattle.io/bundle-deployment/v1alpha1";
/// Secret type of OCI storage credentials.
pub const SECRET_TYPE_OCI_STORAGE: &str = "fleet.cattle.io/bundle-oci-storage/v1alpha1";
/// Secret type of a ClusterRegistrationToken's agent values.
pub const SECRET_TYPE_CLUSTER_REGISTRATION_VALUES: &str =
    "fleet.cattle.io/cluster-registration-values";

/// Condition type: overall readiness.
pub const CONDITION_READY: &str = "Ready";
/// Condition type on GitRepos: accepted by restrictions and policies.
pub const CONDITION_ACCEPTED: &str = "Accepted";
/// Condition type on GitRepos: result of the last poll.
pub const CONDITION_GIT_POLLING: &str = "GitPolling";
/// Condition type on BundleDeployments: the release is installed.
pub const CONDITION_INSTALLED: &str = "Installed";
/// Condition type on BundleDeployments: the last deploy succeeded.
pub const CONDITION_DEPLOYED: &str = "Deployed";
/// Condition type on BundleDeployments: status monitoring ran.
pub const CONDITION_MONITORED: &str = "Monitored";
/// Condition type on Clusters and ClusterGroups: status fields processed.
pub const CONDITION_PROCESSED: &str = "Processed";
