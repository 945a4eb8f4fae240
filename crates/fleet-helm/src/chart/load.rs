//! Loading a chart from an in-memory file map (paths relative to the chart root, `/`-separated): `Chart.yaml`
//! (v1 and v2, with `requirements.yaml` for v1), `values.yaml`, `values.schema.json`, `templates/`, `crds/`, other
//! files for `.Files`, `.helmignore`, and subcharts under `charts/` (directories and `.tgz` archives).

use std::collections::BTreeMap;
use std::io::Read;

use super::ChartError;
use super::file::FileData;
use crate::value::Value;

/// The files of a chart: relative path → contents.
pub type FileMap = BTreeMap<String, FileData>;

/// A dependency entry of `Chart.yaml` (or `requirements.yaml`).
#[derive(Debug, Clone, Default)]
pub struct Dependency {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub condition: String,
    pub tags: Vec<String>,
    pub alias: String,
    pub import_values: Vec<serde_json::Value>,
    /// The raw entry, for `.Chart.Dependencies`.
    pub raw: serde_json::Value,
}

/// A loaded chart and its subcharts.
#[derive(Debug, Clone)]
pub struct Chart {
    /// `Chart.yaml` as JSON.
    pub metadata: serde_json::Value,
    pub name: String,
    pub is_library: bool,
    pub dependencies: Vec<Dependency>,
    /// The chart's default values (Go float64 numbers).
    pub values: Value,
    pub schema: Option<String>,
    /// `templates/…` path → source.
    pub templates: BTreeMap<String, std::sync::Arc<str>>,
    /// The `crds/…` paths, in order; their contents are in `files` (Helm's `.Files` holds them too).
    pub crds: Vec<String>,
    /// Every file that is not a template, `Chart.yaml`, a values file or a lock file, for `.Files`.
    pub files: BTreeMap<String, FileData>,
    pub subcharts: Vec<Chart>,
}

/// A file's contents (read now if it was deferred), or a load error naming `path`.
pub(super) fn contents<'a>(path: &str, data: &'a FileData) -> Result<&'a [u8], ChartError> {
    data.bytes().map_err(|source| ChartError::Read {
        path: path.to_string(),
        source,
    })
}

/// A file's contents as text, or a load error naming `path`.
fn text<'a>(path: &str, data: &'a FileData) -> Result<&'a str, ChartError> {
    utf8(path, contents(path, data)?)
}

fn utf8<'a>(path: &str, data: &'a [u8]) -> Result<&'a str, ChartError> {
    std::str::from_utf8(data).map_err(|_| ChartError::Load {
        path: path.to_string(),
        message: "not valid UTF-8".into(),
    })
}

