//! `fleet helm template [NAME] CHART`: renders a local chart like `helm template`, without Helm. This module does
//! the I/O (reading the chart directory or `.tgz`, values files and `--set-file` files); `fleet_helm` renders.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use fleet_helm::chart::{FileMap, RenderOptions, SetKind, apply_set, merge_maps, render_chart};
use fleet_helm::value::{Value, map_value};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Render a chart's templates like `helm template`.
    Template(TemplateArgs),
}

#[derive(Debug, clap::Args)]
pub struct TemplateArgs {
    /// Release name (default `release-name`), then the chart directory or `.tgz`; a single argument is the chart.
    #[arg(required = true, num_args = 1..=2)]
    args: Vec<String>,
    /// Values files, merged in order.
    #[arg(short = 'f', long = "values")]
    values: Vec<PathBuf>,
    /// `key=value` pairs (typed: booleans, null, integers).
    #[arg(long = "set")]
    set: Vec<String>,
    /// `key=value` pairs, always strings.
    #[arg(long = "set-string")]
    set_string: Vec<String>,
    /// `key=JSON` pairs.
    #[arg(long = "set-json")]
    set_json: Vec<String>,
    /// `key=path` pairs: the file's contents as the value.
    #[arg(long = "set-file")]
    set_file: Vec<String>,
    /// Release namespace.
    #[arg(short = 'n', long = "namespace", default_value = "default")]
    namespace: String,
    /// Kubernetes version for `.Capabilities.KubeVersion`.
    #[arg(long = "kube-version", default_value = "v1.33.0")]
    kube_version: String,
    /// Extra API versions for `.Capabilities.APIVersions` (repeatable or comma-separated).
    #[arg(short = 'a', long = "api-versions", value_delimiter = ',')]
    api_versions: Vec<String>,
    /// Print the chart's `crds/` files first.
    #[arg(long = "include-crds")]
    include_crds: bool,
    /// Only print manifests rendered from these templates (e.g. `templates/deployment.yaml`; globs allowed).
    #[arg(short = 's', long = "show-only")]
    show_only: Vec<String>,
    /// Set `.Release.IsUpgrade` instead of `.Release.IsInstall`.
    #[arg(long = "is-upgrade")]
    is_upgrade: bool,
}

pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Template(args) => {
            let out = template(&args)?;
            print!("{out}");
            Ok(())
        }
    }
}

fn read_tree(root: &Path, dir: &Path, out: &mut FileMap) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            read_tree(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(
                rel,
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?,
            );
        }
    }
    Ok(())
}

/// Reads a chart directory, or a `.tgz` (as a one-entry map the loader unpacks like a subchart archive).
fn read_chart(chart: &str) -> anyhow::Result<FileMap> {
    let path = Path::new(chart);
    let remote = ["oci://", "http://", "https://"]
        .iter()
        .any(|p| chart.starts_with(p));
    let repo_ref = !path.exists() && chart.contains('/') && !chart.starts_with(['.', '/']);
    if remote || repo_ref {
        bail!(
            "chart {chart:?}: charts from repositories and OCI registries need the network and are not supported yet; \
             use a local chart directory or .tgz"
        );
    }
    let mut files = FileMap::new();
    if path.is_dir() {
        read_tree(path, path, &mut files)?;
    } else if path.is_file() {
        let data = std::fs::read(path).with_context(|| format!("reading {chart}"))?;
        files = fleet_helm::chart::load::unpack_archive(chart, &data)?;
    } else {
        bail!("chart {chart:?} not found");
    }
    Ok(files)
}

