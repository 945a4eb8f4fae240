//! The order objects are applied in: Helm's install order by kind (CRDs and Namespaces ahead of
//! everything that may live in them), unknown kinds last, input order kept within a kind. Uninstall
//! runs the reverse.

/// The install rank of a kind: Helm's install order (`fleet_helm::install_rank`), with
/// CustomResourceDefinition moved to the front so that custom resources in the same bundle find their kind;
/// kinds Helm does not list rank after every listed one.
pub fn install_rank(kind: &str) -> usize {
    match kind {
        "CustomResourceDefinition" => 0,
        _ => fleet_helm::install_rank(kind).map_or(usize::MAX, |rank| rank + 1),
    }
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
