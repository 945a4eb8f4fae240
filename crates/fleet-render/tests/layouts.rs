//! Snapshot tests over the bundle layouts in `testdata/bundles/`: what is discovered, how bundles are named,
//! which resources and targets they get, their manifest IDs, and what `fleet test` renders for a few clusters
//! (FirstMatch and AllMatches customizations, overlays, doNotDeploy) — or the exact error.
//!
//! Layout conventions: `.driven-scan` lists driven-scan entries (one per line); `.targets.yaml` is the GitRepo
//! targets file (otherwise the default GitRepo target is used, as for a GitRepo without targets).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use fleet_bundle::tree::LocalTree;
use fleet_bundle::{ReadOptions, TargetsSpec, hash, read_bundles};
use fleet_render::test_cluster as target;

fn layouts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/bundles")
}

fn clusters() -> Vec<(&'static str, target::TestCluster)> {
    let cluster = |labels: &[(&str, &str)], group_labels: &[(&str, &str)]| target::TestCluster {
        name: "c1".to_string(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        group: "default".to_string(),
        group_labels: group_labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    vec![
        ("no labels", cluster(&[], &[])),
        ("env=dev", cluster(&[("env", "dev")], &[])),
        ("env=prod", cluster(&[("env", "prod")], &[])),
        ("env=staging", cluster(&[("env", "staging")], &[])),
        (
            "env=dev, group tier=edge",
            cluster(&[("env", "dev")], &[("tier", "edge")]),
        ),
    ]
}

fn describe(layout: &Path) -> String {
    let tree = LocalTree::new(layout);
    let name = layout.file_name().unwrap().to_string_lossy().to_string();
    let mut options = ReadOptions {
        repo_name: name,
        commit: Some("0123456789abcdef".to_string()),
        targets: Some(fleet_bundle::TargetsSpec::gitrepo_default()),
        ..ReadOptions::default()
    };
    if let Ok(text) = std::fs::read_to_string(layout.join(".targets.yaml")) {
        options.targets = Some(TargetsSpec::parse(&text, ".targets.yaml").unwrap());
    }
    let mut paths = Vec::new();
    if let Ok(text) = std::fs::read_to_string(layout.join(".driven-scan")) {
        options.driven_scan_separator = Some(":".to_string());
        paths = text.lines().map(str::to_string).collect();
    }
    let bundles = match read_bundles(&tree, &paths, &options) {
        Ok(bundles) => bundles,
        Err(err) => return format!("error: {err}\n"),
    };
    let mut out = String::new();
    for bundle in &bundles {
        let spec = &bundle.spec;
        writeln!(
            out,
            "bundle: {}",
            bundle.metadata.name.as_deref().unwrap_or_default()
        )
        .unwrap();
        let labels: BTreeMap<_, _> = bundle.metadata.labels.clone().unwrap_or_default();
        writeln!(out, "  labels: {labels:?}").unwrap();
        writeln!(out, "  manifestID: {}", hash::manifest_id(&spec.resources)).unwrap();
        writeln!(
            out,
            "  options: {}",
            serde_json::to_string(&spec.options).unwrap()
        )
        .unwrap();
        for resource in &spec.resources {
            let encoding = if resource.encoding.is_empty() {
                ""
            } else {
                " (base64+gz)"
            };
            writeln!(out, "  resource: {}{encoding}", resource.name).unwrap();
        }
        for target in &spec.targets {
            writeln!(out, "  target: {}", serde_json::to_string(target).unwrap()).unwrap();
        }
        for restriction in &spec.target_restrictions {
            writeln!(
                out,
                "  restriction: {}",
                serde_json::to_string(restriction).unwrap()
            )
            .unwrap();
        }
        for (label, cluster) in clusters() {
            write!(out, "  cluster {label}: ").unwrap();
            match target::match_cluster(bundle, &cluster, None) {
                Err(err) => writeln!(out, "{err}").unwrap(),
                Ok(None) => writeln!(out, "no match").unwrap(),
                Ok(Some(matched)) => {
                    writeln!(
                        out,
                        "matched {} (deploymentID {})",
                        matched.display_name(),
                        hash::deployment_id(&hash::manifest_id(&spec.resources), &matched.options)
                    )
                    .unwrap();
                    match fleet_render::render_bundle(
                        &spec.resources,
                        &matched.options,
                        bundle.metadata.name.as_deref().unwrap_or_default(),
                    ) {
                        Ok(objects) => {
                            for object in objects {
                                writeln!(out, "    {}", serde_json::to_string(&object).unwrap())
                                    .unwrap();
                            }
                        }
                        Err(err) => writeln!(out, "    render error: {err}").unwrap(),
                    }
                }
            }
        }
    }
    out
}

#[test]
fn bundle_layouts() {
    let mut layouts: Vec<PathBuf> = std::fs::read_dir(layouts_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    layouts.sort();
    assert!(
        layouts.len() >= 15,
        "expected at least 15 layouts, found {}",
        layouts.len()
    );
    for layout in layouts {
        let name = layout.file_name().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(name, describe(&layout));
    }
}

#[test]
fn reading_is_deterministic() {
    let layout = layouts_dir().join("nested");
    assert_eq!(describe(&layout), describe(&layout));
}
