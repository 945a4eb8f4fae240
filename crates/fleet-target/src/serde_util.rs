//! Lenient deserialization helpers for objects that went through Go's JSON encoding: a `null`
//! field reads as the Rust default (Go writes nil slices and maps as `null`), and an empty string
//! reads as an enum's default (Go's zero value for string enums).

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer};

/// `null` (or a missing field, with `#[serde(default)]`) becomes `T::default()`.
pub fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// `null` or `""` becomes `T::default()`; any other string is read as `T`.
pub fn empty_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + DeserializeOwned,
{
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(T::default()),
        Some(s) if s.is_empty() => Ok(T::default()),
        Some(s) => T::deserialize(s.into_deserializer()),
    }
}

#[cfg(test)]
mod tests {
    use crate::placement::PlacementPolicy;
    use crate::selector::{LabelSelector, SelectorExt};
    use crate::targeting::TargetingBundle;
    use serde_json::json;

    #[test]
    fn go_zero_values_read_as_defaults() {
        let sel: LabelSelector =
            serde_json::from_value(json!({"matchLabels": null, "matchExpressions": null})).unwrap();
        assert!(sel.is_empty());
        let policy: PlacementPolicy = serde_json::from_value(json!({
            "type": "", "clusterNames": null, "tolerations": [{"operator": "", "effect": "", "key": "k"}],
            "topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": null, "whenUnsatisfiable": ""}]
        }))
        .unwrap();
        assert_eq!(
            policy,
            serde_json::from_value(json!({
                "tolerations": [{"key": "k"}],
                "topologySpreadConstraints": [{"topologyKey": "zone"}]
            }))
            .unwrap()
        );
        let bundle: TargetingBundle = serde_json::from_value(json!({
            "name": "b", "namespace": "n", "labels": null, "targets": null,
            "targetRestrictions": null, "targetCustomizationMode": ""
        }))
        .unwrap();
        assert!(bundle.targets.is_empty());
        let err =
            serde_json::from_value::<PlacementPolicy>(json!({"type": "PickSome"})).unwrap_err();
        assert!(
            err.to_string().contains("unknown variant `PickSome`"),
            "{err}"
        );
    }
}
