//! The placement policy block (optional, on GitRepo, fleet.yaml and Bundle): `type`,
//! `clusterNames`, `numberOfClusters`, `affinity.clusterAffinity` (required terms with label and
//! property selectors, preferred terms with weights, label selectors and property sorters),
//! `topologySpreadConstraints`, `tolerations` and the rolling `strategy` — KubeFleet's shapes —
//! with validation that names the offending field. The types here are fleet-api's placement block
//! with its enum strings checked (read from the API in [`super::from_api`]); `strategy` is
//! fleet-api's own type.

use fleet_api::PlacementStrategy;
use serde::{Deserialize, Serialize};

use crate::error::TargetError;
use crate::intstr::IntOrPercentExt;
use crate::model::TaintEffect;
use crate::quantity::parse_quantity;
use crate::selector::{LabelSelector, SelectorExt};

/// How clusters are chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlacementType {
    /// Every cluster that passes the filters.
    #[default]
    PickAll,
    /// Exactly the named clusters (eligibility is checked; affinity and taints are not).
    PickFixed,
    /// The `numberOfClusters` best-scoring clusters that pass the filters.
    PickN,
}

/// A placement policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacementPolicy {
    #[serde(default, rename = "type", deserialize_with = "crate::serde_util::empty_default")]
    pub placement_type: PlacementType,
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub cluster_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_clusters: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    #[serde(
        default,
        deserialize_with = "crate::serde_util::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tolerations: Vec<Toleration>,
    /// The rolling-update budget, as fleet-api has it (`maxUnavailable` and `maxSurge` default to
    /// `25%` of the target count, rounded up; `unavailablePeriodSeconds` to 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<PlacementStrategy>,
}

/// `affinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Affinity {
    #[serde(default)]
    pub cluster_affinity: Option<ClusterAffinity>,
}

/// `affinity.clusterAffinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterAffinity {
    #[serde(default)]
    pub required_during_scheduling_ignored_during_execution: Option<RequiredTerms>,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredTerm>,
}

/// Required terms: a cluster passes if ANY term matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequiredTerms {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub cluster_selector_terms: Vec<ClusterSelectorTerm>,
}

/// A term: its parts are ANDed. `propertySelector` is for required terms, `propertySorter`
/// for preferred ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSelectorTerm {
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    #[serde(default)]
    pub property_selector: Option<PropertySelector>,
    #[serde(default)]
    pub property_sorter: Option<PropertySorter>,
}

/// A preferred term and its weight in [-100, 100].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreferredTerm {
    pub weight: i32,
    pub preference: ClusterSelectorTerm,
}

/// Property requirements, ANDed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PropertySelector {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub match_expressions: Vec<PropertyRequirement>,
}

/// `name operator values[0]`, compared as quantities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PropertyRequirement {
    pub name: String,
    pub operator: PropertyOperator,
    pub values: Vec<String>,
}

/// Quantity comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PropertyOperator {
    Gt,
    Ge,
    Eq,
    Ne,
    Lt,
    Le,
}

/// Scores clusters by a property, interpolated between the fleet's minimum and maximum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PropertySorter {
    pub name: String,
    pub sort_order: SortOrder,
}

/// Which end of the range scores the full weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortOrder {
    Ascending,
    Descending,
}

/// One topology spread constraint (ANDed with the others; PickN only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopologySpreadConstraint {
    #[serde(default = "default_max_skew", deserialize_with = "max_skew_or_one")]
    pub max_skew: i64,
    pub topology_key: String,
    #[serde(default, deserialize_with = "crate::serde_util::empty_default")]
    pub when_unsatisfiable: WhenUnsatisfiable,
}

fn default_max_skew() -> i64 {
    1
}

fn max_skew_or_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Option::<i64>::deserialize(d).map(|v| v.unwrap_or(1))
}

/// What a violated spread constraint does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WhenUnsatisfiable {
    /// The cluster is filtered out.
    #[default]
    DoNotSchedule,
    /// The cluster's topology score drops by 1000.
    ScheduleAnyway,
}

/// A toleration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Toleration {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub key: String,
    #[serde(default, deserialize_with = "crate::serde_util::empty_default")]
    pub operator: TolerationOperator,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub value: String,
    /// `None` tolerates every effect.
    #[serde(default, deserialize_with = "crate::serde_util::empty_default")]
    pub effect: Option<TaintEffect>,
    /// Tolerate only until this many seconds after the taint was added.
    #[serde(default)]
    pub toleration_seconds: Option<i64>,
}

