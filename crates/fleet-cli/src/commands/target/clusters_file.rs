//! The clusters file of `fleet target`: a fleet written down as YAML (the clusters and cluster groups of
//! [`fleet_target::model::FleetSnapshot`]), plus the time to schedule at and the placements that already exist.
//! Reading it checks what serde cannot: no cluster or group twice, and existing placements that name a bundle
//! and a cluster that exist. Every error names the file, the line and the field.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use fleet_target::index::ClusterIndex;
use fleet_target::mapping::{NamespaceInfo, NamespaceMapping};
use fleet_target::model::{ClusterGroupInfo, ClusterInfo, ClusterKey, UnixSeconds};
use fleet_target::placement::{ClusterScore, ExistingPlacement, PlacementState};
use fleet_yaml::parse::Located;
use serde::Deserialize;

use super::file_cluster::FileCluster;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    now: Option<UnixSeconds>,
    #[serde(default)]
    clusters: Vec<FileCluster>,
    #[serde(default)]
    groups: Vec<ClusterGroupInfo>,
    #[serde(default)]
    placements: Vec<PlacementEntry>,
    #[serde(default)]
    namespaces: Vec<NamespaceInfo>,
    #[serde(default)]
    namespace_mappings: Vec<NamespaceMapping>,
}

/// One existing placement: a bundle already placed on a cluster.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlacementEntry {
    bundle: String,
    cluster: String,
    /// The cluster's namespace; the bundles' namespace when absent.
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default = "bound")]
    state: PlacementState,
    #[serde(default)]
    obsolete: bool,
    #[serde(default)]
    score: Option<ClusterScore>,
}

fn bound() -> PlacementState {
    PlacementState::Bound
}

/// A clusters file, read and checked.
#[derive(Debug)]
pub struct ClustersFile {
    pub index: ClusterIndex,
    /// Every namespace that holds a cluster, sorted.
    pub namespaces: BTreeSet<String>,
    /// Namespaces with their labels (those listed, and those of clusters, unlabelled), for namespace mappings.
    pub namespace_infos: Vec<NamespaceInfo>,
    /// BundleNamespaceMappings: which other namespaces' clusters a bundle may target.
    pub namespace_mappings: Vec<NamespaceMapping>,
    /// The time placements are scheduled at (Unix seconds).
    pub now: UnixSeconds,
    /// Existing placements by bundle name.
    pub placements: BTreeMap<String, Vec<ExistingPlacement>>,
    /// What was read but not used, for stderr (placements of bundles that were not read).
    pub notes: Vec<String>,
}

/// Reads `path`; existing placements of clusters without a namespace are taken to be in `bundle_namespace`.
/// Placements of bundles other than `bundle_names` are left out, with a note.
pub fn read(
    path: &str,
    bundle_namespace: &str,
    bundle_names: &BTreeSet<String>,
) -> anyhow::Result<ClustersFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading clusters file {path}"))?;
    parse(&text, path, bundle_namespace, bundle_names)
}

/// [`read`] on the file's text; `origin` names it in errors.
pub fn parse(
    text: &str,
    origin: &str,
    bundle_namespace: &str,
    bundle_names: &BTreeSet<String>,
) -> anyhow::Result<ClustersFile> {
    let located = fleet_yaml::parse::located(text, origin)?;
    let raw: RawFile = if located.value().is_null() {
        RawFile::default()
    } else {
        located.deserialize()?
    };
    let describe = |pointer: &str, message: String| -> String {
        let location = located
            .location(pointer)
            .map(|l| format!(":{l}"))
            .unwrap_or_default();
        let field = pointer.trim_start_matches('/').replace('/', ".");
        format!("{origin}{location}: {}: {message}", dotted_indices(&field))
    };
    let at = |pointer: &str, message: String| anyhow::anyhow!(describe(pointer, message));
    let clusters: Vec<ClusterInfo> = raw.clusters.into_iter().map(ClusterInfo::from).collect();
    check_unique(
        &located,
        "clusters",
        clusters.iter().map(|c| c.key().to_string()),
        &at,
    )?;
    check_unique(
        &located,
        "groups",
        raw.groups
            .iter()
            .map(|g| ClusterKey::new(&g.namespace, &g.name).to_string()),
        &at,
    )?;
    let cluster_keys: BTreeSet<ClusterKey> = clusters.iter().map(ClusterInfo::key).collect();
    let mut placements: BTreeMap<String, Vec<ExistingPlacement>> = BTreeMap::new();
    let mut notes = Vec::new();
    for (i, entry) in raw.placements.into_iter().enumerate() {
        let namespace = entry
            .namespace
            .unwrap_or_else(|| bundle_namespace.to_string());
        let cluster = ClusterKey::new(namespace, entry.cluster);
        if !cluster_keys.contains(&cluster) {
            return Err(at(
                &format!("/placements/{i}/cluster"),
                format!("no cluster {cluster} in the clusters list"),
            ));
        }
        if !bundle_names.contains(&entry.bundle) {
            let known: Vec<&str> = bundle_names.iter().map(String::as_str).collect();
            notes.push(describe(
                &format!("/placements/{i}/bundle"),
                format!(
                    "no bundle {:?} was read (bundles: {}); placement ignored",
                    entry.bundle,
                    known.join(", ")
                ),
            ));
            continue;
        }
        placements
            .entry(entry.bundle)
            .or_default()
            .push(ExistingPlacement {
                cluster,
                state: entry.state,
                obsolete: entry.obsolete,
                score: entry.score,
            });
    }
    check_unique(
        &located,
        "namespaces",
        raw.namespaces.iter().map(|n| n.name.clone()),
        &at,
    )?;
    let namespaces: BTreeSet<String> = clusters.iter().map(|c| c.namespace.clone()).collect();
    let mut namespace_infos = raw.namespaces;
    let listed: BTreeSet<String> = namespace_infos.iter().map(|n| n.name.clone()).collect();
    namespace_infos.extend(
        namespaces
            .iter()
            .filter(|ns| !listed.contains(*ns))
            .map(|ns| NamespaceInfo {
                name: ns.clone(),
                labels: Default::default(),
            }),
    );
    Ok(ClustersFile {
        namespace_infos,
        namespace_mappings: raw.namespace_mappings,
        notes,
        index: ClusterIndex::new(clusters, raw.groups),
        namespaces,
        now: raw.now.unwrap_or(0),
        placements,
    })
}

