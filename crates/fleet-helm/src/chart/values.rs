//! Values as Helm computes them: merging user sources (`-f` files then `--set` flags), coalescing with chart
//! defaults (`null` deletes, tables merge, user values win), subchart scopes and `global` propagation, and
//! enabling dependencies by `condition` and `tags` (with `alias`).

use std::sync::Arc;

use super::load::Chart;
use crate::value::{GoMap, Value, as_map, deep_copy, is_map, is_nil, map_value};

/// User values from JSON data (e.g. fleet.yaml `helm.values`), with Go's JSON number semantics (float64), as Helm
/// holds values read from YAML or JSON.
pub fn values_from_json(v: &serde_json::Value) -> Value {
    crate::funcs::encoding::from_json_floats(v)
}

/// Helm's `mergeMaps`: `over` wins, nested tables merge. Returns a new map.
pub fn merge_maps(base: &Value, over: &Value) -> Value {
    let out = as_map(base).map(|m| m.snapshot()).unwrap_or_default();
    let out_map = map_value(out);
    let Some(o) = as_map(&out_map) else {
        return out_map;
    };
    if let Some(over) = as_map(over) {
        for (k, v) in over.snapshot() {
            if is_map(&v)
                && let Some(existing) = o.get(&k).filter(is_map)
            {
                o.insert(k, merge_maps(&existing, &v));
                continue;
            }
            o.insert(k, v);
        }
    }
    out_map
}

fn chart_map(v: &Value) -> Arc<GoMap> {
    as_map(v).unwrap_or_default()
}

/// `CoalesceValues(chart, vals)`: the values the chart renders with (a deep copy; `user` is not modified).
pub fn coalesce_values(chart: &Chart, user: &Value) -> Value {
    let dest = deep_copy(user);
    let dest = if is_map(&dest) {
        dest
    } else {
        map_value(Default::default())
    };
    coalesce(chart, &chart_map(&dest), false);
    dest
}

fn coalesce(chart: &Chart, dest: &GoMap, merge: bool) {
    coalesce_chart_values(chart, dest, merge);
    coalesce_deps(chart, dest, merge);
}

fn coalesce_deps(chart: &Chart, dest: &GoMap, merge: bool) {
    for sub in &chart.subcharts {
        let name = &sub.name;
        let existing = dest.get(name);
        let sub_map = match existing {
            None => {
                let m = map_value(Default::default());
                dest.insert(name.clone(), m.clone());
                m
            }
            Some(v) if is_map(&v) => v,
            // Helm errors with "type mismatch"; keep going with the chart defaults.
            Some(_) => {
                let m = map_value(Default::default());
                dest.insert(name.clone(), m.clone());
                m
            }
        };
        let dv = chart_map(&sub_map);
        coalesce_globals(&dv, dest);
        coalesce(sub, &dv, merge);
    }
}

/// Copies the parent's `global` into the subchart's, parent winning.
fn coalesce_globals(dest: &GoMap, src: &GoMap) {
    let dg = match dest.get("global") {
        None => map_value(Default::default()),
        Some(v) if is_map(&v) => v,
        Some(_) => return,
    };
    let sg = match src.get("global") {
        None => map_value(Default::default()),
        Some(v) if is_map(&v) => v,
        Some(_) => return,
    };
    let dgm = chart_map(&dg);
    for (key, val) in chart_map(&sg).snapshot() {
        if is_map(&val) {
            let vv = deep_copy(&val);
            match dgm.get(&key) {
                None => dgm.insert(key, vv),
                Some(destv) if is_map(&destv) => {
                    coalesce_tables(&chart_map(&vv), &chart_map(&destv), true);
                    dgm.insert(key, vv);
                }
                Some(_) => {}
            }
        } else if dgm.get(&key).is_some_and(|d| is_map(&d)) {
            // A table is not replaced by a scalar.
        } else {
            dgm.insert(key, val);
        }
    }
    dest.insert("global", dg);
}

fn coalesce_chart_values(chart: &Chart, v: &GoMap, merge: bool) {
    let defaults = deep_copy(&chart.values);
    for (key, val) in chart_map(&defaults).snapshot() {
        match v.get(&key) {
            Some(value) => {
                if is_nil(&value) && !merge {
                    v.remove(&key);
                } else if is_map(&value) && is_map(&val) {
                    let merge = merge || chart.subcharts.iter().any(|s| s.name == key);
                    coalesce_tables(&chart_map(&value), &chart_map(&val), merge);
                }
            }
            None => v.insert(key, val),
        }
    }
}

