//! Rendering a loaded chart as `helm template` does: values computed, every chart's templates parsed into one set
//! (Helm's parse order, so parent definitions win), each non-partial template executed with its chart's scope,
//! `<no value>` removed, manifests split, hooks separated, sorted by Helm's install order, and printed with
//! `# Source:` comments.

use std::collections::BTreeMap;

use super::load::{Chart, FileMap, contents, load_chart};
use super::objects::{Files, capabilities, chart_object, release};
use super::values::{coalesce_values, process_dependencies, process_import_values};
use super::{ChartError, RenderOptions};
use crate::funcs::Funcs;
use crate::template::TemplateSet;
use crate::template::exec::Exec;
use crate::value::{Value, as_map, map_value};

/// One rendered document.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The template path as Helm prints it after `# Source:` (e.g. `mychart/templates/deploy.yaml`).
    pub source: String,
    /// The document text, trimmed.
    pub content: String,
    pub kind: String,
    /// Whether the document is a Helm hook (printed after the others).
    pub hook: bool,
}

/// The result of rendering a chart.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// CRDs from `crds/` folders (only with `include_crds`), in Helm's order.
    pub crds: Vec<Manifest>,
    /// Ordinary manifests in install order, then hooks.
    pub manifests: Vec<Manifest>,
    /// The root chart's rendered NOTES.txt.
    pub notes: Option<String>,
}

impl Rendered {
    /// Every document in `helm template`'s order (CRDs, manifests, hooks) as `(source path, YAML text)`.
    pub fn documents(&self) -> impl Iterator<Item = (&str, &str)> {
        let (plain, hooks): (Vec<&Manifest>, Vec<&Manifest>) =
            self.manifests.iter().partition(|m| !m.hook);
        self.crds
            .iter()
            .chain(plain)
            .chain(hooks)
            .map(|m| (m.source.as_str(), m.content.as_str()))
    }

    /// The text `helm template` prints, built in one allocation of its exact size.
    pub fn to_helm_output(&self) -> String {
        let pieces = self.helm_output_pieces();
        let mut out = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
        for piece in pieces {
            out.push_str(piece);
        }
        out
    }

