//! `fleet target --clusters FILE [PATH...]`: offline, reads bundle directories (or a repository path holding
//! several) and a clusters file, runs every bundle through Fleet targeting and the placement scheduler, and prints
//! which clusters each bundle lands on and why the others do not. No kubeconfig, no cluster, no clock: the time
//! comes from the file or `--now`, so the output is the same on every run.

pub(crate) mod bundles;
mod clusters_file;
mod file_cluster;
mod output;
mod report;

use std::collections::BTreeSet;
use std::io::Write;

pub const LONG_ABOUT: &str = "\
Show, offline, which clusters each bundle lands on and why the others do not.

Reads the bundle directories under PATHS (as `fleet apply` does; a repository path with several \
bundles works) and a clusters file, then runs every bundle through Fleet targeting (targets, \
targetCustomizations, doNotDeploy, the GitRepo's target restrictions) and, when the bundle has a \
`placement` block, through the placement scheduler (PickAll, PickFixed, PickN, affinity, topology \
spread, taints and tolerations, eligibility). For each bundle, sorted by name, it prints the selected \
clusters (matched target, customizations, placement score) and every other cluster with the reason, \
then the Scheduled condition. The output depends only on the inputs: no clock, no cluster.

Without --targets-file, bundles get a GitRepo's default target (the cluster group `default`, which \
the clusters file then needs to define), as in Fleet. A targets file lists both `targets` and \
`targetRestrictions`, as Fleet hands a GitRepo's targets to the bundle reader.

CLUSTERS FILE (YAML; every key optional, unknown keys are errors):

  now: 1700000000                # Unix seconds to schedule at (default 0; --now overrides)
  clusters:
  - name: eu-1                   # required
    namespace: fleet-default     # required: the Fleet workspace
    labels: {env: prod, region: eu}
    annotations: {}
    templateValues: {}           # .ClusterValues for ${ } templates
    paused: false
    taints:                      # effect NoSchedule or NoSelect
    - {key: maintenance, value: \"true\", effect: NoSchedule, timeAdded: 1700000000}
    properties: {kubernetes-fleet.io/node-count: \"3\"}
    resourceUsage: {capacity: {cpu: \"8\"}, allocatable: {}, available: {}}
    scores:                      # custom scores, readable by property sorters
    - {name: latency, value: 20, validUntil: 1800000000}
    health:                      # omit when unknown: the cluster counts as eligible
      joined: true
      leaving: false
      lastHeartbeat: 1699999990
      healthy: {status: true, lastTransition: 1690000000}
  groups:
  - name: prod
    namespace: fleet-default
    labels: {tier: gold}         # matched by clusterGroupSelector
    selector: {matchLabels: {env: prod}}   # absent: no members; {}: every cluster
  placements:                    # placements that exist already
  - bundle: repo-app             # the bundle's name (unknown ones: a note)
    cluster: eu-1
    namespace: fleet-default     # default: the bundles' namespace (-n)
    state: Bound                 # Scheduled, Bound (default) or Unscheduled
    obsolete: false              # made under an older policy
    score: {topologySpread: 0, affinity: 0, existingPlacement: 0}
  namespaces:                    # namespace labels, for namespace mappings (unlisted: no labels)
  - {name: team-a, labels: {team: a}}
  namespaceMappings:             # BundleNamespaceMappings: more namespaces a bundle may target
  - name: team-a
    namespace: fleet-default     # the bundles' namespace
    bundleSelector: {matchLabels: {team: a}}
    namespaceSelector: {matchLabels: {team: a}}

Errors in the file name the file, line, column and field.";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Bundle directories or globs to read (default `.`, unless bundle files are given).
    pub paths: Vec<String>,
    /// A file of Bundle resources (YAML, `---` separated, e.g. from `fleet apply -o -`), instead of or besides
    /// directories (repeatable).
    #[arg(short = 'b', long = "bundle-file", value_name = "FILE")]
    pub bundle_files: Vec<String>,
    /// The clusters file (format: see `fleet target --help`).
    #[arg(short = 'c', long, value_name = "FILE")]
    pub clusters: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: output::Format,
    /// Namespace of the Bundles read from directories (the Fleet workspace whose clusters they target).
    #[arg(short = 'n', long, default_value = "fleet-default")]
    pub namespace: String,
    /// Name of the GitRepo (prefix of every bundle name).
    #[arg(long, default_value = "test")]
    pub name: String,
    /// YAML file with the GitRepo's targets and target restrictions.
    #[arg(long)]
    pub targets_file: Option<String>,
    /// Label added to every Bundle (`key=value`, repeatable).
    #[arg(short = 'l', long = "label")]
    pub labels: Vec<String>,
    /// Schedule at this time (Unix seconds) instead of the file's `now`.
    #[arg(long)]
    pub now: Option<i64>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let bundles = bundles::read(&args)?;
    let names: BTreeSet<String> = bundles
        .iter()
        .filter_map(|b| b.metadata.name.clone())
        .collect();
    let mut fleet = clusters_file::read(&args.clusters, &args.namespace, &names)?;
    for note in &fleet.notes {
        eprintln!("note: {note}");
    }
    if let Some(now) = args.now {
        fleet.now = now;
    }
    let reports = bundles
        .iter()
        .map(|bundle| report::report(bundle, &fleet))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let text = output::render(args.output, fleet.now, &reports);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clusters file documented in `--help` is a valid clusters file.
    #[test]
    fn the_documented_clusters_file_reads() {
        let example: String = LONG_ABOUT
            .lines()
            .skip_while(|l| !l.starts_with("CLUSTERS FILE"))
            .skip(1)
            .take_while(|l| !l.starts_with("Errors"))
            .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
            .collect();
        let names = BTreeSet::from(["repo-app".to_string()]);
        let file = clusters_file::parse(&example, "help", "fleet-default", &names).unwrap();
        assert_eq!(file.now, 1_700_000_000);
        assert_eq!(file.index.len(), 1);
        assert_eq!(file.placements["repo-app"].len(), 1);
    }
}
