//! fleet-api's `placement` block (whose enums are strings, as in the CRD) read once into the
//! scheduler's validated [`PlacementPolicy`]: each enum string is checked and every error names its
//! field under `spec.placement`. Go's zero values (an empty string) mean the default where the API
//! has one (`type`, `whenUnsatisfiable`, toleration `operator` and `effect`).

use fleet_api::{
    ClusterAffinity as ApiAffinity, ClusterSelectorTerm as ApiTerm, PlacementPolicy as ApiPolicy,
    PlacementToleration, PropertySelectorRequirement, PropertySorter as ApiSorter,
    TAINT_NO_SCHEDULE, TAINT_NO_SELECT, TopologySpreadConstraint as ApiSpread,
};

use crate::error::TargetError;
use crate::model::TaintEffect;

use super::policy::{
    Affinity, ClusterAffinity, ClusterSelectorTerm, PlacementPolicy, PlacementType, PreferredTerm,
    PropertyOperator, PropertyRequirement, PropertySelector, PropertySorter, RequiredTerms,
    SortOrder, Toleration, TolerationOperator, TopologySpreadConstraint, WhenUnsatisfiable,
};

const ROOT: &str = "spec.placement";

impl TryFrom<&ApiPolicy> for PlacementPolicy {
    type Error = TargetError;

    fn try_from(policy: &ApiPolicy) -> Result<Self, TargetError> {
        Ok(PlacementPolicy {
            placement_type: one_of(
                &policy.placement_type,
                &format!("{ROOT}.type"),
                &[
                    ("", PlacementType::PickAll),
                    ("PickAll", PlacementType::PickAll),
                    ("PickFixed", PlacementType::PickFixed),
                    ("PickN", PlacementType::PickN),
                ],
            )?,
            cluster_names: policy.cluster_names.clone(),
            number_of_clusters: policy
                .number_of_clusters
                .map(|n| {
                    u32::try_from(n).map_err(|_| {
                        TargetError::invalid(
                            format!("{ROOT}.numberOfClusters"),
                            format!("{n} is negative"),
                        )
                    })
                })
                .transpose()?,
            affinity: policy
                .affinity
                .as_ref()
                .map(|a| -> Result<Affinity, TargetError> {
                    Ok(Affinity {
                        cluster_affinity: a
                            .cluster_affinity
                            .as_ref()
                            .map(|c| {
                                cluster_affinity(c, &format!("{ROOT}.affinity.clusterAffinity"))
                            })
                            .transpose()?,
                    })
                })
                .transpose()?,
            topology_spread_constraints: policy
                .topology_spread_constraints
                .iter()
                .enumerate()
                .map(|(i, c)| spread(c, &format!("{ROOT}.topologySpreadConstraints[{i}]")))
                .collect::<Result<_, _>>()?,
            tolerations: policy
                .tolerations
                .iter()
                .enumerate()
                .map(|(i, t)| toleration(t, &format!("{ROOT}.tolerations[{i}]")))
                .collect::<Result<_, _>>()?,
            strategy: policy.strategy.clone(),
        })
    }
}

/// The value `choices` pairs with `value`, or an error naming `field` and the choices.
fn one_of<T: Copy>(value: &str, field: &str, choices: &[(&str, T)]) -> Result<T, TargetError> {
    if let Some((_, v)) = choices.iter().find(|(name, _)| *name == value) {
        return Ok(*v);
    }
    let names: Vec<&str> = choices
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !name.is_empty())
        .collect();
    Err(TargetError::invalid(
        field,
        format!(
            "unknown value {value:?}, expected one of {}",
            names.join(", ")
        ),
    ))
}