/// `coalesceTablesFullKey(dst, src)`: `dst` wins; `null` in `dst` deletes unless merging.
fn coalesce_tables(dst: &GoMap, src: &GoMap, merge: bool) {
    for (key, val) in src.snapshot() {
        match dst.get(&key) {
            Some(dv) if !merge && is_nil(&dv) => {
                dst.remove(&key);
            }
            None => dst.insert(key, val),
            Some(dv) => {
                if is_map(&val) && is_map(&dv) {
                    coalesce_tables(&chart_map(&dv), &chart_map(&val), merge);
                }
            }
        }
    }
}

/// Looks up a dotted path (`a.b.c`) in values.
fn lookup_path(values: &Value, path: &str) -> Option<Value> {
    let mut cur = values.clone();
    for part in path.split('.') {
        cur = as_map(&cur)?.get(part)?;
    }
    Some(cur)
}

/// Removes disabled dependencies (by `condition` and `tags`) and applies aliases, recursively, as Helm's
/// `processDependencyEnabled` does. `user` is the merged user values of the top-level chart.
pub fn process_dependencies(chart: &mut Chart, user: &Value) {
    let cvals = coalesce_values(chart, user);
    process_level(chart, &cvals, "");
}

fn process_level(chart: &mut Chart, cvals: &Value, path: &str) {
    // Apply aliases: each dependency entry selects a subchart by name; aliased ones are renamed copies.
    // Helm's order: subcharts not named in the dependency list first, then the list's entries in order.
    let mut selected: Vec<Chart> = chart
        .subcharts
        .iter()
        .filter(|s| !chart.dependencies.iter().any(|d| d.name == s.name))
        .cloned()
        .collect();
    for dep in &chart.dependencies {
        if let Some(sub) = chart.subcharts.iter().find(|s| s.name == dep.name) {
            let mut c = sub.clone();
            if !dep.alias.is_empty() {
                c.name = dep.alias.clone();
            }
            selected.push(c);
        }
    }
    let mut enabled: Vec<(String, bool)> = Vec::new();
    let tags = lookup_path(cvals, "tags");
    for dep in &chart.dependencies {
        let name = if dep.alias.is_empty() {
            dep.name.clone()
        } else {
            dep.alias.clone()
        };
        let mut on = true;
        // Tags: enabled if any tag is true; disabled if all listed tags are false.
        if !dep.tags.is_empty()
            && let Some(t) = tags.as_ref().and_then(as_map)
        {
            let mut has_true = false;
            let mut has_false = false;
            for tag in &dep.tags {
                match t.get(tag) {
                    Some(v) if v.kind() == minijinja::value::ValueKind::Bool => {
                        if v.is_true() {
                            has_true = true
                        } else {
                            has_false = true
                        }
                    }
                    _ => {}
                }
            }
            if !has_true && has_false {
                on = false;
            }
        }
        // Condition: the first path that resolves to a bool decides.
        if !dep.condition.is_empty() {
            for c in dep.condition.split(',') {
                let full = format!("{path}{}", c.trim());
                if let Some(v) = lookup_path(cvals, &full)
                    && v.kind() == minijinja::value::ValueKind::Bool
                {
                    on = v.is_true();
                    break;
                }
            }
        }
        enabled.push((name, on));
    }
    selected.retain(|c| !enabled.iter().any(|(n, on)| n == &c.name && !on));
    for sub in &mut selected {
        let sub_path = format!("{path}{}.", sub.name);
        process_level(sub, cvals, &sub_path);
    }
    chart.dependencies.retain(|d| {
        let n = if d.alias.is_empty() {
            &d.name
        } else {
            &d.alias
        };
        !enabled.iter().any(|(name, on)| name == n && !on)
    });
    chart.subcharts = selected;
}

/// Builds `{a: {b: value}}` from the dotted path `a.b` (`.` alone is the value itself).
fn path_to_map(path: &str, value: Value) -> Value {
    if path == "." || path.is_empty() {
        return value;
    }
    let mut v = value;
    for part in path.rsplit('.') {
        let mut m = std::collections::BTreeMap::new();
        m.insert(part.to_string(), v);
        v = map_value(m);
    }
    v
}

