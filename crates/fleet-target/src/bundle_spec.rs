//! Reads the parts of a Bundle's `spec` (as JSON, in Fleet's field names) that this crate uses:
//! the targeting input (targets, targetRestrictions, targetCustomizationMode, and the inline
//! BundleDeploymentOptions), `rolloutStrategy`, `paused`, and our optional `placement` block.
//! Errors name the field (`spec.targets[2]: ...`).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::TargetError;
use crate::placement::PlacementPolicy;
use crate::rollout::RolloutStrategy;
use crate::selector::Labels;
use crate::targeting::{CustomizationMode, TargetingBundle};

/// Bundle spec keys that are not BundleDeploymentOptions.
const NON_OPTION_KEYS: &[&str] = &[
    "paused",
    "rolloutStrategy",
    "resources",
    "targetCustomizationMode",
    "targets",
    "targetRestrictions",
    "dependsOn",
    "contentsId",
    "helmOpOptions",
    "valuesHash",
    "placement",
];

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
    spec: &Value,
) -> Result<BundleSpecParts, TargetError> {
    let Value::Object(spec) = spec else {
        return Err(TargetError::invalid("spec", "must be an object"));
    };
    let targets = list(spec, "targets")?;
    let target_restrictions = list(spec, "targetRestrictions")?;
    let target_customization_mode: CustomizationMode =
        field(spec, "targetCustomizationMode")?.unwrap_or_default();
    let options: Map<String, Value> = spec
        .iter()
        .filter(|(k, _)| !NON_OPTION_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(BundleSpecParts {
        targeting: TargetingBundle {
            name: name.to_string(),
            namespace: namespace.to_string(),
            labels: labels.clone(),
            options,
            targets,
            target_restrictions,
            target_customization_mode,
        },
        rollout: field(spec, "rolloutStrategy")?.unwrap_or_default(),
        paused: field(spec, "paused")?.unwrap_or(false),
        placement: field(spec, "placement")?,
    })
}

fn field<T: DeserializeOwned>(
    spec: &Map<String, Value>,
    key: &str,
) -> Result<Option<T>, TargetError> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| TargetError::invalid(format!("spec.{key}"), e.to_string())),
    }
}

fn list<T: DeserializeOwned>(spec: &Map<String, Value>, key: &str) -> Result<Vec<T>, TargetError> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value(v.clone())
                    .map_err(|e| TargetError::invalid(format!("spec.{key}[{i}]"), e.to_string()))
            })
            .collect(),
        Some(_) => Err(TargetError::invalid(
            format!("spec.{key}"),
            "must be a list",
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
        let parts = read_bundle_spec("fleet-default", "app", &Labels::new(), &spec).unwrap();
        assert_eq!(
            Value::Object(parts.targeting.options.clone()),
            json!({"defaultNamespace": "app", "helm": {"chart": "c", "values": {"a": 1}}})
        );
        assert_eq!(parts.targeting.targets.len(), 2);
        assert_eq!(
            parts.targeting.targets[0].options,
            json!({"helm": {"values": {"b": 2}}})
                .as_object()
                .cloned()
                .unwrap()
        );
        assert_eq!(parts.targeting.target_restrictions[0].name, "all");
        assert_eq!(
            parts.targeting.target_customization_mode,
            CustomizationMode::AllMatches
        );
        assert_eq!(
            parts.rollout.max_unavailable,
            Some(IntOrPercent::Str("10%".into()))
        );
        assert_eq!(
            parts.rollout.partitions[0].matcher.cluster_name.as_deref(),
            Some("c1")
        );
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
                json!({"targets": [{}, {"clusterSelector": "env=prod"}]}),
                "spec.targets[1]: invalid type: string \"env=prod\", expected struct LabelSelector",
            ),
            (json!({"targets": {}}), "spec.targets: must be a list"),
            (
                json!({"placement": {"type": "PickSome"}}),
                "spec.placement: unknown variant `PickSome`, expected one of `PickAll`, `PickFixed`, `PickN`",
            ),
            (json!([]), "spec: must be an object"),
            (
                json!({"targetCustomizationMode": "Sometimes"}),
                "spec.targetCustomizationMode: unknown variant `Sometimes`, expected `FirstMatch` or `AllMatches`",
            ),
        ];
        for (spec, want) in cases {
            let err = read_bundle_spec("ns", "b", &Labels::new(), &spec).unwrap_err();
            assert_eq!(err.to_string(), want);
        }
    }
}