fn cluster_affinity(a: &ApiAffinity, at: &str) -> Result<ClusterAffinity, TargetError> {
    let required = &a.required_during_scheduling_ignored_during_execution;
    let preferred = &a.preferred_during_scheduling_ignored_during_execution;
    Ok(ClusterAffinity {
        required_during_scheduling_ignored_during_execution: required
            .as_ref()
            .map(|r| -> Result<RequiredTerms, TargetError> {
                Ok(RequiredTerms {
                    cluster_selector_terms: r
                        .cluster_selector_terms
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            term(
                                t,
                                &format!(
                                    "{at}.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[{i}]"
                                ),
                            )
                        })
                        .collect::<Result<_, _>>()?,
                })
            })
            .transpose()?,
        preferred_during_scheduling_ignored_during_execution: preferred
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at = format!("{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
                Ok(PreferredTerm {
                    weight: p.weight,
                    preference: term(&p.preference, &format!("{at}.preference"))?,
                })
            })
            .collect::<Result<_, TargetError>>()?,
    })
}

fn term(t: &ApiTerm, at: &str) -> Result<ClusterSelectorTerm, TargetError> {
    Ok(ClusterSelectorTerm {
        label_selector: t.label_selector.clone(),
        property_selector: t
            .property_selector
            .as_ref()
            .map(|p| -> Result<PropertySelector, TargetError> {
                Ok(PropertySelector {
                    match_expressions: p
                        .match_expressions
                        .iter()
                        .enumerate()
                        .map(|(j, r)| {
                            requirement(r, &format!("{at}.propertySelector.matchExpressions[{j}]"))
                        })
                        .collect::<Result<_, _>>()?,
                })
            })
            .transpose()?,
        property_sorter: t
            .property_sorter
            .as_ref()
            .map(|s| sorter(s, &format!("{at}.propertySorter")))
            .transpose()?,
    })
}

fn requirement(
    r: &PropertySelectorRequirement,
    at: &str,
) -> Result<PropertyRequirement, TargetError> {
    use PropertyOperator::*;
    Ok(PropertyRequirement {
        name: r.name.clone(),
        operator: one_of(
            &r.operator,
            &format!("{at}.operator"),
            &[
                ("Gt", Gt),
                ("Ge", Ge),
                ("Eq", Eq),
                ("Ne", Ne),
                ("Lt", Lt),
                ("Le", Le),
            ],
        )?,
        values: r.values.clone(),
    })
}

fn sorter(s: &ApiSorter, at: &str) -> Result<PropertySorter, TargetError> {
    Ok(PropertySorter {
        name: s.name.clone(),
        sort_order: one_of(
            &s.sort_order,
            &format!("{at}.sortOrder"),
            &[
                ("Ascending", SortOrder::Ascending),
                ("Descending", SortOrder::Descending),
            ],
        )?,
    })
}

fn spread(c: &ApiSpread, at: &str) -> Result<TopologySpreadConstraint, TargetError> {
    Ok(TopologySpreadConstraint {
        max_skew: c.max_skew.unwrap_or(1),
        topology_key: c.topology_key.clone(),
        when_unsatisfiable: one_of(
            &c.when_unsatisfiable,
            &format!("{at}.whenUnsatisfiable"),
            &[
                ("", WhenUnsatisfiable::DoNotSchedule),
                ("DoNotSchedule", WhenUnsatisfiable::DoNotSchedule),
                ("ScheduleAnyway", WhenUnsatisfiable::ScheduleAnyway),
            ],
        )?,
    })
}