/// Toleration operators.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TolerationOperator {
    #[default]
    Equal,
    Exists,
}

impl PlacementPolicy {
    /// Checks the policy; errors name the field under `placement`.
    pub fn validate(&self) -> Result<(), TargetError> {
        let f = |s: &str| format!("placement.{s}");
        let forbid = |cond: bool, field: &str| {
            if cond {
                Err(TargetError::invalid(
                    f(field),
                    format!("not allowed with type {:?}", self.placement_type),
                ))
            } else {
                Ok(())
            }
        };
        match self.placement_type {
            PlacementType::PickAll => {
                forbid(!self.cluster_names.is_empty(), "clusterNames")?;
                forbid(self.number_of_clusters.is_some(), "numberOfClusters")?;
                forbid(
                    !self.topology_spread_constraints.is_empty(),
                    "topologySpreadConstraints",
                )?;
            }
            PlacementType::PickFixed => {
                forbid(self.affinity.is_some(), "affinity")?;
                forbid(self.number_of_clusters.is_some(), "numberOfClusters")?;
                forbid(
                    !self.topology_spread_constraints.is_empty(),
                    "topologySpreadConstraints",
                )?;
                forbid(!self.tolerations.is_empty(), "tolerations")?;
            }
            PlacementType::PickN => {
                forbid(!self.cluster_names.is_empty(), "clusterNames")?;
                if self.number_of_clusters.is_none() {
                    return Err(TargetError::invalid(
                        f("numberOfClusters"),
                        "required with type PickN",
                    ));
                }
            }
        }
        if let Some(ClusterAffinity {
            required_during_scheduling_ignored_during_execution: required,
            preferred_during_scheduling_ignored_during_execution: preferred,
        }) = self
            .affinity
            .as_ref()
            .and_then(|a| a.cluster_affinity.as_ref())
        {
            let base = "affinity.clusterAffinity";
            for (i, term) in required
                .iter()
                .flat_map(|r| r.cluster_selector_terms.iter())
                .enumerate()
            {
                let at = f(&format!(
                    "{base}.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[{i}]"
                ));
                if term.property_sorter.is_some() {
                    return Err(TargetError::invalid(
                        format!("{at}.propertySorter"),
                        "only allowed in preferred terms",
                    ));
                }
                validate_term(term, &at)?;
            }
            for (i, p) in preferred.iter().enumerate() {
                let at = f(&format!(
                    "{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                ));
                if !(-100..=100).contains(&p.weight) {
                    return Err(TargetError::invalid(
                        format!("{at}.weight"),
                        format!("{} is outside [-100, 100]", p.weight),
                    ));
                }
                if p.preference.property_selector.is_some() {
                    return Err(TargetError::invalid(
                        format!("{at}.preference.propertySelector"),
                        "only allowed in required terms",
                    ));
                }
                validate_term(&p.preference, &format!("{at}.preference"))?;
            }
        }
        for (i, c) in self.topology_spread_constraints.iter().enumerate() {
            let at = f(&format!("topologySpreadConstraints[{i}]"));
            if c.max_skew < 1 {
                return Err(TargetError::invalid(
                    format!("{at}.maxSkew"),
                    "must be at least 1",
                ));
            }
            if c.topology_key.is_empty() {
                return Err(TargetError::invalid(
                    format!("{at}.topologyKey"),
                    "must not be empty",
                ));
            }
        }
        for (i, t) in self.tolerations.iter().enumerate() {
            let at = f(&format!("tolerations[{i}]"));
            if t.key.is_empty() && t.operator != TolerationOperator::Exists {
                return Err(TargetError::invalid(
                    at,
                    "an empty key requires operator Exists",
                ));
            }
            if t.operator == TolerationOperator::Exists && !t.value.is_empty() {
                return Err(TargetError::invalid(
                    format!("{at}.value"),
                    "must be empty with operator Exists",
                ));
            }
        }
        if let Some(strategy) = &self.strategy {
            for (value, name) in [
                (&strategy.max_unavailable, "maxUnavailable"),
                (&strategy.max_surge, "maxSurge"),
            ] {
                if let Some(v) = value {
                    let field = f(&format!("strategy.{name}"));
                    if v.scaled_round_up(1, &field)? < 0 {
                        return Err(TargetError::invalid(field, "must not be negative"));
                    }
                }
            }
            if strategy.unavailable_period_seconds.is_some_and(|s| s < 0) {
                return Err(TargetError::invalid(
                    f("strategy.unavailablePeriodSeconds"),
                    "must not be negative",
                ));
            }
        }
        Ok(())
    }

    /// The preferred terms (empty without affinity).
    pub fn preferred_terms(&self) -> &[PreferredTerm] {
        self.affinity
            .as_ref()
            .and_then(|a| a.cluster_affinity.as_ref())
            .map_or(&[], |c| {
                c.preferred_during_scheduling_ignored_during_execution
                    .as_slice()
            })
    }

    /// The required terms, if any are set.
    pub fn required_terms(&self) -> Option<&[ClusterSelectorTerm]> {
        self.affinity
            .as_ref()
            .and_then(|a| a.cluster_affinity.as_ref())
            .and_then(|c| {
                c.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|r| r.cluster_selector_terms.as_slice())
            .filter(|t| !t.is_empty())
    }
}

fn validate_term(term: &ClusterSelectorTerm, at: &str) -> Result<(), TargetError> {
    if let Some(sel) = &term.label_selector {
        sel.validate(&format!("{at}.labelSelector"))?;
    }
    for (j, req) in term
        .property_selector
        .iter()
        .flat_map(|p| p.match_expressions.iter())
        .enumerate()
    {
        let at = format!("{at}.propertySelector.matchExpressions[{j}]");
        if req.values.len() != 1 {
            return Err(TargetError::invalid(
                format!("{at}.values"),
                format!("needs exactly one value, got {}", req.values.len()),
            ));
        }
        if parse_quantity(&req.values[0]).is_none() {
            return Err(TargetError::invalid(
                format!("{at}.values[0]"),
                format!("{:?} is not a quantity", req.values[0]),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(v: serde_json::Value) -> PlacementPolicy {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn validation_table() {
        let cases = [
            (
                json!({"type": "PickN"}),
                Some("placement.numberOfClusters: required with type PickN"),
            ),
            (json!({"type": "PickN", "numberOfClusters": 2}), None),
            (
                json!({"type": "PickAll", "numberOfClusters": 2}),
                Some("placement.numberOfClusters: not allowed with type PickAll"),
            ),
            (
                json!({"type": "PickFixed", "clusterNames": ["a"], "tolerations": [{"operator": "Exists"}]}),
                Some("placement.tolerations: not allowed with type PickFixed"),
            ),
            (
                json!({"type": "PickN", "numberOfClusters": 1, "topologySpreadConstraints": [{"topologyKey": "region", "maxSkew": 0}]}),
                Some("placement.topologySpreadConstraints[0].maxSkew: must be at least 1"),
            ),
            (
                json!({"tolerations": [{"key": "", "operator": "Equal"}]}),
                Some("placement.tolerations[0]: an empty key requires operator Exists"),
            ),
            (
                json!({"strategy": {"maxSurge": "lots"}}),
                Some(
                    "placement.strategy.maxSurge: \"lots\" is neither an integer nor a percentage such as \"25%\"",
                ),
            ),
            (
                json!({"strategy": {"maxUnavailable": -1}}),
                Some("placement.strategy.maxUnavailable: must not be negative"),
            ),
            (
                json!({"strategy": {"maxUnavailable": "10%", "maxSurge": 2, "unavailablePeriodSeconds": 30}}),
                None,
            ),
            (
                json!({"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}),
                Some("placement.tolerations[0].value: must be empty with operator Exists"),
            ),
            (
                json!({"affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "preference": {}}]}}}),
                Some(
                    "placement.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: 101 is outside [-100, 100]",
                ),
            ),
            (
                json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                    {"propertySelector": {"matchExpressions": [{"name": "n", "operator": "Ge", "values": ["1", "2"]}]}}
                ]}}}}),
                Some(
                    "placement.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySelector.matchExpressions[0].values: needs exactly one value, got 2",
                ),
            ),
            (
                json!({"affinity": {"clusterAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [
                    {"propertySorter": {"name": "n", "sortOrder": "Ascending"}}
                ]}}}}),
                Some(
                    "placement.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySorter: only allowed in preferred terms",
                ),
            ),
        ];
        for (input, want) in cases {
            let got = policy(input.clone())
                .validate()
                .err()
                .map(|e| e.to_string());
            assert_eq!(got.as_deref(), want, "{input}");
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err =
            serde_json::from_value::<PlacementPolicy>(json!({"numberOfCluster": 3})).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `numberOfCluster`"),
            "{err}"
        );
    }
}