    /// Writes the text `helm template` prints straight from the manifests (a big chart's output is megabytes, which
    /// [`to_helm_output`](Self::to_helm_output) would first copy into a fresh buffer).
    pub fn write_helm_output(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let pieces = self.helm_output_pieces();
        // Writes of up to 1,024 slices each (Linux's `IOV_MAX`).
        for batch in pieces.chunks(1024) {
            let mut slices: Vec<std::io::IoSlice<'_>> = batch
                .iter()
                .filter(|p| !p.is_empty())
                .map(|p| std::io::IoSlice::new(p.as_bytes()))
                .collect();
            let mut rest = &mut slices[..];
            while !rest.is_empty() {
                match w.write_vectored(rest) {
                    Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                    Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// The output as consecutive pieces: CRDs and manifests, each `---\n# Source: …\n<content>\n`, with the whole
    /// trimmed of surrounding whitespace and ended by one newline, then the hooks, as `helm template` prints them.
    fn helm_output_pieces(&self) -> Vec<&str> {
        const SEPARATOR: &str = "---\n# Source: ";
        fn push<'a>(pieces: &mut Vec<&'a str>, m: &'a Manifest) {
            pieces.extend([SEPARATOR, m.source.as_str(), "\n", m.content.as_str(), "\n"]);
        }
        let mut pieces = Vec::with_capacity(5 * (self.crds.len() + self.manifests.len()) + 1);
        let plain = self.manifests.iter().filter(|m| !m.hook);
        for m in self.crds.iter().chain(plain) {
            push(&mut pieces, m);
        }
        trim_pieces(&mut pieces);
        pieces.push("\n");
        for m in self.manifests.iter().filter(|m| m.hook) {
            push(&mut pieces, m);
        }
        pieces
    }
}

/// `str::trim` over the concatenation of `pieces`, done on the pieces: leading and trailing whitespace is cut from
/// the first and last pieces that are not all whitespace, and the all-whitespace pieces outside them are dropped.
fn trim_pieces(pieces: &mut Vec<&str>) {
    while let Some(last) = pieces.last_mut() {
        *last = last.trim_end();
        if !last.is_empty() {
            break;
        }
        pieces.pop();
    }
    let leading = pieces
        .iter()
        .take_while(|p| p.trim_start().is_empty())
        .count();
    pieces.drain(..leading);
    if let Some(first) = pieces.first_mut() {
        *first = first.trim_start();
    }
}

/// Helm's install order of kinds.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// Where `kind` stands in Helm's install order (`pkg/release/util/kind_sorter.go`); `None` for kinds Helm does not
/// list, which it installs after every listed kind.
pub fn install_rank(kind: &str) -> Option<usize> {
    INSTALL_ORDER.iter().position(|known| *known == kind)
}

/// Sorts manifests into Helm's install order: listed kinds by their rank, then the kinds Helm does not list by name,
/// keeping the order of manifests of the same kind. Each kind is ranked once, not at every comparison.
fn sort_by_install_order(manifests: &mut Vec<Manifest>) {
    let unlisted = INSTALL_ORDER.len();
    let mut ranked: Vec<(usize, Manifest)> = manifests
        .drain(..)
        .map(|m| (install_rank(&m.kind).unwrap_or(unlisted), m))
        .collect();
    ranked.sort_by(|(ra, a), (rb, b)| {
        ra.cmp(rb).then_with(|| {
            if *ra == unlisted {
                a.kind.cmp(&b.kind)
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    manifests.extend(ranked.into_iter().map(|(_, m)| m));
}

/// A template to render: its source, the scope object of its chart, and its base path.
struct Renderable {
    src: std::sync::Arc<str>,
    scope: Value,
    base_path: String,
}

/// `recAllTpls`: builds each chart's scope object and collects its templates under their full paths.
fn collect(
    chart: &Chart,
    parent_values: &Value,
    top: &Value,
    full_path: &str,
    is_root: bool,
    out: &mut BTreeMap<String, Renderable>,
) -> Value {
    let values = if is_root {
        parent_values.clone()
    } else {
        as_map(parent_values)
            .and_then(|m| m.get(&chart.name))
            .filter(crate::value::is_map)
            .unwrap_or_else(|| map_value(Default::default()))
    };
    let top_map = as_map(top);
    let subcharts = crate::value::GoMap::default();
    let files = Files(chart.files.clone());
    let mut scope = BTreeMap::new();
    scope.insert("Chart".to_string(), chart_object(chart, is_root));
    scope.insert("Files".to_string(), Value::from_object(files));
    scope.insert(
        "Release".to_string(),
        top_map
            .as_ref()
            .and_then(|m| m.get("Release"))
            .unwrap_or_default(),
    );
    scope.insert(
        "Capabilities".to_string(),
        top_map
            .as_ref()
            .and_then(|m| m.get("Capabilities"))
            .unwrap_or_default(),
    );
    scope.insert("Values".to_string(), values.clone());
    let subcharts = std::sync::Arc::new(subcharts);
    scope.insert(
        "Subcharts".to_string(),
        Value::from_dyn_object(subcharts.clone()),
    );
    let scope = map_value(scope);
    for sub in &chart.subcharts {
        let sub_path = format!("{full_path}/charts/{}", sub.name);
        let sub_scope = collect(sub, &values, top, &sub_path, false, out);
        subcharts.insert(sub.name.clone(), sub_scope);
    }
    for (path, src) in &chart.templates {
        if chart.is_library && !path.rsplit('/').next().unwrap_or("").starts_with('_') {
            continue;
        }
        out.insert(
            format!("{full_path}/{path}"),
            Renderable {
                src: src.clone(),
                scope: scope.clone(),
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    scope
}

/// Helm's `sortTemplates`: deeper paths first, then reverse lexical order.
fn parse_order<'a>(names: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
    let mut keyed: Vec<(usize, &str)> = names
        .map(|name| (name.bytes().filter(|&b| b == b'/').count(), name.as_str()))
        .collect();
    keyed.sort_by(|(da, a), (db, b)| db.cmp(da).then_with(|| b.cmp(a)));
    keyed.into_iter().map(|(_, name)| name).collect()
}

fn collect_crds(chart: &Chart, full_path: &str, out: &mut Vec<Manifest>) -> Result<(), ChartError> {
    for path in &chart.crds {
        let source = format!("{full_path}/{path}");
        let content = match chart.files.get(path) {
            Some(file) => String::from_utf8_lossy(contents(&source, file)?).into_owned(),
            None => String::new(),
        };
        out.push(Manifest {
            source,
            content,
            kind: "CustomResourceDefinition".into(),
            hook: false,
        });
    }
    for sub in &chart.subcharts {
        collect_crds(sub, &format!("{full_path}/charts/{}", sub.name), out)?;
    }
    Ok(())
}

/// Helm's `SplitManifests`: splits at the regex `(?:^|\s*\n)---\s*` with Go's leftmost, non-overlapping matching
/// (so a `---` right after another separator stays in the next document, as Helm prints it), then trims each
/// document and drops empty ones.
pub fn split_manifests(text: &str) -> Vec<String> {
    let text = text.trim_start();
    let b = text.as_bytes();
    let mut docs = Vec::new();
    let mut piece_start = 0;
    let mut search = 0;
    // A separator starts the text or follows a line break after the previous one's end.
    let after_newline = memchr::memmem::Finder::new(b"\n---");
    let mut at_start = text.starts_with("---");
    loop {
        let p = if std::mem::take(&mut at_start) {
            0
        } else if let Some(off) = after_newline.find(&b[search..]) {
            search + off + 1
        } else {
            break;
        };
        let mut start = p;
        if p > 0 {
            start = p - 1;
            while start > search && (b[start - 1] as char).is_ascii_whitespace() {
                start -= 1;
            }
        }
        let mut end = p + 3;
        while end < b.len() && (b[end] as char).is_ascii_whitespace() {
            end += 1;
        }
        docs.push(&text[piece_start..start]);
        piece_start = end;
        search = end;
    }
    docs.push(&text[piece_start..]);
    docs.into_iter()
        .filter(|d| !d.is_empty())
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .collect()
}

struct Head {
    kind: String,
    hook: Option<String>,
}

/// The `kind` of a document whose top level is a plain block mapping, read without a full YAML parse: the
/// unindented `kind:` line with a plain value. `None` when the document needs the real parser.
fn quick_kind(doc: &str) -> Option<String> {
    let first = doc
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    if first.starts_with([' ', '-', '{', '[', '&', '!', '?', '%', '|', '>']) {
        return None;
    }
    // The unindented `kind:` lines: at the start, or after a line break (a vectorised search, not a walk over
    // every line of what can be a megabyte-long CRD).
    let bytes = doc.as_bytes();
    let at_start = doc.starts_with("kind:").then_some(0);
    let after_breaks = memchr::memmem::find_iter(bytes, b"\nkind:").map(|i| i + 1);
    let mut kinds = at_start.into_iter().chain(after_breaks).map(|start| {
        let line = &doc[start + "kind:".len()..];
        memchr::memchr(b'\n', line.as_bytes()).map_or(line, |end| &line[..end])
    });
    let value = kinds.next()?.trim();
    if kinds.next().is_some()
        || value.is_empty()
        || !value.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return None;
    }
    Some(value.to_string())
}

fn parse_head(path: &str, doc: &str) -> Result<Head, ChartError> {
    // Large documents (CRDs) make a full parse the costliest step of a render; without any hook annotation only
    // `kind` matters. (Helm would also reject malformed YAML here; that check is skipped on this path.)
    if !doc.contains("helm.sh/hook")
        && let Some(kind) = quick_kind(doc)
    {
        return Ok(Head { kind, hook: None });
    }
    let v = crate::yaml::parse_json(doc).map_err(|e| ChartError::Manifest {
        path: path.to_string(),
        message: format!("YAML parse error on {path}: {e}"),
    })?;
    let kind = v
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("")
        .to_string();
    let hook = v
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get("helm.sh/hook"))
        .and_then(|h| h.as_str())
        .map(str::to_string);
    Ok(Head { kind, hook })
}

/// Validates every chart's values against its `values.schema.json`, subcharts with their own scope.
fn validate_schemas(chart: &Chart, values: &Value) -> Result<(), ChartError> {
    if let Some(schema) = &chart.schema {
        super::schema::validate(&chart.name, schema, values)?;
    }
    for sub in &chart.subcharts {
        let scoped = as_map(values)
            .and_then(|m| m.get(&sub.name))
            .unwrap_or_else(|| map_value(Default::default()));
        validate_schemas(sub, &scoped)?;
    }
    Ok(())
}

/// Renders a chart given as a file map with the merged user values (`-f` files and `--set` flags already merged).
pub fn render_chart(
    files: FileMap,
    user_values: &Value,
    opts: &RenderOptions,
) -> Result<Rendered, ChartError> {
    let mut chart = load_chart(files, opts.chart_origin.as_deref().unwrap_or("chart"))?;
    let user = if crate::value::is_map(user_values) {
        user_values.clone()
    } else {
        map_value(Default::default())
    };
    process_dependencies(&mut chart, &user);
    process_import_values(&mut chart);
    let values = coalesce_values(&mut chart, &user);
    validate_schemas(&chart, &values)?;
    let mut top = BTreeMap::new();
    top.insert("Values".to_string(), values.clone());
    top.insert(
        "Release".to_string(),
        release(&opts.release_name, &opts.namespace, opts.is_upgrade),
    );
    top.insert(
        "Capabilities".to_string(),
        capabilities(&opts.kube_version, &opts.api_versions),
    );
    let top = map_value(top);
    let mut tpls = BTreeMap::new();
    collect(&chart, &values, &top, &chart.name, true, &mut tpls);

    let order = parse_order(tpls.keys());
    let mut set = TemplateSet::new();
    let sources: Vec<(&str, std::sync::Arc<str>)> = order
        .iter()
        .map(|name| (*name, tpls[*name].src.clone()))
        .collect();
    set.add_files(&sources).map_err(ChartError::Template)?;
    let mut exec = Exec::new(&set, Funcs::helm()).with_fuel(opts.fuel);
    if let Some(seed) = opts.seed {
        exec.rng = crate::funcs::Rng::seeded(seed);
    }
    let mut rendered: BTreeMap<String, String> = BTreeMap::new();
    // Templates that printed bytes that are not UTF-8, with go-yaml's complaint: Helm fails parsing them.
    let mut not_utf8: BTreeMap<String, &'static str> = BTreeMap::new();
    for name in &order {
        if name.rsplit('/').next().unwrap_or("").starts_with('_') {
            continue;
        }
        let r = &tpls[*name];
        if let Some(scope) = as_map(&r.scope) {
            let mut t = BTreeMap::new();
            t.insert("Name".to_string(), Value::from(*name));
            t.insert("BasePath".to_string(), Value::from(r.base_path.as_str()));
            scope.insert("Template", map_value(t));
        }
        exec.invalid_utf8 = None;
        let out = exec.execute(name, &r.scope).map_err(ChartError::Template)?;
        if let Some(complaint) = exec.invalid_utf8 {
            not_utf8.insert(String::from(*name), complaint);
        }
        let out = crate::template::exec::without_no_value(&out).unwrap_or(out);
        rendered.insert(String::from(*name), out);
    }
    let notes_path = format!("{}/templates/NOTES.txt", chart.name);
    let notes = rendered.get(&notes_path).cloned();
    rendered.retain(|k, _| !k.ends_with("NOTES.txt"));

    let mut generic = Vec::new();
    let mut hooks = Vec::new();
    for (path, content) in &rendered {
        if content.trim().is_empty() {
            continue;
        }
        if let Some(complaint) = not_utf8.get(path) {
            return Err(ChartError::Manifest {
                path: path.clone(),
                message: format!(
                    "YAML parse error on {path}: error converting YAML to JSON: yaml: {complaint}"
                ),
            });
        }
        for doc in split_manifests(content) {
            let head = parse_head(path, &doc)?;
            match head.hook {
                Some(h) => {
                    let known = h
                        .split(',')
                        .all(|e| HOOK_EVENTS.contains(&e.trim().to_lowercase().as_str()));
                    if known {
                        hooks.push(Manifest {
                            source: path.clone(),
                            content: doc,
                            kind: head.kind,
                            hook: true,
                        });
                    }
                }
                _ => generic.push(Manifest {
                    source: path.clone(),
                    content: doc,
                    kind: head.kind,
                    hook: false,
                }),
            }
        }
    }
    sort_by_install_order(&mut generic);
    sort_by_install_order(&mut hooks);
    let mut crds = Vec::new();
    if opts.include_crds {
        collect_crds(&chart, &chart.name, &mut crds)?;
    }
    generic.extend(hooks);
    if crate::template::leaking() {
        // A one-shot process: freeing the chart, the values, every chart's scope and the templates' outputs
        // (about 2% of kube-prometheus-stack's render) would only delay its exit.
        std::mem::forget((chart, values, top, tpls, rendered));
    }
    Ok(Rendered {
        crds,
        manifests: generic,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_helm() {
        assert_eq!(
            split_manifests("a: 1\n---\nb: 2\n---\nc: 3"),
            vec!["a: 1", "b: 2", "c: 3"]
        );
        // A separator right after another one is not a separator (Go's non-overlapping regex matches).
        assert_eq!(
            split_manifests("a: 1\n--- \n\n---\nb: 2"),
            vec!["a: 1", "---\nb: 2"]
        );
        assert_eq!(
            split_manifests("---\n# only comment\n"),
            vec!["# only comment"]
        );
        // Dashes inside a line, or not at the start of one, do not separate; whitespace before a separator goes.
        assert_eq!(
            split_manifests("a: x---y\nb: |\n  ---\n \t\n---c: 1\n----\nd"),
            vec!["a: x---y\nb: |\n  ---", "c: 1", "-\nd"]
        );
    }

    /// Helm deletes `<no value>` (what a missing map key prints) from every template's output, wherever it stands.
    #[test]
    fn no_value_is_removed_from_the_output() {
        let files = files(&[
            ("Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
            (
                "templates/a.yaml",
                "kind: ConfigMap\ndata:\n  x: \"{{ index .Values.m \"missing\" }}\"\n  y: {{ .Values.m.gone }}z\n",
            ),
            ("templates/b.yaml", "kind: ConfigMap\ndata:\n  k: <no\n"),
            ("values.yaml", "m: {}\n"),
        ]);
        let user = map_value(Default::default());
        let out = render_chart(files, &user, &RenderOptions::default())
            .unwrap()
            .to_helm_output();
        assert!(!out.contains("no value"), "{out}");
        assert!(out.contains("  x: \"\"\n  y: z\n"), "{out}");
        assert!(out.contains("  k: <no\n"), "{out}");
    }

    fn manifest(source: &str, content: &str, hook: bool) -> Manifest {
        Manifest {
            source: source.into(),
            content: content.into(),
            kind: "ConfigMap".into(),
            hook,
        }
    }

    #[test]
    fn helm_output_is_trimmed_once_and_written_whole() {
        let crd = manifest("app/crds/a.yaml", "kind: CustomResourceDefinition", false);
        let cm = manifest("app/templates/cm.yaml", "kind: ConfigMap", false);
        let blank = manifest("app/templates/blank.yaml", "", false);
        let hook = manifest("app/templates/job.yaml", "kind: Job", true);
        let cases = [
            (
                Rendered {
                    crds: vec![crd],
                    manifests: vec![hook.clone(), cm.clone()],
                    notes: None,
                },
                "---\n# Source: app/crds/a.yaml\nkind: CustomResourceDefinition\n\
                 ---\n# Source: app/templates/cm.yaml\nkind: ConfigMap\n\
                 ---\n# Source: app/templates/job.yaml\nkind: Job\n",
            ),
            // An empty last document loses the newlines after its source line, as helm's trim of the whole does.
            (
                Rendered {
                    crds: vec![],
                    manifests: vec![cm, blank],
                    notes: None,
                },
                "---\n# Source: app/templates/cm.yaml\nkind: ConfigMap\n---\n# Source: app/templates/blank.yaml\n",
            ),
            // Hooks only: an empty main part still prints its newline.
            (
                Rendered {
                    crds: vec![],
                    manifests: vec![hook],
                    notes: None,
                },
                "\n---\n# Source: app/templates/job.yaml\nkind: Job\n",
            ),
            (Rendered::default(), "\n"),
        ];
        for (rendered, expected) in cases {
            assert_eq!(rendered.to_helm_output(), expected);
            let mut written = Vec::new();
            rendered.write_helm_output(&mut written).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), expected);
        }
    }

    #[test]
    fn helm_output_of_many_documents_is_written_in_batches() {
        let rendered = Rendered {
            manifests: (0..700)
                .map(|i| {
                    manifest(
                        &format!("app/templates/{i}.yaml"),
                        &format!("n: {i}"),
                        i % 7 == 0,
                    )
                })
                .collect(),
            ..Default::default()
        };
        // A writer that takes at most 10 bytes a call, so every slice boundary is crossed mid-slice.
        struct Trickle(Vec<u8>);
        impl std::io::Write for Trickle {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let n = buf.len().min(10);
                self.0.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut w = Trickle(Vec::new());
        rendered.write_helm_output(&mut w).unwrap();
        assert_eq!(String::from_utf8(w.0).unwrap(), rendered.to_helm_output());
        let mut direct = Vec::new();
        rendered.write_helm_output(&mut direct).unwrap();
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            rendered.to_helm_output()
        );
        assert!(
            rendered
                .to_helm_output()
                .ends_with("---\n# Source: app/templates/693.yaml\nn: 693\n")
        );
    }

    fn files(list: &[(&str, &str)]) -> FileMap {
        list.iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect()
    }

    #[test]
    fn renders_in_helm_template_order() {
        let fm = files(&[
            ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n"),
            ("values.yaml", "name: web\n"),
            ("crds/crd.yaml", "kind: CustomResourceDefinition\n"),
            ("templates/NOTES.txt", "Installed {{ .Release.Name }}"),
            (
                "templates/_helpers.tpl",
                "{{ define \"app.name\" }}{{ .Values.name }}-{{ .Values.missing }}{{ end }}",
            ),
            (
                "templates/b.yaml",
                "kind: Deployment\nname: {{ include \"app.name\" . }}\n---\n---\n# empty doc above\n",
            ),
            (
                "templates/a.yaml",
                "kind: Service\n---\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n",
            ),
            ("templates/empty.yaml", "{{- if false }}x{{ end }}\n"),
        ]);
        let opts = RenderOptions {
            include_crds: true,
            ..Default::default()
        };
        let r = render_chart(fm, &map_value(Default::default()), &opts).unwrap();
        let docs: Vec<(&str, &str)> = r.documents().collect();
        assert_eq!(
            docs,
            vec![
                ("app/crds/crd.yaml", "kind: CustomResourceDefinition\n"),
                ("app/templates/a.yaml", "kind: Service"),
                ("app/templates/b.yaml", "kind: Deployment\nname: web-"),
                ("app/templates/b.yaml", "---\n# empty doc above"),
                (
                    "app/templates/a.yaml",
                    "kind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install"
                ),
            ]
        );
        assert_eq!(r.notes.as_deref(), Some("Installed release-name"));
    }

    #[test]
    fn binary_strings_printed_into_manifests_fail_as_in_helm() {
        let chart = |body: &str| {
            files(&[
                ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n"),
                ("templates/NOTES.txt", "raw: {{ \"gP8A\" | b64dec }}"),
                ("templates/b.yaml", body),
            ])
        };
        let render = |body: &str| {
            render_chart(
                chart(body),
                &map_value(Default::default()),
                &Default::default(),
            )
        };
        let e = render("kind: Secret\ndata: {{ \"gP8A\" | b64dec }}\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "YAML parse error on app/templates/b.yaml: error converting YAML to JSON: yaml: invalid leading UTF-8 octet"
        );
        let ok = render("kind: Secret\ndata: {{ \"gP8A\" | b64dec | b64enc }}\n").unwrap();
        assert_eq!(ok.manifests[0].content, "kind: Secret\ndata: gP8A");
    }

    #[test]
    fn quick_kind_only_for_plain_documents() {
        assert_eq!(
            quick_kind("# c\napiVersion: v1\nkind: ConfigMap\ndata:\n  kind: x\n").as_deref(),
            Some("ConfigMap")
        );
        assert_eq!(quick_kind("{kind: A}"), None);
        assert_eq!(quick_kind("kind: \"A\"\n"), None);
        assert_eq!(quick_kind("kind: A\nkind: B\n"), None);
        assert_eq!(quick_kind("- kind: A\n"), None);
        assert_eq!(
            quick_kind("kind: A\r\nmetadata: {}\r\n").as_deref(),
            Some("A")
        );
        assert_eq!(quick_kind("kind: A\r\nkind: B\r\n"), None);
        assert_eq!(
            quick_kind("apiVersion: v1\nkind:   Secret  "),
            Some("Secret".into())
        );
        assert_eq!(quick_kind("apiVersion: v1\n kind: A\n"), None);
    }

    #[test]
    fn kinds_sort_in_install_order() {
        let mut manifests: Vec<Manifest> = [
            "Deployment",
            "Zed",
            "Service",
            "Alpha",
            "Namespace",
            "Service",
        ]
        .iter()
        .enumerate()
        .map(|(i, kind)| Manifest {
            source: format!("t/{i}.yaml"),
            content: String::new(),
            kind: kind.to_string(),
            hook: false,
        })
        .collect();
        sort_by_install_order(&mut manifests);
        let order: Vec<(&str, &str)> = manifests
            .iter()
            .map(|m| (m.kind.as_str(), m.source.as_str()))
            .collect();
        // Listed kinds by rank, equal kinds in their order, unlisted kinds after them by name.
        assert_eq!(
            order,
            vec![
                ("Namespace", "t/4.yaml"),
                ("Service", "t/2.yaml"),
                ("Service", "t/5.yaml"),
                ("Deployment", "t/0.yaml"),
                ("Alpha", "t/3.yaml"),
                ("Zed", "t/1.yaml"),
            ]
        );
    }
}
