//! Test support: reading chart directories and values files from disk, rendering them as
//! `helm template rel CHART -n default --kube-version v1.33.0 [-f VALUES]` would, and comparing with goldens.

use std::path::{Path, PathBuf};

use fleet_helm::chart::load::read_at_load;
use fleet_helm::chart::{FileData, FileMap, RenderOptions, merge_maps, render_chart};
use fleet_helm::value::{Value, map_value};

pub fn read_tree(root: &Path) -> FileMap {
    fn walk(root: &Path, dir: &Path, out: &mut FileMap) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                // As `fleet helm template` reads a chart directory: what only `.Files` holds is read on use.
                let data = if read_at_load(&rel) {
                    std::fs::read(&p).unwrap().into()
                } else {
                    FileData::deferred(p.display().to_string(), move || std::fs::read(&p))
                };
                out.insert(rel, data);
            }
        }
    }
    let mut out = FileMap::new();
    walk(root, root, &mut out);
    out
}

/// Renders like the goldens were made; `Err` carries the error text.
pub fn render(chart_dir: &Path, values_file: Option<&Path>) -> Result<String, String> {
    let files = read_tree(chart_dir);
    let mut user = map_value(Default::default());
    if let Some(f) = values_file {
        let text = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
        let v: Value =
            fleet_helm::yaml::parse_value(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        user = merge_maps(&user, &v);
    }
    let opts = RenderOptions {
        release_name: "rel".into(),
        namespace: "default".into(),
        seed: Some(1),
        ..Default::default()
    };
    render_chart(files, &user, &opts)
        .map(|r| r.to_helm_output())
        .map_err(|e| e.to_string())
}

/// Every (chart, values set) combination under a corpus directory: `(chart, set, chart_dir, values_file)`.
pub fn combinations(corpus: &Path) -> Vec<(String, String, PathBuf, Option<PathBuf>)> {
    let mut out = Vec::new();
    let mut charts: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("Chart.yaml").is_file())
                .collect()
        })
        .unwrap_or_default();
    charts.sort();
    for c in charts {
        let name = c.file_name().unwrap().to_string_lossy().to_string();
        out.push((name.clone(), "default".to_string(), c.clone(), None));
        let vdir = corpus.join(format!("{name}.values"));
        let mut sets: Vec<PathBuf> = std::fs::read_dir(&vdir)
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                    .collect()
            })
            .unwrap_or_default();
        sets.sort();
        for s in sets {
            let set = s.file_stem().unwrap().to_string_lossy().to_string();
            out.push((name.clone(), set, c.clone(), Some(s)));
        }
    }
    out
}

/// How our output compares with a golden.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Identical,
    /// Identical except on lines where two helm runs differ (random or time-based values).
    IdenticalMasked,
    Different {
        first_line: usize,
    },
}

/// Compares `ours` with `golden`; with `alt` (a second helm run that differs), lines where the two helm runs differ
/// match anything, but the line count must agree.
pub fn compare(ours: &str, golden: &str, alt: Option<&str>) -> Verdict {
    if ours == golden {
        return Verdict::Identical;
    }
    let o: Vec<&str> = ours.split('\n').collect();
    let g: Vec<&str> = golden.split('\n').collect();
    let first_diff = o
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(o.len().min(g.len()))
        + 1;
    let Some(alt) = alt else {
        return Verdict::Different {
            first_line: first_diff,
        };
    };
    let a: Vec<&str> = alt.split('\n').collect();
    if o.len() != g.len() || a.len() != g.len() {
        return Verdict::Different {
            first_line: first_diff,
        };
    }
    for i in 0..g.len() {
        if g[i] == a[i] && o[i] != g[i] {
            return Verdict::Different { first_line: i + 1 };
        }
    }
    Verdict::IdenticalMasked
}

/// Renders one combination and compares it with the goldens directory (`<chart>/<set>.yaml`, `.alt.yaml`, `.err`).
/// Returns a status word and a detail line.
pub fn check(
    goldens: &Path,
    chart: &str,
    set: &str,
    dir: &Path,
    values: Option<&Path>,
) -> (&'static str, String, Result<String, String>) {
    let golden = std::fs::read_to_string(goldens.join(chart).join(format!("{set}.yaml")));
    let alt = std::fs::read_to_string(goldens.join(chart).join(format!("{set}.alt.yaml"))).ok();
    let helm_failed = goldens.join(chart).join(format!("{set}.err")).exists();
    let ours = render(dir, values);
    let (status, detail) = match (&ours, golden) {
        (Ok(o), Ok(g)) => match compare(o, &g, alt.as_deref()) {
            Verdict::Identical => ("match", String::new()),
            Verdict::IdenticalMasked => ("match-masked", String::new()),
            Verdict::Different { first_line } => {
                ("DIFF", format!(": first difference at line {first_line}"))
            }
        },
        (Err(_), Err(_)) if helm_failed => ("match-error", String::new()),
        (Err(e), Ok(_)) => ("OUR-ERROR", format!(": {}", e.lines().next().unwrap_or(""))),
        (Ok(_), Err(_)) if helm_failed => ("HELM-ERROR", ": helm fails, we render".to_string()),
        _ => ("NO-GOLDEN", String::new()),
    };
    (status, detail, ours)
}
