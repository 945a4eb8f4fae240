//! `fleet test PATH`: reads one bundle directory, matches it against a cluster described by flags, prints
//! `# Matched: <target>` (and a `# Warning: …` line per render warning) on stderr and the rendered objects (with that target's customization) on stdout.

use std::io::Write;

use anyhow::{Context, bail};
use fleet_bundle::ReadOptions;
use fleet_bundle::discover::BundleLocation;
use fleet_bundle::read::read_bundle_with_charts;
use fleet_bundle::render::{self, target};
use fleet_bundle::tree::TreePath;

use super::bundle_input::{locate, parse_labels};
use super::chart_source::ChartArgs;
use super::yaml_out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bundle directory.
    #[arg(default_value = ".")]
    pub path: String,
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
    let (tree, inside) = locate(&args.path)?;
    let dir = TreePath::new(&inside).context("bundle path leaves the working directory")?;
    let options = ReadOptions {
        repo_name: "test".to_string(),
        targets: Some(target::gitrepo_default_targets()),
        ..ReadOptions::default()
    };
    let location = BundleLocation {
        dir,
        options_file: None,
    };
    let source = args.charts.source();
    let session = source
        .as_ref()
        .map(|source| args.charts.credentials().map(|creds| source.session(creds)))
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
        bail!("{}: no resources found to deploy", args.path);
    };
    // Fleet names the bundle under test `test` unless fleet.yaml names it.
    if bundle.metadata.name.as_deref()
        == Some(fleet_bundle::read::bundle_id("test", &location).as_str())
    {
        bundle.metadata.name = Some("test".to_string());
    }
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
    let rendered = render::render_bundle_reporting(
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
