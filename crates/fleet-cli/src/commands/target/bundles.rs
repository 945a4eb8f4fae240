//! The bundles `fleet target` explains: read from directories as `fleet apply` reads them (with the GitRepo's
//! targets from `--targets-file`, or Fleet's default target), and from files of Bundle resources (`-b`, e.g. the
//! output of `fleet apply -o -`). Returned sorted by name; a name given twice is an error.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use fleet_api::Bundle;
use fleet_bundle::{ReadOptions, TargetsSpec};

use super::Args;
use crate::commands::bundle_input::{parse_labels, read_paths};

/// Every bundle the arguments name, sorted by name.
pub fn read(args: &Args) -> anyhow::Result<Vec<Bundle>> {
    let mut bundles = Vec::new();
    for file in &args.bundle_files {
        bundles.extend(from_file(file, &args.namespace)?);
    }
    if !args.paths.is_empty() || args.bundle_files.is_empty() {
        bundles.extend(from_dirs(args)?);
    }
    let mut by_name = BTreeMap::new();
    for bundle in bundles {
        let name = bundle.metadata.name.clone().unwrap_or_default();
        if by_name.insert(name.clone(), bundle).is_some() {
            bail!("bundle {name} is given twice");
        }
    }
    Ok(by_name.into_values().collect())
}

fn from_dirs(args: &Args) -> anyhow::Result<Vec<Bundle>> {
    let targets = match &args.targets_file {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading targets file {file}"))?;
            TargetsSpec::parse(&text, file)?
        }
        None => fleet_bundle::TargetsSpec::gitrepo_default(),
    };
    let options = ReadOptions {
        repo_name: args.name.clone(),
        namespace: args.namespace.clone(),
        labels: parse_labels(&args.labels)?,
        targets: Some(targets),
        ..ReadOptions::default()
    };
    read_paths(
        &args.paths,
        &options,
        &super::super::chart_source::ChartArgs::default(),
    )
}

/// The Bundles of a `---` separated YAML file; a Bundle without a namespace is put in `namespace`.
pub(crate) fn from_file(file: &str, namespace: &str) -> anyhow::Result<Vec<Bundle>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading bundle file {file}"))?;
    let documents = fleet_yaml::parse::located_documents(&text, file)?;
    if documents.is_empty() {
        bail!("{file}: no Bundle found");
    }
    documents
        .iter()
        .map(|doc| {
            let kind = doc
                .value()
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or("");
            if kind != "Bundle" {
                let at = doc
                    .location("")
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                bail!("{file}{at}: kind {kind:?} is not a Bundle");
            }
            let mut bundle: Bundle = doc.deserialize()?;
            if bundle.metadata.name.as_deref().is_none_or(str::is_empty) {
                let at = doc
                    .location("/metadata")
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                bail!("{file}{at}: metadata.name: a Bundle needs a name");
            }
            bundle
                .metadata
                .namespace
                .get_or_insert_with(|| namespace.to_string());
            Ok(bundle)
        })
        .collect()
}