/// Helm's `processDependencyImportValues`: bottom-up, each chart imports the tables its dependencies' `import-values`
/// name (`{child: path, parent: path}` or a string meaning `exports.<name>` into the root), with the chart's own
/// values taking precedence over imported ones.
pub fn process_import_values(chart: &mut Chart) {
    for sub in &mut chart.subcharts {
        process_import_values(sub);
    }
    if chart
        .dependencies
        .iter()
        .all(|d| d.import_values.is_empty())
    {
        return;
    }
    let cvals = coalesce_values(chart, &map_value(Default::default()));
    let imported = map_value(Default::default());
    for dep in &chart.dependencies {
        let name = if dep.alias.is_empty() {
            &dep.name
        } else {
            &dep.alias
        };
        for iv in &dep.import_values {
            let (child, parent) = match iv {
                serde_json::Value::String(s) => (format!("exports.{s}"), ".".to_string()),
                serde_json::Value::Object(m) => (
                    m.get("child")
                        .and_then(|c| c.as_str())
                        .unwrap_or_default()
                        .to_string(),
                    m.get("parent")
                        .and_then(|c| c.as_str())
                        .unwrap_or_default()
                        .to_string(),
                ),
                _ => continue,
            };
            let Some(table) = lookup_path(&cvals, &format!("{name}.{child}")).filter(is_map) else {
                continue;
            };
            let incoming = path_to_map(&parent, deep_copy(&table));
            // Earlier imports win over later ones (CoalesceTables keeps the destination).
            coalesce_tables(&chart_map(&imported), &chart_map(&incoming), false);
        }
    }
    let own = cvals;
    coalesce_tables(&chart_map(&own), &chart_map(&imported), false);
    chart.values = own;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::load::{FileMap, load_chart};

    fn chart(files: &[(&str, &str)]) -> Chart {
        let fm: FileMap = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect();
        load_chart(fm, "t").unwrap()
    }

    /// Go's `toJson` (floats without `.0`).
    fn json(v: &Value) -> String {
        fleet_yaml::gojson::to_json_go(&crate::value::to_json(v).unwrap())
    }

    fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }

    /// Values read straight into template values (`yaml::parse_value`, through fleet-yaml's builder) are the values
    /// the JSON reading converts to, float64 numbers included: on every YAML file under `testdata/` (and under
    /// `$FLEET_YAML_CORPUS`, e.g. the chart corpus, when set).
    #[test]
    fn values_read_straight_are_the_json_readings_values() {
        let mut files = Vec::new();
        yaml_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
            &mut files,
        );
        if let Ok(corpus) = std::env::var("FLEET_YAML_CORPUS") {
            yaml_files(std::path::Path::new(&corpus), &mut files);
        }
        let mut compared = 0;
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let via_json =
                crate::yaml::parse_json(&text).map(crate::funcs::encoding::from_json_floats_owned);
            let straight = crate::yaml::parse_value(&text);
            match (via_json, straight) {
                (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{path:?}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{path:?}"),
                (a, b) => panic!("{path:?}: {a:?} against {b:?}"),
            }
            compared += 1;
        }
        assert!(compared > 300, "{compared}");
    }

    const PARENT: &str = "apiVersion: v2\nname: p\nversion: 1.0.0\ndependencies:\n- name: c\n  version: 1.0.0\n  condition: c.enabled\n  import-values:\n  - data\n  - child: deep\n    parent: fromchild\n";

    #[test]
    fn coalesces_like_helm() {
        let c = chart(&[
            ("Chart.yaml", PARENT),
            (
                "values.yaml",
                "a: 1\nb: {x: 1, v: 2}\nc: {k: parent}\nglobal: {g: 1}\n",
            ),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            ("charts/c/values.yaml", "k: child\nenabled: true\nz: 3\n"),
        ]);
        let user = crate::yaml::parse_value("b: {x: null, w: 9}\na: 5\n").unwrap();
        let v = coalesce_values(&c, &user);
        assert_eq!(
            json(&v),
            r#"{"a":5,"b":{"v":2,"w":9},"c":{"enabled":true,"global":{"g":1},"k":"parent","z":3},"global":{"g":1}}"#
        );
    }

    #[test]
    fn conditions_disable_and_imports_flow_up() {
        let files = [
            ("Chart.yaml", PARENT),
            ("values.yaml", "fromchild: {keep: parent}\n"),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "charts/c/values.yaml",
                "enabled: true\nexports: {data: {exported: 1}}\ndeep: {keep: child, more: 2}\n",
            ),
        ];
        let mut c = chart(&files);
        process_dependencies(&mut c, &map_value(Default::default()));
        process_import_values(&mut c);
        let v = coalesce_values(&c, &map_value(Default::default()));
        let m = as_map(&v).unwrap();
        assert_eq!(json(&m.get("exported").unwrap()), "1");
        assert_eq!(
            json(&m.get("fromchild").unwrap()),
            r#"{"keep":"parent","more":2}"#
        );
        let mut c = chart(&files);
        process_dependencies(
            &mut c,
            &crate::yaml::parse_value("c: {enabled: false}").unwrap(),
        );
        assert!(c.subcharts.is_empty());
    }
}