fn user_values(args: &TemplateArgs) -> anyhow::Result<Value> {
    let mut user = map_value(Default::default());
    for f in &args.values {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("reading values file {}", f.display()))?;
        let v = fleet_helm::yaml::parse_value(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        if !v.is_none() {
            user = merge_maps(&user, &v);
        }
    }
    for s in &args.set_json {
        apply_set(&user, s, SetKind::Json)?;
    }
    for s in &args.set {
        apply_set(&user, s, SetKind::Typed)?;
    }
    for s in &args.set_string {
        apply_set(&user, s, SetKind::String)?;
    }
    for s in &args.set_file {
        let (key, path) = s
            .split_once('=')
            .with_context(|| format!("--set-file {s}: expected key=path"))?;
        let content = std::fs::read_to_string(path)
            .with_context(|| format!("--set-file {s}: reading {path}"))?;
        let escaped = content.replace('\\', "\\\\").replace(',', "\\,");
        apply_set(&user, &format!("{key}={escaped}"), SetKind::String)?;
    }
    Ok(user)
}

/// Renders per the arguments and returns what `helm template` would print.
pub fn template(args: &TemplateArgs) -> anyhow::Result<String> {
    let (name, chart) = match args.args.as_slice() {
        [chart] => ("release-name".to_string(), chart.clone()),
        [name, chart] => (name.clone(), chart.clone()),
        _ => bail!("expected [NAME] CHART"),
    };
    let files = read_chart(&chart)?;
    let user = user_values(args)?;
    let opts = RenderOptions {
        release_name: name,
        namespace: args.namespace.clone(),
        kube_version: args.kube_version.clone(),
        api_versions: args.api_versions.clone(),
        is_upgrade: args.is_upgrade,
        include_crds: args.include_crds,
        chart_origin: Some(chart.clone()),
        ..Default::default()
    };
    let rendered = render_chart(&files, &user, &opts)?;
    if args.show_only.is_empty() {
        return Ok(rendered.to_helm_output());
    }
    let mut out = String::new();
    for pattern in &args.show_only {
        let mut found = false;
        for m in rendered.crds.iter().chain(rendered.manifests.iter()) {
            // Helm matches against the path without the chart name.
            let rel = m
                .source
                .split_once('/')
                .map(|(_, r)| r)
                .unwrap_or(&m.source);
            if fleet_helm::chart::load::glob_match(pattern, rel) {
                out.push_str(&format!("---\n# Source: {}\n{}\n", m.source, m.content));
                found = true;
            }
        }
        if !found {
            bail!("could not find template {pattern} in chart");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: Command,
    }

    fn run_args(args: &[&str]) -> anyhow::Result<String> {
        let chart = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/helm/charts/hello-world"
        );
        let mut argv = vec!["fleet", "template", "rel", chart];
        argv.extend_from_slice(args);
        let Command::Template(t) = Cli::try_parse_from(argv)?.cmd;
        template(&t)
    }

    #[test]
    fn renders_the_committed_golden() {
        let golden = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/helm/goldens/hello-world/default.yaml"
        );
        assert_eq!(
            run_args(&[]).unwrap(),
            std::fs::read_to_string(golden).unwrap()
        );
    }

    #[test]
    fn flags_reach_the_render() {
        let out = run_args(&[
            "--set",
            "replicaCount=3",
            "--set-string",
            "image.tag=1.0",
            "-n",
            "apps",
            "-s",
            "templates/deployment.yaml",
        ])
        .unwrap();
        assert!(
            out.starts_with("---\n# Source: hello-world/templates/deployment.yaml\n"),
            "{out}"
        );
        assert!(out.contains("  replicas: 3\n"), "{out}");
        assert!(out.contains(":1.0\""), "{out}");
        assert!(!out.contains("kind: Service\n"), "{out}");
        let err = run_args(&["-s", "templates/nope.yaml"])
            .unwrap_err()
            .to_string();
        assert_eq!(err, "could not find template templates/nope.yaml in chart");
    }

    #[test]
    fn remote_charts_fail_clearly() {
        let argv = [
            "fleet",
            "template",
            "rel",
            "oci://registry.example/charts/app",
        ];
        let Command::Template(t) = Cli::try_parse_from(argv).unwrap().cmd;
        let err = template(&t).unwrap_err().to_string();
        assert!(err.contains("not supported yet"), "{err}");
    }
}
