//! Test support: reading chart directories and values files from disk, rendering them as
//! `helm template rel CHART -n default --kube-version v1.33.0 [-f VALUES]` would, and comparing with goldens.

use std::path::{Path, PathBuf};

use fleet_helm::chart::{FileMap, RenderOptions, merge_maps, render_chart};
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
            } else if let Ok(data) = std::fs::read(&p) {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
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
    render_chart(&files, &user, &opts)
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
