//! `fleet helm template [NAME] CHART`: renders a local chart like `helm template`, without Helm. This module does
//! the I/O (reading the chart directory or `.tgz`, values files and `--set-file` files); `fleet_helm` renders.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use fleet_helm::chart::load::read_at_load;
use fleet_helm::chart::{
    FileData, FileMap, RenderOptions, Rendered, SetKind, apply_set, merge_maps, render_chart,
};
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
    #[command(flatten)]
    remote: RemoteArgs,
}

/// Where a chart that is not a local path comes from (`helm template`'s flags of the same names).
#[derive(Debug, Default, clap::Args)]
struct RemoteArgs {
    /// Chart repository URL; CHART is then the chart's name in it.
    #[arg(long)]
    repo: Option<String>,
    /// Version constraint of a repository or OCI chart (default: the latest stable version).
    #[arg(long, default_value = "")]
    version: String,
    /// Basic auth username for the repository or registry.
    #[arg(long)]
    username: Option<String>,
    /// Basic auth password for the repository or registry.
    #[arg(long)]
    password: Option<String>,
    /// PEM CA certificates to trust for the repository or registry.
    #[arg(long = "ca-file")]
    ca_file: Option<PathBuf>,
    /// Skip TLS verification of the repository or registry.
    #[arg(long = "insecure-skip-tls-verify")]
    insecure_skip_tls_verify: bool,
    /// Plain HTTP to an OCI registry.
    #[arg(long = "plain-http")]
    plain_http: bool,
}

/// Downloads a remote chart (`--repo`, `oci://`, or a `.tgz` URL) into a file map rooted at the chart.
fn download_chart(chart: &str, remote: &RemoteArgs) -> anyhow::Result<FileMap> {
    use fleet_bundle::remote::{ChartFetcher, ChartRef};
    let reference = match &remote.repo {
        Some(repo) if !repo.starts_with("oci://") => ChartRef::Repo {
            repo: repo.clone(),
            chart: chart.to_string(),
            version: remote.version.clone(),
        },
        Some(repo) => ChartRef::Oci {
            reference: format!("{}/{chart}", repo.trim_end_matches('/')),
            version: remote.version.clone(),
        },
        None if chart.starts_with("oci://") => ChartRef::Oci {
            reference: chart.to_string(),
            version: remote.version.clone(),
        },
        None => ChartRef::Url {
            url: chart.to_string(),
        },
    };
    let auth = fleet_chart_source::Auth {
        username: remote.username.clone().unwrap_or_default(),
        password: remote.password.clone().unwrap_or_default(),
        ca_bundle: match &remote.ca_file {
            Some(file) => {
                std::fs::read(file).with_context(|| format!("reading {}", file.display()))?
            }
            None => Vec::new(),
        },
        insecure_skip_verify: remote.insecure_skip_tls_verify,
        basic_http: remote.plain_http,
    };
    let source = fleet_chart_source::ChartSource::new();
    let session = source.session(Default::default());
    let files = session
        .with_auth(auth)
        .fetch(&reference)
        .map_err(|err| anyhow::anyhow!("chart {}: {err}", reference.describe()))?;
    Ok(files
        .into_iter()
        .filter_map(|(name, bytes)| {
            let (_, rel) = name.split_once('/')?;
            Some((rel.to_string(), bytes.into()))
        })
        .collect())
}

pub fn run(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Template(args) => {
            // The process ends right after this command, so the template trees (hundreds of thousands of nodes for
            // a chart with vendored libraries) are never freed either.
            fleet_helm::template::set_drop_policy(fleet_helm::template::DropPolicy::Leak);
            let out = render(&args)?;
            // Written straight from the manifests through a locked stdout, in a few vectored writes.
            let mut stdout = std::io::stdout().lock();
            out.write_to(&mut stdout)?;
            stdout.flush()?;
            // The process ends right after this command: freeing the chart's files and manifests, thousands of
            // allocations, would only delay the exit.
            std::mem::forget(out);
            Ok(())
        }
    }
}

/// Lists the files under `dir` as (`/`-separated path relative to the chart root, path), following symlinked
/// directories as helm does. The directory entries' types need no `stat`, except for symlinks.
fn list_files(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = entry.path();
        let rel = format!("{prefix}{}", entry.file_name().to_string_lossy());
        let file_type = entry
            .file_type()
            .with_context(|| format!("reading {}", path.display()))?;
        if file_type.is_dir() || (file_type.is_symlink() && path.is_dir()) {
            list_files(&path, &format!("{rel}/"), out)?;
        } else {
            out.push((rel, path));
        }
    }
    Ok(())
}

/// Reads a chart directory, on this thread (a second reading thread measured slower: see
/// `fleet_helm::template::TemplateSet::add_files`). Files the loader needs are read now; the others (READMEs,
/// changelogs, CRDs, anything only `.Files` holds: see `fleet_helm::chart::load::read_at_load`) when a template or
/// `--include-crds` first asks for them, so kube-prometheus-stack's 4.5 MB of CRDs are not read to be ignored.
fn read_tree(root: &Path) -> anyhow::Result<FileMap> {
    let mut files = Vec::new();
    list_files(root, "", &mut files)?;
    files
        .into_iter()
        .map(|(rel, path)| {
            let data = if read_at_load(&rel) {
                std::fs::read(&path)
                    .with_context(|| format!("reading {}", path.display()))?
                    .into()
            } else {
                FileData::deferred(path.display().to_string(), move || std::fs::read(&path))
            };
            Ok((rel, data))
        })
        .collect()
}