fn str_field(m: &serde_json::Value, key: &str) -> String {
    match m.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn parse_dependencies(v: Option<&serde_json::Value>) -> Vec<Dependency> {
    let Some(serde_json::Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .map(|d| Dependency {
            name: str_field(d, "name"),
            version: str_field(d, "version"),
            repository: str_field(d, "repository"),
            condition: str_field(d, "condition"),
            tags: match d.get("tags") {
                Some(serde_json::Value::Array(t)) => t
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            },
            alias: str_field(d, "alias"),
            import_values: match d.get("import-values") {
                Some(serde_json::Value::Array(t)) => t.clone(),
                _ => Vec::new(),
            },
            raw: d.clone(),
        })
        .collect()
}

/// A minimal `.helmignore` matcher: glob lines (`*`, `?`), directory patterns ending in `/`, `!` negation.
struct Ignore {
    rules: Vec<IgnoreRule>,
}

/// One `.helmignore` line.
struct IgnoreRule {
    negated: bool,
    pattern: Pattern,
    /// Whether the pattern contains `/` (then it matches whole path prefixes only, never a single component).
    has_slash: bool,
    dir_only: bool,
}

/// A glob sorted by the cheapest way to match it: every path component of every chart file is tested against every
/// rule, and nearly all `.helmignore` lines are plain names (`.git`) or suffixes (`*.swp`).
enum Pattern {
    /// No metacharacters: matches itself only.
    Literal(String),
    /// `*` then a literal: any name ending in the literal, without a `/` before it (`*` does not cross `/`).
    AnySuffix(String),
    Glob(String),
}

impl Pattern {
    fn new(pat: &str) -> Pattern {
        let is_literal = |p: &str| !p.contains(['*', '?', '[', '\\']);
        if is_literal(pat) {
            Pattern::Literal(pat.to_string())
        } else if let Some(rest) = pat.strip_prefix('*')
            && is_literal(rest)
        {
            Pattern::AnySuffix(rest.to_string())
        } else {
            Pattern::Glob(pat.to_string())
        }
    }

    fn matches(&self, s: &str) -> bool {
        match self {
            Pattern::Literal(l) => l == s,
            Pattern::AnySuffix(suffix) => s
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| !head.contains('/')),
            Pattern::Glob(p) => glob_match(p, s),
        }
    }
}

impl Ignore {
    fn parse(text: &str) -> Ignore {
        let mut rules = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (neg, pat) = match line.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, line),
            };
            let dir_only = pat.ends_with('/');
            let pat = pat
                .trim_end_matches('/')
                .trim_start_matches("./")
                .trim_start_matches('/');
            rules.push(IgnoreRule {
                negated: neg,
                pattern: Pattern::new(pat),
                has_slash: pat.contains('/'),
                dir_only,
            });
        }
        Ignore { rules }
    }

    fn ignored(&self, path: &str) -> bool {
        let mut ignored = false;
        // Each path component with the path up to and including it.
        let mut parts: Vec<(&str, &str)> = Vec::new();
        let mut start = 0;
        for (i, c) in path.char_indices().chain([(path.len(), '/')]) {
            if c == '/' {
                parts.push((&path[start..i], &path[..i]));
                start = i + 1;
            }
        }
        for rule in &self.rules {
            let hit = parts.iter().enumerate().any(|(i, (part, prefix))| {
                let is_dir = i + 1 < parts.len();
                (is_dir || !rule.dir_only)
                    && (rule.pattern.matches(prefix)
                        || (!rule.has_slash && rule.pattern.matches(part)))
            });
            if hit {
                ignored = !rule.negated;
            }
        }
        ignored
    }
}

/// Glob matching with `*` (not crossing `/`), `**`, `?` and `[…]` classes, as Go's `filepath.Match`.
pub fn glob_match(pat: &str, s: &str) -> bool {
    fn go<C: Copy + PartialEq + PartialOrd + From<u8>>(p: &[C], s: &[C]) -> bool {
        let [
            star,
            question,
            open,
            close,
            caret,
            bang,
            dash,
            backslash,
            slash,
        ] = [b'*', b'?', b'[', b']', b'^', b'!', b'-', b'\\', b'/'].map(C::from);
        let Some(&first) = p.first() else {
            return s.is_empty();
        };
        if first == star {
            let double = p.get(1) == Some(&star);
            let rest = if double { &p[2..] } else { &p[1..] };
            for i in 0..=s.len() {
                if go(rest, &s[i..]) {
                    return true;
                }
                if i < s.len() && s[i] == slash && !double {
                    return false;
                }
            }
            false
        } else if first == question {
            !s.is_empty() && s[0] != slash && go(&p[1..], &s[1..])
        } else if first == open {
            let Some(end) = p.iter().position(|c| *c == close) else {
                return false;
            };
            if s.is_empty() {
                return false;
            }
            let class = &p[1..end];
            let (neg, class) = match class.first() {
                Some(c) if *c == caret || *c == bang => (true, &class[1..]),
                _ => (false, class),
            };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == dash {
                    if class[i] <= s[0] && s[0] <= class[i + 2] {
                        hit = true;
                    }
                    i += 3;
                } else {
                    if class[i] == s[0] {
                        hit = true;
                    }
                    i += 1;
                }
            }
            hit != neg && go(&p[end + 1..], &s[1..])
        } else if first == backslash && p.len() > 1 {
            !s.is_empty() && s[0] == p[1] && go(&p[2..], &s[1..])
        } else {
            !s.is_empty() && s[0] == first && go(&p[1..], &s[1..])
        }
    }

    // ASCII names (nearly all) match byte by byte without allocating; others by `char`.
    if pat.is_ascii() && s.is_ascii() {
        return go(pat.as_bytes(), s.as_bytes());
    }
    let p: Vec<char> = pat.chars().collect();
    let s: Vec<char> = s.chars().collect();
    go(&p, &s)
}

