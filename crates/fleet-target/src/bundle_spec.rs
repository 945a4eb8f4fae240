//! Splits a Bundle's `spec` (fleet-api's `BundleSpec`) into what this crate uses: the targeting
//! input (targets, targetRestrictions, targetCustomizationMode and the inline
//! BundleDeploymentOptions), `rolloutStrategy`, `paused`, and our optional
//! `placement` block. Errors name the field (`spec.targetCustomizationMode: ...`).

use fleet_api::BundleSpec;

use crate::error::TargetError;
use crate::placement::PlacementPolicy;
use crate::rollout::RolloutStrategy;
use crate::selector::Labels;
use crate::targeting::{CustomizationMode, TargetingBundle};

/// A Bundle spec, split for targeting, placement and rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleSpecParts {
    pub targeting: TargetingBundle,
    pub rollout: RolloutStrategy,
    pub paused: bool,
    pub placement: Option<PlacementPolicy>,
}

/// Splits `spec` of the Bundle `namespace/name` (with its labels).
pub fn read_bundle_spec(
    namespace: &str,
    name: &str,
    labels: &Labels,
    spec: &BundleSpec,
) -> Result<BundleSpecParts, TargetError> {
    Ok(BundleSpecParts {
        targeting: TargetingBundle {
            name: name.to_string(),
            namespace: namespace.to_string(),
            labels: labels.clone(),
            options: spec.options.clone(),
            targets: spec.targets.clone(),
            target_restrictions: spec.target_restrictions.clone(),
            target_customization_mode: customization_mode(&spec.target_customization_mode)?,
        },
        rollout: spec.rollout_strategy.clone().unwrap_or_default(),
        paused: spec.paused,
        placement: spec
            .placement
            .as_ref()
            .map(PlacementPolicy::try_from)
            .transpose()?,
    })
}

/// `targetCustomizationMode`: empty is `FirstMatch`.
fn customization_mode(mode: &str) -> Result<CustomizationMode, TargetError> {
    match mode {
        "" | "FirstMatch" => Ok(CustomizationMode::FirstMatch),
        "AllMatches" => Ok(CustomizationMode::AllMatches),
        other => Err(TargetError::invalid(
            "spec.targetCustomizationMode",
            format!("unknown variant `{other}`, expected `FirstMatch` or `AllMatches`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intstr::IntOrPercent;
    use crate::placement::PlacementType;
    use serde_json::json;

    #[test]
    fn splits_a_fleet_bundle_spec() {
        let spec = json!({
            "defaultNamespace": "app",
            "helm": {"chart": "c", "values": {"a": 1}},
            "paused": true,
            "rolloutStrategy": {"maxUnavailable": "10%", "partitions": [{"name": "canary", "clusterName": "c1"}]},
            "resources": [{"name": "a.yaml", "content": "x"}],
            "targetCustomizationMode": "AllMatches",
            "targets": [
                {"name": "dev", "clusterSelector": {"matchLabels": {"env": "dev"}}, "helm": {"values": {"b": 2}}},
                {"name": "all", "clusterGroup": "default"}
            ],
            "targetRestrictions": [{"name": "all", "clusterGroup": "default"}],
            "dependsOn": [{"name": "other"}],
            "placement": {"type": "PickN", "numberOfClusters": 2}
        });
        let spec: BundleSpec = serde_json::from_value(spec).unwrap();
        let parts = read_bundle_spec("fleet-default", "app", &Labels::new(), &spec).unwrap();
        assert_eq!(
            serde_json::to_value(&parts.targeting.options).unwrap(),
            // As fleet-api's options serialize (an empty `ignore` included).
            json!({"defaultNamespace": "app", "helm": {"chart": "c", "values": {"a": 1}}, "ignore": {}})
        );
        assert_eq!(parts.targeting.targets.len(), 2);
        assert_eq!(
            serde_json::to_value(&parts.targeting.targets[0].options).unwrap(),
            json!({"helm": {"values": {"b": 2}}, "ignore": {}})
        );
        assert_eq!(parts.targeting.target_restrictions[0].name, "all");
        assert_eq!(
            parts.targeting.target_customization_mode,
            CustomizationMode::AllMatches
        );
        assert_eq!(
            parts.rollout.max_unavailable,
            Some(IntOrPercent::String("10%".into()))
        );
        assert_eq!(parts.rollout.partitions[0].cluster_name, "c1");
        assert!(parts.paused);
        assert_eq!(
            parts.placement.unwrap().placement_type,
            PlacementType::PickN
        );
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                json!({"placement": {"type": "PickSome"}}),
                "spec.placement.type: unknown value \"PickSome\", expected one of PickAll, PickFixed, PickN",
            ),
            (
                json!({"targetCustomizationMode": "Sometimes"}),
                "spec.targetCustomizationMode: unknown variant `Sometimes`, expected `FirstMatch` or `AllMatches`",
            ),
        ];
        for (spec, want) in cases {
            let spec: BundleSpec = serde_json::from_value(spec).unwrap();
            let err = read_bundle_spec("ns", "b", &Labels::new(), &spec).unwrap_err();
            assert_eq!(err.to_string(), want);
        }
    }
}
