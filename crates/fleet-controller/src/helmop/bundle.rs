//! A HelmOp's Bundle, as Fleet's HelmOp reconciler builds it: Fleet's checks of the chart reference
//! ([`validate`]), then one Bundle of the HelmOp's name with its embedded Bundle spec, labelled
//! `fleet.cattle.io/fleet-helm-name`, carrying the chart reference with the resolved version and
//! `helmOpOptions` instead of chart files ([`build`]): the agents download the chart.

use fleet_api::{Bundle, BundleTarget, HELMOP_LABEL, HelmOp, HelmOpOptions};
use kube::ResourceExt;

/// Fleet's `validate`: the three ways Helm names a chart that a HelmOp may use (a `.tgz` URL in `chart`
/// alone; an `oci://` reference in `repo` without `chart`; a repository URL and a chart name). The
/// message says which field is wrong.
pub fn validate(helmop: &HelmOp) -> Result<(), String> {
    let Some(helm) = helmop.spec.bundle.options.helm.as_ref() else {
        return Err("helm options are empty in the HelmOp's spec".to_string());
    };
    let fail = |message: &str| Err(format!("helm options invalid: {message}"));
    if helm.chart.to_ascii_lowercase().ends_with(".tgz") {
        if !helm.repo.is_empty() {
            return fail("tarball chart with a non-empty repo field");
        }
        if !helm.version.is_empty() {
            return fail("tarball chart with a non-empty version field");
        }
    } else if helm.repo.to_ascii_lowercase().starts_with("oci://") {
        if !helm.chart.is_empty() {
            return fail("OCI repository with a non-empty chart field");
        }
    } else {
        if helm.chart.is_empty() {
            return fail("non-OCI repository with an empty chart field");
        }
        if helm.repo.is_empty() {
            return fail("non-tarball chart with an empty repo field");
        }
    }
    Ok(())
}