/// Unpacks a chart archive (`.tgz`) into a file map rooted at the chart directory inside it.
pub fn unpack_archive(path: &str, data: &[u8]) -> Result<FileMap, ChartError> {
    let err = |m: String| ChartError::Load {
        path: path.to_string(),
        message: m,
    };
    let mut gz = flate2::read::GzDecoder::new(data);
    let mut raw = Vec::new();
    gz.by_ref()
        .take(512 << 20)
        .read_to_end(&mut raw)
        .map_err(|e| err(format!("gzip: {e}")))?;
    let mut archive = tar::Archive::new(raw.as_slice());
    let mut out = FileMap::new();
    for entry in archive.entries().map_err(|e| err(format!("tar: {e}")))? {
        let mut entry = entry.map_err(|e| err(format!("tar: {e}")))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| err(format!("tar: {e}")))?
            .to_string_lossy()
            .replace('\\', "/");
        // Strip the top-level directory (`mychart/…`).
        let Some((_, rel)) = name.split_once('/') else {
            continue;
        };
        if rel.split('/').any(|p| p == "..") {
            return Err(err(format!(
                "chart archive entry {name:?} escapes the chart"
            )));
        }
        let mut buf = Vec::new();
        entry
            .read_to_end(&mut buf)
            .map_err(|e| err(format!("tar: {e}")))?;
        out.insert(rel.to_string(), buf.into());
    }
    Ok(out)
}

/// Whether a `crds/` file is a CRD manifest to Helm (`.yaml`, `.yml` or `.json`, in any case); others are only
/// `.Files`.
fn has_manifest_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(_, ext)| {
        ["yaml", "yml", "json"]
            .iter()
            .any(|known| ext.eq_ignore_ascii_case(known))
    })
}

/// Whether loading and rendering a chart reads the file at `path` (relative to the chart root, subcharts' files
/// included): `Chart.yaml`, values files, the schema, `requirements.yaml`, `.helmignore`, templates and subchart
/// archives. Every other file is only `.Files` content (or a CRD, printed only with `--include-crds`), so a reader
/// can hand it over as [`FileData::deferred`], and a render that never asks for it never reads it (a Bitnami
/// chart's README and changelog are half a megabyte; kube-prometheus-stack's CRDs four and a half).
pub fn read_at_load(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "Chart.yaml"
            | "values.yaml"
            | "values.yml"
            | "values.schema.json"
            | "requirements.yaml"
            | ".helmignore"
    ) || name.ends_with(".tgz")
        || name.ends_with(".tar.gz")
        || path.split('/').any(|part| part == "templates")
}

/// Loads a chart from its files. `origin` names the chart in errors (e.g. its directory).
pub fn load_chart(files: FileMap, origin: &str) -> Result<Chart, ChartError> {
    load_depth(files, origin, 0)
}