/// Errors if a namespace/name appears twice in the list under `key`.
fn check_unique(
    located: &Located,
    key: &str,
    keys: impl Iterator<Item = String>,
    at: &dyn Fn(&str, String) -> anyhow::Error,
) -> anyhow::Result<()> {
    let mut seen = BTreeMap::new();
    for (i, k) in keys.enumerate() {
        if let Some(first) = seen.insert(k.clone(), i) {
            let first_at = located
                .location(&format!("/{key}/{first}"))
                .map(|l| format!(" (first at line {})", l.line))
                .unwrap_or_default();
            return Err(at(
                &format!("/{key}/{i}/name"),
                format!("{k} is listed twice{first_at}"),
            ));
        }
    }
    Ok(())
}

/// `placements.2.bundle` → `placements[2].bundle`.
fn dotted_indices(field: &str) -> String {
    let mut out = String::new();
    for part in field.split('.') {
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> BTreeSet<String> {
        BTreeSet::from(["app".to_string()])
    }

    fn error_of(text: &str) -> String {
        format!(
            "{:#}",
            parse(text, "c.yaml", "fleet-default", &names()).unwrap_err()
        )
    }

    #[test]
    fn reads_clusters_groups_time_and_placements() {
        let file = parse(
            "now: 100\nclusters:\n- {name: a, namespace: fleet-default, labels: {env: prod}}\n\
             - {name: b, namespace: other}\n\
             groups:\n- {name: prod, namespace: fleet-default, selector: {matchLabels: {env: prod}}}\n\
             placements:\n- {bundle: app, cluster: a}\n- {bundle: app, cluster: b, namespace: other, state: Scheduled}\n",
            "c.yaml",
            "fleet-default",
            &names(),
        )
        .unwrap();
        assert_eq!(file.now, 100);
        assert_eq!(file.index.len(), 2);
        assert_eq!(
            file.namespaces.into_iter().collect::<Vec<_>>(),
            ["fleet-default", "other"]
        );
        let placed = &file.placements["app"];
        assert_eq!(placed[0].cluster, ClusterKey::new("fleet-default", "a"));
        assert_eq!(placed[0].state, PlacementState::Bound);
        assert_eq!(placed[1].state, PlacementState::Scheduled);
        let a = file
            .index
            .get(&ClusterKey::new("fleet-default", "a"))
            .unwrap();
        assert_eq!(a.groups[0].name, "prod");
    }

    #[test]
    fn placements_of_other_bundles_are_noted_and_left_out() {
        let text = "clusters:\n- {name: a, namespace: fleet-default}\nplacements:\n- {bundle: nope, cluster: a}\n";
        let file = parse(text, "c.yaml", "fleet-default", &names()).unwrap();
        assert!(file.placements.is_empty());
        assert_eq!(
            file.notes,
            [
                "c.yaml:4:4: placements[0].bundle: no bundle \"nope\" was read (bundles: app); placement ignored"
            ]
        );
    }

    #[test]
    fn an_empty_file_is_an_empty_fleet() {
        let file = parse("", "c.yaml", "ns", &names()).unwrap();
        assert!(file.index.is_empty());
        assert_eq!(file.now, 0);
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let cases = [
            (
                "clusters:\n- name: a\n  namespace: x\n  lables: {}\n",
                "c.yaml:4:3: clusters[0].lables: unknown field `lables`, expected one of",
            ),
            (
                "clusters:\n- {name: a, namespace: x}\n- {name: a, namespace: x}\n",
                "c.yaml:3:4: clusters[1].name: x/a is listed twice (first at line 2)",
            ),
            (
                "clusters:\n- {name: a, namespace: fleet-default}\nplacements:\n- {bundle: app, cluster: b}\n",
                "c.yaml:4:17: placements[0].cluster: no cluster fleet-default/b in the clusters list",
            ),
        ];
        for (text, want) in cases {
            let got = error_of(text);
            assert!(got.starts_with(want), "{got}\nwanted {want}");
        }
    }
}