/// The Bundle of `helmop` deploying chart `version` (the constraint resolved; empty for a chart URL).
/// As in Fleet's `calculateBundle`: unnamed targets become `target000`, …; no targets means the
/// `default` ClusterGroup; `spec.labels` and the HelmOp label go on the Bundle; no resources. Targets
/// that customize `helm` inherit the chart reference; unlike Fleet, which copies the version
/// constraint there, they inherit the resolved version, so that every cluster deploys the same version,
/// as Fleet's HelmOp documentation promises.
pub fn build(helmop: &HelmOp, version: &str) -> Bundle {
    let mut spec = helmop.spec.bundle.clone();
    if let Some(helm) = spec.options.helm.as_mut() {
        helm.version = version.to_string();
    }
    let root = spec.options.helm.clone();
    for (i, target) in spec.targets.iter_mut().enumerate() {
        if target.name.is_empty() {
            target.name = format!("target{i:03}");
        }
        if let (Some(root), Some(helm)) = (root.as_ref(), target.options.helm.as_mut()) {
            if helm.repo.is_empty() {
                helm.repo = root.repo.clone();
            }
            if helm.chart.is_empty() {
                helm.chart = root.chart.clone();
            }
            if helm.version.is_empty() {
                helm.version = root.version.clone();
            }
        }
    }
    if spec.targets.is_empty() {
        spec.targets = vec![BundleTarget {
            name: "default".to_string(),
            cluster_group: "default".to_string(),
            ..BundleTarget::default()
        }];
    }
    spec.resources.clear();
    spec.helm_op_options = Some(HelmOpOptions {
        secret_name: helmop.spec.helm_secret_name.clone(),
        insecure_skip_tls_verify: helmop.spec.insecure_skip_tls_verify,
        ca_bundle: None,
    });
    let mut bundle = Bundle::new(&helmop.name_any(), spec);
    bundle.metadata.namespace = helmop.namespace();
    let mut labels = helmop.spec.labels.clone();
    labels.insert(HELMOP_LABEL.to_string(), helmop.name_any());
    bundle.metadata.labels = Some(labels);
    bundle
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn helmop(spec: serde_json::Value) -> HelmOp {
        serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1",
            "kind": "HelmOp",
            "metadata": {"name": "web", "namespace": "fleet-default"},
            "spec": spec,
        }))
        .unwrap()
    }

    #[test]
    fn chart_references_are_checked_as_fleet_checks_them() {
        let ok = [
            json!({"helm": {"repo": "https://r.example", "chart": "web", "version": "~1.2"}}),
            json!({"helm": {"repo": "oci://reg.example/charts/web", "version": "1.0.0"}}),
            json!({"helm": {"chart": "https://r.example/web-1.0.0.tgz"}}),
        ];
        for spec in ok {
            assert_eq!(validate(&helmop(spec.clone())), Ok(()), "{spec}");
        }
        let bad = [
            (json!({}), "helm options are empty"),
            (
                json!({"helm": {"repo": "https://r", "chart": "https://r/web-1.0.0.tgz"}}),
                "tarball chart with a non-empty repo field",
            ),
            (
                json!({"helm": {"chart": "https://r/web-1.0.0.TGZ", "version": "1.0.0"}}),
                "tarball chart with a non-empty version field",
            ),
            (
                json!({"helm": {"repo": "oci://reg/web", "chart": "web"}}),
                "OCI repository with a non-empty chart field",
            ),
            (
                json!({"helm": {"repo": "https://r"}}),
                "non-OCI repository with an empty chart field",
            ),
            (
                json!({"helm": {"chart": "web"}}),
                "non-tarball chart with an empty repo field",
            ),
        ];
        for (spec, message) in bad {
            let err = validate(&helmop(spec.clone())).unwrap_err();
            assert!(err.contains(message), "{spec}: {err}");
        }
    }

    #[test]
    fn the_bundle_is_named_labelled_and_targeted_as_fleets() {
        let op = helmop(json!({
            "helm": {"repo": "https://r.example", "chart": "web", "version": "~1.2",
                     "values": {"replicas": 2}},
            "namespace": "apps",
            "labels": {"team": "a"},
            "helmSecretName": "creds",
            "insecureSkipTLSVerify": true,
            "pollingInterval": "1m",
            "targets": [
                {"clusterSelector": {"matchLabels": {"env": "prod"}}},
                {"name": "edge", "clusterName": "edge", "helm": {"values": {"replicas": 1}}},
            ],
        }));
        let bundle = build(&op, "1.2.5");
        assert_eq!(bundle.name_any(), "web");
        assert_eq!(bundle.namespace().as_deref(), Some("fleet-default"));
        let labels = bundle.labels();
        assert_eq!(labels[HELMOP_LABEL], "web");
        assert_eq!(labels["team"], "a");
        let helm = bundle.spec.options.helm.as_ref().unwrap();
        assert_eq!(
            [&helm.repo, &helm.chart, &helm.version],
            ["https://r.example", "web", "1.2.5"]
        );
        assert_eq!(bundle.spec.options.target_namespace, "apps");
        assert!(bundle.spec.resources.is_empty());
        assert_eq!(
            bundle.spec.helm_op_options,
            Some(HelmOpOptions {
                secret_name: "creds".into(),
                insecure_skip_tls_verify: true,
                ca_bundle: None,
            })
        );
        let names: Vec<_> = bundle
            .spec
            .targets
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, ["target000", "edge"]);
        let edge = bundle.spec.targets[1].options.helm.as_ref().unwrap();
        assert_eq!(
            (
                edge.repo.as_str(),
                edge.chart.as_str(),
                edge.version.as_str()
            ),
            ("https://r.example", "web", "1.2.5")
        );
        // The HelmOp's own spec keeps its constraint.
        assert_eq!(op.spec.bundle.options.helm.unwrap().version, "~1.2");
        // Without targets: the default ClusterGroup.
        let bundle = build(
            &helmop(json!({"helm": {"chart": "https://r/web-1.0.0.tgz"}})),
            "",
        );
        assert_eq!(bundle.spec.targets.len(), 1);
        assert_eq!(
            (
                bundle.spec.targets[0].name.as_str(),
                bundle.spec.targets[0].cluster_group.as_str()
            ),
            ("default", "default")
        );
    }
}