/// Reads a chart directory, or a `.tgz` (as a one-entry map the loader unpacks like a subchart archive); a chart
/// in a repository (`--repo`), an OCI registry or at a URL is downloaded.
fn read_chart(chart: &str, remote: &RemoteArgs) -> anyhow::Result<FileMap> {
    let path = Path::new(chart);
    let url = ["oci://", "http://", "https://"]
        .iter()
        .any(|p| chart.starts_with(p));
    if url || remote.repo.is_some() {
        return download_chart(chart, remote);
    }
    let repo_ref = !path.exists() && chart.contains('/') && !chart.starts_with(['.', '/']);
    if repo_ref {
        bail!(
            "chart {chart:?} not found: a chart in a repository needs --repo URL (helm's repository aliases are not read)"
        );
    }
    if path.is_dir() {
        read_tree(path)
    } else if path.is_file() {
        let data = std::fs::read(path).with_context(|| format!("reading {chart}"))?;
        Ok(fleet_helm::chart::load::unpack_archive(chart, &data)?)
    } else {
        bail!("chart {chart:?} not found");
    }
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

/// What one `fleet helm template` produced: the manifests (and, with `--show-only`, the text to print instead of
/// them).
struct Output {
    rendered: Rendered,
    show_only: Option<String>,
}

impl Output {
    /// Writes what `helm template` would print.
    fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        match &self.show_only {
            Some(text) => w.write_all(text.as_bytes()),
            None => self.rendered.write_helm_output(w),
        }
    }
}

/// Renders per the arguments.
fn render(args: &TemplateArgs) -> anyhow::Result<Output> {
    let (name, chart) = match args.args.as_slice() {
        [chart] => ("release-name".to_string(), chart.clone()),
        [name, chart] => (name.clone(), chart.clone()),
        _ => bail!("expected [NAME] CHART"),
    };
    let files = read_chart(&chart, &args.remote)?;
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
    let rendered = render_chart(files, &user, &opts)?;
    let show_only = if args.show_only.is_empty() {
        None
    } else {
        Some(show_only(&rendered, &args.show_only)?)
    };
    Ok(Output {
        rendered,
        show_only,
    })
}

/// `--show-only`: the manifests rendered from templates matching the patterns, in the patterns' order.
fn show_only(rendered: &Rendered, patterns: &[String]) -> anyhow::Result<String> {
    let mut out = String::new();
    for pattern in patterns {
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
        render(&t).map(|out| text(&out))
    }

    fn text(out: &Output) -> String {
        let mut written = Vec::new();
        out.write_to(&mut written).unwrap();
        String::from_utf8(written).unwrap()
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
    fn charts_are_read_whole_with_their_nested_folders() {
        let dir = tempfile::tempdir().unwrap();
        let mut expected = std::collections::BTreeMap::new();
        for i in 0..20 {
            let rel = format!("templates/sub{}/f{i}.yaml", i % 3);
            let path = dir.path().join(&rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("n: {i}\n")).unwrap();
            expected.insert(rel, format!("n: {i}\n").into_bytes());
        }
        let read: std::collections::BTreeMap<String, Vec<u8>> = read_tree(dir.path())
            .unwrap()
            .into_iter()
            .map(|(rel, data)| (rel, data.bytes().unwrap().to_vec()))
            .collect();
        assert_eq!(read, expected);
        let err = read_tree(&dir.path().join("missing")).unwrap_err();
        assert!(format!("{err:#}").contains("missing"), "{err:#}");
    }

    /// Files only `.Files` holds are read when a template asks for them: a README that disappears after the chart
    /// was listed costs nothing, a file a template reads is there, and one that cannot be read is named.
    #[test]
    fn files_only_dot_files_holds_are_read_when_a_template_asks_for_them() {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in [
            ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n"),
            (
                "templates/cm.yaml",
                "kind: ConfigMap\ndata:\n  a: {{ .Files.Get \"files/a.txt\" | quote }}\n",
            ),
            ("files/a.txt", "from a file"),
            ("README.md", "# app"),
        ] {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        let render = |files: FileMap| {
            let opts = RenderOptions {
                release_name: "rel".into(),
                ..RenderOptions::default()
            };
            render_chart(files, &map_value(Default::default()), &opts).map(|r| r.to_helm_output())
        };
        let files = read_tree(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("README.md")).unwrap();
        let out = render(files).unwrap();
        assert!(out.contains("  a: \"from a file\"\n"), "{out}");

        let files = read_tree(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("files/a.txt")).unwrap();
        let err = render(files).unwrap_err().to_string();
        let missing = dir.path().join("files/a.txt");
        assert!(
            err.contains("app/templates/cm.yaml")
                && err.contains(&format!("reading {}", missing.display())),
            "{err}"
        );
    }

    #[test]
    fn unreachable_and_unnamed_remote_charts_fail_clearly() {
        // Nothing listens on port 1: the download fails and says which chart and where.
        let argv = [
            "fleet",
            "template",
            "rel",
            "oci://127.0.0.1:1/charts/app",
            "--plain-http",
        ];
        let Command::Template(t) = Cli::try_parse_from(argv).unwrap().cmd;
        let err = render(&t).map(|out| text(&out)).unwrap_err().to_string();
        assert!(
            err.contains("oci://127.0.0.1:1/charts/app")
                && err.contains("127.0.0.1:1/v2/charts/app"),
            "{err}"
        );
        let argv = ["fleet", "template", "rel", "stable/app"];
        let Command::Template(t) = Cli::try_parse_from(argv).unwrap().cmd;
        let err = render(&t).map(|out| text(&out)).unwrap_err().to_string();
        assert!(err.contains("needs --repo URL"), "{err}");
    }
}
