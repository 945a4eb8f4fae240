//! `fleet test [PATH]`: reads one bundle directory (or, with `-b`, a Bundle resource file), matches it against a
//! cluster described by flags, prints `# Matched: <target>` (and a `# Warning: …` line per render warning) on stderr
//! and the rendered objects (with that target's customization) on stdout; `-q` prints only the match.
//!
//! Flags as Fleet's `fleet test` (its `internal/cmd/cli/test.go` and `match` package): `-f` names the options file
//! relative to PATH instead of `fleet.yaml`; `-b` reads a Bundle resource (e.g. from `fleet apply -o -`) instead
//! of PATH.

use std::io::Write;

use anyhow::{Context, bail};
use fleet_api::Bundle;
use fleet_bundle::ReadOptions;
use fleet_bundle::discover::BundleLocation;
use fleet_bundle::read::read_bundle_with_charts;
use fleet_bundle::tree::TreePath;
use fleet_render::test_cluster as target;

use super::bundle_input::{locate, parse_labels};
use super::chart_source::ChartArgs;
use super::target::bundles;
use super::yaml_out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle directory.
    #[arg(default_value = ".")]
    pub path: String,
    /// Location of the options file (instead of `fleet.yaml`), relative to the bundle directory.
    #[arg(short = 'f', long = "file", value_name = "FILE", conflicts_with = "bundle_file")]
    pub file: Option<String>,
    /// Read this Bundle resource YAML file (e.g. written by `fleet apply -o`) instead of the bundle directory.
    #[arg(short = 'b', long = "bundle-file", value_name = "FILE")]
    pub bundle_file: Option<String>,
    /// Only print the match, not the rendered resources.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Cluster label (`key=value`, repeatable).
    #[arg(short = 'l', long = "label")]
    pub labels: Vec<String>,
    /// Cluster group the cluster belongs to.
    #[arg(short = 'g', long, default_value = "default")]
    pub group: String,
    /// Cluster group label (`key=value`, repeatable).
    #[arg(short = 'L', long = "group-label")]
    pub group_labels: Vec<String>,
    /// Cluster name.
    #[arg(short = 'N', long, default_value = "")]
    pub name: String,
    /// Use this target (by name) instead of matching.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    #[command(flatten)]
    pub charts: ChartArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let bundle = match &args.bundle_file {
        Some(file) => from_bundle_file(file)?,
        None => from_dir(&args.path, args.file.as_deref(), &args.charts)?,
    };
    let cluster = target::TestCluster {
        name: args.name.clone(),
        labels: parse_labels(&args.labels)?,
        group: args.group.clone(),
        group_labels: parse_labels(&args.group_labels)?,
    };
    let Some(matched) = target::match_cluster(&bundle, &cluster, args.target.as_deref())? else {
        bail!("no target of the bundle matches the cluster");
    };
    eprintln!("# Matched: {}", matched.display_name());
    if args.quiet {
        return Ok(());
    }
    let rendered = fleet_render::render_bundle_reporting(
        &bundle.spec.resources,
        &matched.options,
        bundle.metadata.name.as_deref().unwrap_or_default(),
    )?;
    for warning in &rendered.warnings {
        eprintln!("# Warning: {warning}");
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(yaml_out::documents(&rendered.objects).as_bytes())?;
    Ok(())
}

/// The bundle in directory `path`, read with `options_file` (relative to it) or its `fleet.yaml`; charts it names
/// but does not hold are downloaded as `charts` says (or refused with `--offline`).
fn from_dir(path: &str, options_file: Option<&str>, charts: &ChartArgs) -> anyhow::Result<Bundle> {
    let (tree, inside) = locate(path)?;
    let dir = TreePath::new(&inside).context("bundle path leaves the working directory")?;
    let options = ReadOptions {
        repo_name: "test".to_string(),
        targets: Some(fleet_bundle::TargetsSpec::gitrepo_default()),
        ..ReadOptions::default()
    };
    let location = BundleLocation {
        dir,
        options_file: options_file.map(str::to_string),
    };
    let source = charts.source();
    let session = source
        .as_ref()
        .map(|source| charts.credentials().map(|creds| source.session(creds)))
        .transpose()?;
    let read = match &session {
        Some(session) => read_bundle_with_charts(
            &tree,
            &location,
            &options,
            &session.for_path(location.dir.as_str()),
        ),
        None => fleet_bundle::read::read_bundle(&tree, &location, &options),
    };
    let Some(mut bundle) = read? else {
        bail!("{path}: no resources found to deploy");
    };
    // Fleet names the bundle under test `test` unless the options file names it.
    if bundle.metadata.name.as_deref()
        == Some(fleet_bundle::read::bundle_id("test", &location).as_str())
    {
        bundle.metadata.name = Some("test".to_string());
    }
    Ok(bundle)
}

/// The one Bundle of a Bundle resource file.
fn from_bundle_file(file: &str) -> anyhow::Result<Bundle> {
    let mut found = bundles::from_file(file, "fleet-local")?;
    if found.len() != 1 {
        bail!(
            "{file}: holds {} Bundles; fleet test takes one (fleet target explains several)",
            found.len()
        );
    }
    Ok(found.remove(0))
}
