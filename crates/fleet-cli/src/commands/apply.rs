//! `fleet apply -o - NAME PATH...`: reads bundle directories into Bundle resources and prints them as YAML,
//! offline (no kubeconfig, no cluster). Writing Bundles to a cluster comes with the controller.

mod git_head;

use std::io::Write;

use anyhow::{Context, bail};
use fleet_api::CorrectDrift;
use fleet_bundle::{ReadOptions, TargetsSpec};
use serde_json::Value;

use self::git_head::head_commit;
use super::bundle_input::{parse_labels, read_image_scans, read_paths};
use super::yaml_out;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Name of the GitRepo (prefix of every bundle name).
    pub name: String,
    /// Directories or globs to read (default `.`).
    pub paths: Vec<String>,
    /// Write the Bundles to this file, or `-` for stdout.
    #[arg(short = 'o', long)]
    pub output: Option<String>,
    /// Namespace of the Bundles.
    #[arg(short = 'n', long, env = "NAMESPACE", default_value = "fleet-local")]
    pub namespace: String,
    /// Label added to every Bundle (`key=value`, repeatable).
    #[arg(short = 'l', long = "label")]
    pub labels: Vec<String>,
    /// YAML file with the GitRepo's targets and target restrictions.
    #[arg(long)]
    pub targets_file: Option<String>,
    /// Store every resource gzip-compressed and base64-encoded.
    #[arg(short = 'c', long)]
    pub compress: bool,
    /// Service account the agent impersonates.
    #[arg(short = 'a', long)]
    pub service_account: Option<String>,
    /// Force every resource into this namespace.
    #[arg(long)]
    pub target_namespace: Option<String>,
    /// Create the Bundles paused.
    #[arg(long)]
    pub paused: bool,
    /// Keep deployed resources when a Bundle is deleted.
    #[arg(long)]
    pub keep_resources: bool,
    /// Delete the target namespace when a Bundle is deleted.
    #[arg(long)]
    pub delete_namespace: bool,
    /// Correct drift of deployed resources.
    #[arg(long)]
    pub correct_drift: bool,
    /// Correct drift with force (delete and recreate when needed).
    #[arg(long)]
    pub correct_drift_force: bool,
    /// Keep the history of failed drift corrections.
    #[arg(long)]
    pub correct_drift_keep_fail_history: bool,
    /// The commit, recorded as the `fleet.cattle.io/commit` label (default: the working directory's git HEAD).
    #[arg(long, env = "COMMIT")]
    pub commit: Option<String>,
    /// Sync generation (`forceSyncGeneration`).
    #[arg(long, default_value_t = 0)]
    pub sync_generation: i64,
    /// Treat PATHs as `dir[<sep>options-file]` bundle definitions, without walking.
    #[arg(long)]
    pub driven_scan: bool,
    /// Separator of `--driven-scan` entries.
    #[arg(long, default_value = ":")]
    pub driven_scan_sep: String,
    /// Read fleet.yaml `imageScans` and print their ImageScans after the Bundles; without it, a bundle with image
    /// scans is an error, as in Fleet.
    #[arg(long)]
    pub imagescan_enabled: bool,
    #[command(flatten)]
    pub charts: super::chart_source::ChartArgs,
}

fn read_options(args: &Args) -> anyhow::Result<ReadOptions> {
    let targets = match &args.targets_file {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading targets file {file}"))?;
            Some(TargetsSpec::parse(&text, file)?)
        }
        None => None,
    };
    Ok(ReadOptions {
        repo_name: args.name.clone(),
        namespace: args.namespace.clone(),
        labels: parse_labels(&args.labels)?,
        commit: match args.commit.clone().filter(|c| !c.is_empty()) {
            Some(commit) => Some(commit),
            None => std::env::current_dir()
                .ok()
                .and_then(|dir| head_commit(&dir)),
        },
        service_account: args.service_account.clone().unwrap_or_default(),
        target_namespace: args.target_namespace.clone().unwrap_or_default(),
        paused: args.paused,
        keep_resources: args.keep_resources,
        delete_namespace: args.delete_namespace,
        correct_drift: Some(CorrectDrift {
            enabled: args.correct_drift,
            force: args.correct_drift_force,
            keep_fail_history: args.correct_drift_keep_fail_history,
        }),
        sync_generation: args.sync_generation,
        compress: args.compress,
        targets,
        driven_scan_separator: args.driven_scan.then(|| args.driven_scan_sep.clone()),
    })
}

/// An object as `fleet apply -o` exports it: no status, no server-side metadata.
fn exported(object: &impl serde::Serialize) -> anyhow::Result<Value> {
    let mut value = serde_json::to_value(object)?;
    if let Some(map) = value.as_object_mut() {
        map.remove("status");
    }
    Ok(value)
}

/// The ImageScans of the bundles as Fleet's apply writes them (the Bundles' namespace and labels, the GitRepo's
/// name as `gitrepoName`); an error when there are any and `--imagescan-enabled` is not given.
fn image_scans(args: &Args, options: &ReadOptions) -> anyhow::Result<Vec<fleet_api::ImageScan>> {
    let mut scans = read_image_scans(&args.paths, options)?;
    if !scans.is_empty() && !args.imagescan_enabled {
        bail!(
            "imagescan is disabled; remove imageScans from fleet.yaml ({} found), or pass --imagescan-enabled",
            scans.len()
        );
    }
    for scan in &mut scans {
        scan.metadata.namespace = Some(options.namespace.clone());
        scan.metadata.labels = (!options.labels.is_empty()).then(|| options.labels.clone());
        scan.spec.gitrepo_name = options.repo_name.clone();
    }
    Ok(scans)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(output) = args.output.clone() else {
        bail!(
            "writing Bundles to a cluster is not supported yet; use `-o -` (or `-o FILE`) to print them"
        );
    };
    let options = read_options(&args)?;
    let bundles = read_paths(&args.paths, &options, &args.charts)?;
    let scans = image_scans(&args, &options)?;
    let values = bundles
        .iter()
        .map(exported)
        .chain(scans.iter().map(exported))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let text = yaml_out::documents(&values);
    if output == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        std::fs::write(&output, text).with_context(|| format!("writing {output}"))?;
    }
    Ok(())
}
