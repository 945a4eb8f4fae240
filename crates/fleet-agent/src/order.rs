//! The order objects are applied in: Helm's install order by kind (CRDs and Namespaces ahead of
//! everything that may live in them), unknown kinds last, input order kept within a kind. Uninstall
//! runs the reverse.

/// Helm's `InstallOrder` (pkg/release/util/kind_sorter.go), with CustomResourceDefinition moved to the
/// front next to Namespace so that custom resources in the same bundle find their kind.
const INSTALL_ORDER: &[&str] = &[
    "CustomResourceDefinition",
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The install rank of a kind; unknown kinds rank after every known one.
pub fn install_rank(kind: &str) -> usize {
    INSTALL_ORDER
        .iter()
        .position(|known| *known == kind)
        .unwrap_or(INSTALL_ORDER.len())
}

/// Sorts items into install order by their kind, keeping the input order within a kind.
pub fn sort_for_install<T>(items: &mut [T], kind: impl Fn(&T) -> &str) {
    items.sort_by_key(|item| install_rank(kind(item)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crds_and_namespaces_come_first_unknown_kinds_last() {
        let mut kinds = vec![
            "Widget",
            "Deployment",
            "Service",
            "Namespace",
            "ConfigMap",
            "CustomResourceDefinition",
            "Job",
            "ConfigMap",
        ];
        sort_for_install(&mut kinds, |k| k);
        assert_eq!(
            kinds,
            [
                "CustomResourceDefinition",
                "Namespace",
                "ConfigMap",
                "ConfigMap",
                "Service",
                "Deployment",
                "Job",
                "Widget"
            ]
        );
    }
}