fn toleration(t: &PlacementToleration, at: &str) -> Result<Toleration, TargetError> {
    Ok(Toleration {
        key: t.key.clone(),
        operator: one_of(
            &t.operator,
            &format!("{at}.operator"),
            &[
                ("", TolerationOperator::Equal),
                ("Equal", TolerationOperator::Equal),
                ("Exists", TolerationOperator::Exists),
            ],
        )?,
        value: t.value.clone(),
        effect: one_of(
            &t.effect,
            &format!("{at}.effect"),
            &[
                ("", None),
                (TAINT_NO_SCHEDULE, Some(TaintEffect::NoSchedule)),
                (TAINT_NO_SELECT, Some(TaintEffect::NoSelect)),
            ],
        )?,
        toleration_seconds: t.toleration_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn api(v: serde_json::Value) -> ApiPolicy {
        serde_json::from_value(v).expect("a fleet-api placement block")
    }

    #[test]
    fn every_field_is_read() {
        let policy = PlacementPolicy::try_from(&api(json!({
            "type": "PickN", "numberOfClusters": 2,
            "affinity": {"clusterAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                    {"labelSelector": {"matchLabels": {"env": "prod"}},
                     "propertySelector": {"matchExpressions": [{"name": "n", "operator": "Ge", "values": ["3"]}]}}
                ]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 20, "preference": {"propertySorter": {"name": "cpu", "sortOrder": "Descending"}}}
                ]
            }},
            "topologySpreadConstraints": [{"topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSelect", "tolerationSeconds": 30}, {"key": "j", "value": "v"}],
            "strategy": {"maxSurge": 1}
        })))
        .unwrap();
        assert_eq!(policy.placement_type, PlacementType::PickN);
        assert_eq!(policy.number_of_clusters, Some(2));
        let required = policy.required_terms().unwrap();
        assert_eq!(
            required[0]
                .property_selector
                .as_ref()
                .unwrap()
                .match_expressions[0]
                .operator,
            PropertyOperator::Ge
        );
        assert!(required[0].label_selector.is_some());
        let preferred = policy.preferred_terms();
        assert_eq!(preferred[0].weight, 20);
        assert_eq!(
            preferred[0]
                .preference
                .property_sorter
                .as_ref()
                .unwrap()
                .sort_order,
            SortOrder::Descending
        );
        let spread = &policy.topology_spread_constraints[0];
        assert_eq!((spread.max_skew, spread.topology_key.as_str()), (1, "zone"));
        assert_eq!(spread.when_unsatisfiable, WhenUnsatisfiable::ScheduleAnyway);
        assert_eq!(
            policy.tolerations,
            vec![
                Toleration {
                    key: "k".into(),
                    operator: TolerationOperator::Exists,
                    value: String::new(),
                    effect: Some(TaintEffect::NoSelect),
                    toleration_seconds: Some(30),
                },
                Toleration {
                    key: "j".into(),
                    operator: TolerationOperator::Equal,
                    value: "v".into(),
                    effect: None,
                    toleration_seconds: None,
                },
            ]
        );
        assert!(policy.strategy.unwrap().max_surge.is_some());
        // Go's zero values are the defaults.
        let zero = PlacementPolicy::try_from(&api(json!({"type": ""}))).unwrap();
        assert_eq!(zero, PlacementPolicy::default());
    }

    #[test]
    fn bad_enum_values_and_negative_counts_name_the_field() {
        let cases = [
            (
                json!({"type": "PickSome"}),
                "spec.placement.type: unknown value \"PickSome\", expected one of PickAll, PickFixed, PickN",
            ),
            (
                json!({"type": "PickN", "numberOfClusters": -1}),
                "spec.placement.numberOfClusters: -1 is negative",
            ),
            (
                json!({"tolerations": [{}, {"effect": "NoExecute"}]}),
                "spec.placement.tolerations[1].effect: unknown value \"NoExecute\", expected one of NoSchedule, NoSelect",
            ),
            (
                json!({"topologySpreadConstraints": [{"topologyKey": "z", "whenUnsatisfiable": "Never"}]}),
                "spec.placement.topologySpreadConstraints[0].whenUnsatisfiable: unknown value \"Never\", expected one of DoNotSchedule, ScheduleAnyway",
            ),
            (
                json!({"affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"propertySorter": {"name": "n"}}}
                ]}}}),
                "spec.placement.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.propertySorter.sortOrder: unknown value \"\", expected one of Ascending, Descending",
            ),
            (
                json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                    {"propertySelector": {"matchExpressions": [{"name": "n", "operator": "Gte", "values": ["1"]}]}}
                ]}}}}),
                "spec.placement.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySelector.matchExpressions[0].operator: unknown value \"Gte\", expected one of Gt, Ge, Eq, Ne, Lt, Le",
            ),
        ];
        for (input, want) in cases {
            let err = PlacementPolicy::try_from(&api(input.clone())).unwrap_err();
            assert_eq!(err.to_string(), want, "{input}");
        }
    }
}