/// Loads a chart from its own files (which it takes, so each file's contents move into the [`Chart`] that holds
/// them, uncopied: kube-prometheus-stack carries 4.7 MB of files that are not templates).
fn load_depth(files: FileMap, origin: &str, depth: usize) -> Result<Chart, ChartError> {
    if depth > 20 {
        return Err(ChartError::Load {
            path: origin.into(),
            message: "subcharts nested too deeply".into(),
        });
    }
    let chart_yaml = files.get("Chart.yaml").ok_or_else(|| ChartError::Load {
        path: origin.into(),
        message: "Chart.yaml file is missing".into(),
    })?;
    let chart_path = format!("{origin}/Chart.yaml");
    let metadata = crate::yaml::parse_json(text(&chart_path, chart_yaml)?).map_err(|source| {
        ChartError::Yaml {
            path: chart_path.clone(),
            source,
        }
    })?;
    if !metadata.is_object() {
        return Err(ChartError::Load {
            path: chart_path,
            message: "Chart.yaml is not a mapping".into(),
        });
    }
    let name = str_field(&metadata, "name");
    if name.is_empty() {
        return Err(ChartError::Load {
            path: chart_path,
            message: "validation: chart.metadata.name is required".into(),
        });
    }
    let is_library = str_field(&metadata, "type") == "library";
    let mut dependencies = parse_dependencies(metadata.get("dependencies"));
    if dependencies.is_empty()
        && let Some(req) = files.get("requirements.yaml")
    {
        let path = format!("{origin}/requirements.yaml");
        let r = crate::yaml::parse_json(text(&path, req)?)
            .map_err(|source| ChartError::Yaml { path, source })?;
        dependencies = parse_dependencies(r.get("dependencies"));
    }
    // Helm applies only the top chart's `.helmignore` (to every path, subcharts included).
    let ignore = match files.get(".helmignore").filter(|_| depth == 0) {
        Some(data) => {
            let data = contents(&format!("{origin}/.helmignore"), data)?;
            Some(Ignore::parse(&String::from_utf8_lossy(data)))
        }
        None => None,
    };
    let values = match files.get("values.yaml").or_else(|| files.get("values.yml")) {
        Some(v) => {
            let path = format!("{origin}/values.yaml");
            let parsed = crate::yaml::parse_value(text(&path, v)?)
                .map_err(|source| ChartError::Yaml { path, source })?;
            if crate::value::is_nil(&parsed) {
                crate::value::map_value(Default::default())
            } else {
                parsed
            }
        }
        None => crate::value::map_value(Default::default()),
    };
    let schema = match files.get("values.schema.json") {
        Some(s) => Some(text(&format!("{origin}/values.schema.json"), s)?.to_string()),
        None => None,
    };
    let mut templates = BTreeMap::new();
    let mut crds = Vec::new();
    let mut other = BTreeMap::new();
    let mut sub_files: BTreeMap<String, FileMap> = BTreeMap::new();
    let mut archives: Vec<(String, FileData)> = Vec::new();
    for (path, data) in files {
        if ignore.as_ref().is_some_and(|i| i.ignored(&path)) {
            continue;
        }
        if let Some(rest) = path.strip_prefix("charts/") {
            match rest.split_once('/') {
                Some((dir, inner)) => {
                    sub_files
                        .entry(dir.to_string())
                        .or_default()
                        .insert(inner.to_string(), data);
                }
                None if rest.ends_with(".tgz") || rest.ends_with(".tar.gz") => {
                    archives.push((path, data))
                }
                None => {}
            }
            continue;
        }
        if path.starts_with("templates/") {
            let src = std::sync::Arc::from(text(&format!("{origin}/{path}"), &data)?);
            templates.insert(path, src);
            continue;
        }
        if path.starts_with("crds/") && has_manifest_extension(&path) {
            crds.push(path.clone());
        }
        if !matches!(
            path.as_str(),
            "Chart.yaml"
                | "values.yaml"
                | "values.schema.json"
                | "requirements.yaml"
                | "requirements.lock"
                | "Chart.lock"
        ) {
            other.insert(path, data);
        }
    }
    // Subcharts load one after the other, on this thread (threads of their own measured slower: see
    // `TemplateSet::add_files`).
    let mut subcharts = Vec::new();
    for (dir, fm) in sub_files {
        if fm.contains_key("Chart.yaml") {
            subcharts.push(load_depth(
                fm,
                &format!("{origin}/charts/{dir}"),
                depth + 1,
            )?);
        }
    }
    for (path, data) in archives {
        let archive = format!("{origin}/{path}");
        let fm = unpack_archive(&archive, contents(&archive, &data)?)?;
        subcharts.push(load_depth(fm, &archive, depth + 1)?);
    }
    Ok(Chart {
        metadata,
        name,
        is_library,
        dependencies,
        values,
        schema,
        templates,
        crds,
        files: other,
        subcharts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_like_go() {
        assert!(glob_match("*.yaml", "a.yaml"));
        assert!(!glob_match("*.yaml", "d/a.yaml"));
        assert!(glob_match("files/**", "files/a/b.txt"));
        assert!(glob_match("[a-c]?.txt", "bx.txt"));
    }

    fn tgz(prefix: &str, files: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, body) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder
                .append_data(&mut header, format!("{prefix}/{path}"), body.as_bytes())
                .unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn v1_charts_with_requirements_and_tgz_subcharts() {
        let sub = tgz(
            "db",
            &[
                ("Chart.yaml", "apiVersion: v1\nname: db\nversion: 2.0.0\n"),
                ("values.yaml", "port: 5432\n"),
            ],
        );
        let mut files = FileMap::new();
        files.insert(
            "Chart.yaml".into(),
            b"apiVersion: v1\nname: app\nversion: 1.0.0\n"
                .to_vec()
                .into(),
        );
        files.insert(
            "requirements.yaml".into(),
            b"dependencies:\n- name: db\n  version: 2.x\n  condition: db.enabled\n"
                .to_vec()
                .into(),
        );
        files.insert("charts/db-2.0.0.tgz".into(), sub.into());
        files.insert("files/a.txt".into(), b"x".to_vec().into());
        let chart = load_chart(files, "app").unwrap();
        assert_eq!(chart.dependencies[0].condition, "db.enabled");
        assert_eq!(chart.subcharts.len(), 1);
        assert_eq!(chart.subcharts[0].name, "db");
        assert!(
            chart.files.contains_key("files/a.txt")
                && !chart.files.contains_key("requirements.yaml")
        );
        assert!(unpack_archive("x.tgz", b"not gzip").is_err());
    }

    #[test]
    fn crd_files_are_also_files_as_in_helm() {
        let mut files = FileMap::new();
        for (path, body) in [
            ("Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n"),
            ("crds/b.YML", "kind: CustomResourceDefinition\n"),
            ("crds/a.yaml", "kind: CustomResourceDefinition\n"),
            ("crds/README.md", "notes\n"),
        ] {
            files.insert(path.into(), body.as_bytes().to_vec().into());
        }
        let chart = load_chart(files, "app").unwrap();
        assert_eq!(chart.crds, ["crds/a.yaml", "crds/b.YML"]);
        let in_files: Vec<&String> = chart.files.keys().collect();
        assert_eq!(in_files, ["crds/README.md", "crds/a.yaml", "crds/b.YML"]);
    }

    #[test]
    fn helmignore_rules() {
        let i = Ignore::parse("# c\n.git/\n*.swp\nci/\n!keep.swp\n");
        assert!(i.ignored(".git/config"));
        assert!(i.ignored("x/y.swp"));
        assert!(!i.ignored("keep.swp"));
        assert!(i.ignored("ci/values.yaml"));
        assert!(!i.ignored("templates/ci.yaml"));
    }

    /// Literal and `*suffix` lines take a shortcut past `glob_match`; every kind of line must decide as the glob does.
    #[test]
    fn ignore_patterns_match_as_their_globs() {
        let patterns = [
            ".git",
            "*.swp",
            "*~",
            "*",
            "*/values.yaml",
            "ci",
            "a*b",
            "[ab].txt",
            "x?",
            "\\*.md",
            "*.",
        ];
        let names = [
            ".git",
            "a.swp",
            "d/a.swp",
            "x~",
            "",
            "ci",
            "d/values.yaml",
            "d/e/values.yaml",
            "ab",
            "a/b",
            "axb",
            "a.txt",
            "c.txt",
            "xy",
            "*.md",
            "a.md",
            "a.",
            "a/.",
        ];
        for pat in patterns {
            for name in names {
                assert_eq!(
                    Pattern::new(pat).matches(name),
                    glob_match(pat, name),
                    "{pat:?} against {name:?}"
                );
            }
        }
        assert!(matches!(Pattern::new(".git"), Pattern::Literal(_)));
        assert!(matches!(Pattern::new("*.swp"), Pattern::AnySuffix(_)));
        assert!(matches!(Pattern::new("[ab].txt"), Pattern::Glob(_)));
    }
}
