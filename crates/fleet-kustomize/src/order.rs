//! Output order: kustomize's legacy order (by kind priority, then group/version/kind, namespace and name) or the
//! order resources were loaded in (`sortOptions.order: fifo`).

use crate::kustomization::SortOptions;
use crate::resource::Resource;

const ORDER_FIRST: &[&str] = &[
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

const ORDER_LAST: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Why `sortOptions` is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SortError {
    #[error("sortOptions.legacySortOptions is only valid with order: legacy")]
    LegacyOptionsWithFifo,
    #[error("sortOptions.order {order:?} is not one of legacy, fifo")]
    UnknownOrder { order: String },
}

/// Sorts in place per `opts` (legacy order when absent).
pub fn sort(resources: &mut [Resource], opts: Option<&SortOptions>) -> Result<(), SortError> {
    let (first, last): (Vec<String>, Vec<String>) = match opts {
        Some(o) if o.order == "fifo" => {
            if o.legacy_sort_options.is_some() {
                return Err(SortError::LegacyOptionsWithFifo);
            }
            return Ok(());
        }
        Some(o) if o.order == "legacy" || o.order.is_empty() => match &o.legacy_sort_options {
            Some(l) => (l.order_first.clone(), l.order_last.clone()),
            None => defaults(),
        },
        Some(o) => {
            return Err(SortError::UnknownOrder {
                order: o.order.clone(),
            });
        }
        None => defaults(),
    };
    let rank = |kind: &str| -> i64 {
        if let Some(i) = first.iter().position(|k| k == kind) {
            return i as i64 - first.len() as i64;
        }
        if let Some(i) = last.iter().position(|k| k == kind) {
            return i as i64 + 1;
        }
        0
    };
    resources.sort_by_cached_key(|r| {
        let id = r.id();
        let or = |s: &str, d: &str| {
            if s.is_empty() {
                d.to_string()
            } else {
                s.to_string()
            }
        };
        (
            rank(&id.gvk.kind),
            id.gvk.sort_string(),
            or(&id.namespace, "~X"),
            or(&id.name, "~N"),
        )
    });
    Ok(())
}

fn defaults() -> (Vec<String>, Vec<String>) {
    (
        ORDER_FIRST.iter().map(|s| s.to_string()).collect(),
        ORDER_LAST.iter().map(|s| s.to_string()).collect(),
    )
}
