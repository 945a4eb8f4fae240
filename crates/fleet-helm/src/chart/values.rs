//! Values as Helm computes them: merging user sources (`-f` files then `--set` flags), coalescing with chart
//! defaults (`null` deletes, tables merge, user values win), subchart scopes and `global` propagation, and
//! enabling dependencies by `condition` and `tags` (with `alias`).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::load::Chart;
use crate::value::{GoMap, Value, as_map, deep_copy, deep_take, is_map, is_nil, map_value};

/// User values from JSON data (e.g. fleet.yaml `helm.values`), with Go's JSON number semantics (float64), as Helm
/// holds values read from YAML or JSON.
pub fn values_from_json(v: &serde_json::Value) -> Value {
    crate::value::from_json_floats(v)
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

/// `CoalesceValues(chart, vals)`: the values the chart renders with, every map of them their own (`user` is not
/// modified). The chart's defaults move into them: a map of defaults that nothing else holds is taken as it is, a
/// shared one is copied ([`deep_take`]), so the chart and its subcharts are left with empty defaults.
pub fn coalesce_values(chart: &mut Chart, user: &Value) -> Value {
    let dest = deep_copy(user);
    let dest = if is_map(&dest) {
        dest
    } else {
        map_value(Default::default())
    };
    Coalescer::new(Mode::Moving).coalesce(chart, &chart_map(&dest), false);
    dest
}

/// [`coalesce_values`] for a result that is only read: the same values, but sharing the maps of the charts'
/// defaults and of `user` wherever the result leaves them as they are (a map is copied only where it changes).
fn coalesce_values_shared(chart: &Chart, user: &Value) -> Value {
    let mut c = Coalescer::new(Mode::Sharing);
    let dest = c.fresh(as_map(user).map(|m| m.snapshot()).unwrap_or_default());
    c.coalesce(chart, &chart_map(&dest), false);
    dest
}

/// How a coalesce takes the chart defaults (and the user values) into its result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every default taken is a deep copy, so every map of the result is its own and the defaults stay as they are.
    Copying,
    /// Defaults are taken as they are, and a map of the result is copied (one level) before it is changed unless
    /// this coalesce made it: the defaults stay as they are, and the result is only read.
    Sharing,
    /// Defaults move into the result: the entries of a defaults map nothing else holds are taken out of it, and a
    /// default taken is [`deep_take`]n (kept where nothing else holds it, else copied). Every map of the result is
    /// its own; the defaults are left empty.
    Moving,
}

/// One coalesce: Helm's algorithm, which fills and changes the maps of the result in place, and a rule ([`Mode`])
/// for the maps that come from the chart defaults (and the user values).
struct Coalescer {
    mode: Mode,
    /// The maps this coalesce made (sharing only), kept alive so that their addresses stay theirs.
    made: HashMap<*const GoMap, Arc<GoMap>>,
}

impl Coalescer {
    fn new(mode: Mode) -> Self {
        Coalescer {
            mode,
            made: HashMap::new(),
        }
    }

    /// A new map of the result, holding `entries`.
    fn fresh(&mut self, entries: BTreeMap<String, Value>) -> Value {
        self.made_here(map_value(entries))
    }

    /// `v`, a map (or other value) this coalesce has just made, recorded as its own when sharing.
    fn made_here(&mut self, v: Value) -> Value {
        if self.mode == Mode::Sharing
            && let Some(m) = as_map(&v)
        {
            self.made.insert(Arc::as_ptr(&m), m);
        }
        v
    }

    /// A default (or a value of the source table) as the result takes it.
    fn take(&self, v: Value) -> Value {
        match self.mode {
            Mode::Copying => deep_copy(&v),
            Mode::Sharing => v,
            Mode::Moving => deep_take(v),
        }
    }

    /// The entries of the defaults map `defaults` to coalesce: when moving and nothing else holds the map (the
    /// caller's value and `defaults` are its only holders), taken out of it; else a copy of them (values shared).
    fn defaults(&self, defaults: &Arc<GoMap>) -> BTreeMap<String, Value> {
        if self.mode == Mode::Moving && Arc::strong_count(defaults) == 2 {
            std::mem::take(&mut *defaults.lock())
        } else {
            defaults.snapshot()
        }
    }

    /// The map `child`, the value of `key` in the result's map `parent`, ready to be changed: when it may be shared,
    /// a copy of it replaces it in `parent` first.
    fn writable(&mut self, parent: &GoMap, key: &str, child: &Value) -> Arc<GoMap> {
        let m = chart_map(child);
        if self.mode != Mode::Sharing || self.made.contains_key(&Arc::as_ptr(&m)) {
            return m;
        }
        let copy = self.fresh(m.snapshot());
        parent.insert(key, copy.clone());
        chart_map(&copy)
    }

    fn coalesce(&mut self, chart: &Chart, dest: &GoMap, merge: bool) {
        self.chart_values(chart, dest, merge);
        self.deps(chart, dest, merge);
    }

    fn deps(&mut self, chart: &Chart, dest: &GoMap, merge: bool) {
        for sub in &chart.subcharts {
            let name = &sub.name;
            let dv = match dest.get(name) {
                Some(v) if is_map(&v) => self.writable(dest, name, &v),
                // A missing key gets an empty table; Helm errors on a non-table with "type mismatch", we keep going
                // with the chart defaults.
                _ => {
                    let m = self.fresh(BTreeMap::new());
                    dest.insert(name.clone(), m.clone());
                    chart_map(&m)
                }
            };
            self.globals(&dv, dest);
            self.coalesce(sub, &dv, merge);
        }
    }

    /// Copies the parent's `global` into the subchart's, parent winning.
    fn globals(&mut self, dest: &GoMap, src: &GoMap) {
        let dg = match dest.get("global") {
            None => self.fresh(BTreeMap::new()),
            Some(v) if is_map(&v) => v,
            Some(_) => return,
        };
        let sg = match src.get("global") {
            None => map_value(Default::default()),
            Some(v) if is_map(&v) => v,
            Some(_) => return,
        };
        // `dg` is put (back) in place first, so that making it writable replaces it there.
        dest.insert("global", dg.clone());
        let dgm = self.writable(dest, "global", &dg);
        for (key, val) in chart_map(&sg).snapshot() {
            if is_map(&val) {
                let vv = self.made_here(deep_copy(&val));
                match dgm.get(&key) {
                    None => dgm.insert(key, vv),
                    Some(destv) if is_map(&destv) => {
                        // The parent's table wins over the subchart's own; the subchart's values move across.
                        Coalescer::new(Mode::Copying).tables(
                            &chart_map(&vv),
                            &chart_map(&destv),
                            true,
                            false,
                        );
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
    }

    fn chart_values(&mut self, chart: &Chart, v: &GoMap, merge: bool) {
        let entries = self.defaults(&chart_map(&chart.values));
        for (key, value, val) in self.fill(v, entries, merge, true) {
            let merge = merge || chart.subcharts.iter().any(|s| s.name == key);
            let dst = self.writable(v, &key, &value);
            self.tables(&dst, &chart_map(&val), merge, true);
        }
    }

    /// `coalesceTablesFullKey(dst, src)`: `dst` wins; `null` in `dst` deletes unless merging. `defaults`: `src`
    /// belongs to chart defaults (taken as [`Coalescer::take`] says); else its values move into `dst` as they are.
    fn tables(&mut self, dst: &GoMap, src: &Arc<GoMap>, merge: bool, defaults: bool) {
        let entries = if defaults {
            self.defaults(src)
        } else {
            src.snapshot()
        };
        for (key, dv, val) in self.fill(dst, entries, merge, defaults) {
            let dvm = self.writable(dst, &key, &dv);
            self.tables(&dvm, &chart_map(&val), merge, defaults);
        }
    }

    /// The one-level part of a coalesce of `entries` into `dst`, under one lock of `dst`: a key `dst` lacks gets the
    /// entry's value (taken as [`Coalescer::take`] says, for defaults), a `null` in `dst` is deleted unless merging,
    /// and `dst` wins otherwise. Returns the keys where both sides are tables, with both values, for the caller to
    /// merge once the lock is released. Taking a default locks only maps of the defaults, never `dst`.
    fn fill(
        &self,
        dst: &GoMap,
        entries: BTreeMap<String, Value>,
        merge: bool,
        defaults: bool,
    ) -> Vec<(String, Value, Value)> {
        let mut tables = Vec::new();
        let mut dest = dst.lock();
        for (key, val) in entries {
            match dest.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(if defaults { self.take(val) } else { val });
                }
                Entry::Occupied(slot) if !merge && is_nil(slot.get()) => {
                    slot.remove();
                }
                Entry::Occupied(slot) => {
                    if is_map(&val) && is_map(slot.get()) {
                        tables.push((slot.key().clone(), slot.get().clone(), val));
                    }
                }
            }
        }
        tables
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
    // The coalesced tree is freed here even by a one-shot process: it shares the chart's default maps, which the
    // render's coalesce takes over only where nothing else holds them.
    let cvals = coalesce_values_shared(chart, user);
    process_level(chart, &cvals, "");
}

fn process_level(chart: &mut Chart, cvals: &Value, path: &str) {
    // Apply aliases: each dependency entry selects a subchart by name; aliased ones are renamed copies.
    // Helm's order: subcharts not named in the dependency list first, then the list's entries in order.
    // Subcharts move into their place; one that several entries select is copied for all but the last of them.
    let (mut selected, mut listed): (Vec<Chart>, Vec<Option<Chart>>) = (Vec::new(), Vec::new());
    for sub in std::mem::take(&mut chart.subcharts) {
        if chart.dependencies.iter().any(|d| d.name == sub.name) {
            listed.push(Some(sub));
        } else {
            selected.push(sub);
        }
    }
    for (i, dep) in chart.dependencies.iter().enumerate() {
        let Some(slot) = listed
            .iter_mut()
            .find(|s| s.as_ref().is_some_and(|s| s.name == dep.name))
        else {
            continue;
        };
        let again = chart.dependencies[i + 1..]
            .iter()
            .any(|d| d.name == dep.name);
        let Some(mut c) = (if again { slot.clone() } else { slot.take() }) else {
            continue;
        };
        if !dep.alias.is_empty() {
            c.name = dep.alias.clone();
        }
        selected.push(c);
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
    let mut c = Coalescer::new(Mode::Sharing);
    let cvals = c.fresh(BTreeMap::new());
    c.coalesce(chart, &chart_map(&cvals), false);
    let imported = c.fresh(BTreeMap::new());
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
            c.tables(&chart_map(&imported), &chart_map(&incoming), false, false);
        }
    }
    let own = cvals;
    c.tables(&chart_map(&own), &chart_map(&imported), false, false);
    // These values came from the sharing coalesce, so maps the import left unchanged are the subcharts' own default
    // maps, not copies. That is sound because every later write goes through the render's coalesce, which copies a
    // map that two holders share (Mode::Moving takes over only what nothing else holds); code that changed
    // `chart.values` in place would change those defaults too.
    chart.values = own;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::load::{FileMap, load_chart};

    fn chart(files: &[(&str, &str)]) -> Chart {
        let fm: FileMap = files
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect();
        load_chart(fm, "t").unwrap()
    }

    /// Go's `toJson` (floats without `.0`).
    fn json(v: &Value) -> String {
        fleet_yaml::gojson::to_json_go(&crate::value::to_json(v).unwrap())
    }

    /// Huge integers in a values file are float64s, as Helm reads them: what helm v4.1.4 prints for this chart.
    #[test]
    fn huge_integers_in_values_are_float64s_like_helms() {
        let files: FileMap = [
            ("Chart.yaml", "apiVersion: v2\nname: big\nversion: 0.1.0\n"),
            (
                "values.yaml",
                "huge: 123456789012345678901234567890\nu64max: 18446744073709551615\n\
                 over: 18446744073709551616\nneg: -9223372036854775809\ni64: 9223372036854775807\n",
            ),
            (
                "values.schema.json",
                r#"{"properties": {"huge": {"type": "integer", "minimum": 1e29}}}"#,
            ),
            (
                "templates/cm.yaml",
                "json: {{ toJson .Values | quote }}\nyaml: {{ toYaml .Values | quote }}\n\
                 huge: {{ .Values.huge | quote }}\nkind: {{ kindOf .Values.huge }}\n",
            ),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), (*v).into()))
        .collect();
        let out = crate::chart::render::render_chart(
            files,
            &map_value(Default::default()),
            &Default::default(),
        )
        .unwrap()
        .to_helm_output();
        let helm = concat!(
            r#"json: "{\"huge\":1.2345678901234568e+29,\"i64\":9223372036854776000,"#,
            r#"\"neg\":-9223372036854776000,\"over\":18446744073709552000,\"u64max\":18446744073709552000}""#,
            "\n",
            r#"yaml: "huge: 1.2345678901234568e+29\ni64: 9223372036854776000\nneg: -9.223372036854776e+18\nover: 1.8446744073709552e+19\nu64max: 1.8446744073709552e+19""#,
            "\nhuge: \"1.2345678901234568e+29\"\nkind: float64\n",
        );
        assert!(out.ends_with(helm), "{out}");
    }

    /// Values read straight into template values (`yaml::parse_value`, through fleet-yaml's builder) are the values
    /// the JSON reading converts to, float64 numbers included: on every YAML file under `testdata/` (and under
    /// `$FLEET_YAML_CORPUS`, e.g. the chart corpus, when set).
    #[test]
    fn values_read_straight_are_the_json_readings_values() {
        let mut compared = 0;
        for (path, text) in &fleet_yaml::testing::yaml_corpus() {
            let via_json = crate::yaml::parse_json(text).map(crate::value::from_json_floats_owned);
            let straight = crate::yaml::parse_value(text);
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
        let mut c = chart(&[
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
        let v = coalesce_values(&mut c, &user);
        assert_eq!(
            json(&v),
            r#"{"a":5,"b":{"v":2,"w":9},"c":{"enabled":true,"global":{"g":1},"k":"parent","z":3},"global":{"g":1}}"#
        );
    }

    /// Every chart's defaults, as JSON text, depth first.
    fn defaults(c: &Chart) -> Vec<String> {
        let mut out = vec![json(&c.values)];
        for sub in &c.subcharts {
            out.extend(defaults(sub));
        }
        out
    }

    /// The coalesce whose result is only read (conditions, import-values) gives the copying coalesce's values and
    /// changes no chart's defaults, though it shares their maps: parent tables over a subchart's, globals, nulls.
    #[test]
    fn sharing_coalesce_gives_the_same_values_and_leaves_defaults_alone() {
        let c = chart(&[
            ("Chart.yaml", PARENT),
            (
                "values.yaml",
                "a: {x: 1, deep: {y: 2}}\nc: {k: parent, t: {p: 1}, global: {g: {h: 1}}}\nglobal: {g: {i: 2}, s: 1}\n",
            ),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "charts/c/values.yaml",
                "k: child\nenabled: true\nt: {p: 0, q: {r: 1}}\nglobal: {g: {j: 3}}\n",
            ),
        ]);
        let before = defaults(&c);
        for user in [
            "{}",
            "a: {deep: {z: 3}}\nc: {t: {q: {s: 2}}}\n",
            "a: {x: null}\nc: {t: null, global: {g: {h: 9}}}\nglobal: {g: {k: 1}}\n",
        ] {
            let mut c = c.clone();
            let user = crate::yaml::parse_value(user).unwrap();
            let shared = coalesce_values_shared(&c, &user);
            assert_eq!(defaults(&c), before);
            assert_eq!(json(&shared), json(&coalesce_values(&mut c, &user)));
        }
        // The render's coalesce moved the copy's defaults (the clone shares their maps, so it copied them instead):
        // the original still has its own.
        assert_eq!(defaults(&c), before);
        let mut c = chart(&[
            ("Chart.yaml", PARENT),
            (
                "values.yaml",
                "fromchild: {keep: parent}\nc: {deep: {more: 5}}\n",
            ),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "charts/c/values.yaml",
                "exports: {data: {exported: 1}}\ndeep: {keep: child, more: 2}\n",
            ),
        ]);
        let child = json(&c.subcharts[0].values);
        process_import_values(&mut c);
        assert_eq!(json(&c.subcharts[0].values), child);
        assert_eq!(
            json(&c.values),
            r#"{"c":{"deep":{"keep":"child","more":5},"exports":{"data":{"exported":1}},"global":{}},"exported":1,"fromchild":{"keep":"parent","more":5}}"#
        );
    }

    /// The render's coalesce, which moves the defaults into the values, gives the copying coalesce's values, and
    /// every map of them is their own even where the defaults shared maps (an import shares a subchart's exported
    /// table with the parent's values; aliases of one subchart share its defaults).
    #[test]
    fn moving_coalesce_gives_the_copying_values_with_maps_of_their_own() {
        let files = [
            (
                "Chart.yaml",
                "apiVersion: v2\nname: p\nversion: 1.0.0\ndependencies:\n- name: c\n  version: 1.0.0\n  import-values:\n  - data\n- name: c\n  version: 1.0.0\n  alias: other\n",
            ),
            ("values.yaml", "top: {a: {b: 1}}\nglobal: {g: {h: 1}}\n"),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "charts/c/values.yaml",
                "exports: {data: {shared: {x: 1}}}\nown: {y: [1, {z: 2}]}\n",
            ),
        ];
        let user = crate::yaml::parse_value("top: {a: {c: 2}}\n").unwrap();
        let mut c = chart(&files);
        process_dependencies(&mut c, &user);
        process_import_values(&mut c);
        let copied = {
            let dest = deep_copy(&user);
            Coalescer::new(Mode::Copying).coalesce(&c, &chart_map(&dest), false);
            json(&dest)
        };
        let moved = coalesce_values(&mut c, &user);
        assert_eq!(json(&moved), copied);
        assert!(copied.contains(r#""shared":{"x":1}"#), "{copied}");
        // Every map is reached once: changing each through one path shows nowhere else.
        let mut seen = std::collections::HashSet::new();
        fn walk(v: &Value, seen: &mut std::collections::HashSet<usize>) {
            if let Some(m) = as_map(v) {
                assert!(seen.insert(Arc::as_ptr(&m) as usize), "a map reached twice");
                for x in m.snapshot().values() {
                    walk(x, seen);
                }
            } else if let Ok(items) = v.try_iter() {
                for x in items {
                    walk(&x, seen);
                }
            }
        }
        walk(&moved, &mut seen);
        assert!(seen.len() > 10, "{}", seen.len());
        assert_eq!(json(&c.values), "{}");
    }

    /// Subcharts no entry names come first, then one per entry in order: a subchart two entries name is there
    /// twice under their aliases, each with its own values; a disabled alias is left out.
    #[test]
    fn aliases_select_a_subchart_once_per_entry() {
        let chart_yaml = "apiVersion: v2\nname: p\nversion: 1.0.0\ndependencies:\n- name: c\n  version: 1.0.0\n  alias: one\n- name: c\n  version: 1.0.0\n  alias: two\n  condition: two.enabled\n- name: c\n  version: 1.0.0\n  alias: three\n- name: d\n  version: 1.0.0\n";
        let files = [
            ("Chart.yaml", chart_yaml),
            ("values.yaml", "one: {k: 1}\n"),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            ("charts/c/values.yaml", "k: 0\n"),
            (
                "charts/d/Chart.yaml",
                "apiVersion: v2\nname: d\nversion: 1.0.0\n",
            ),
            (
                "charts/u/Chart.yaml",
                "apiVersion: v2\nname: u\nversion: 1.0.0\n",
            ),
        ];
        let names =
            |c: &Chart| -> Vec<String> { c.subcharts.iter().map(|s| s.name.clone()).collect() };
        let mut c = chart(&files);
        process_dependencies(&mut c, &map_value(Default::default()));
        assert_eq!(names(&c), ["u", "one", "two", "three", "d"]);
        let v = coalesce_values(&mut c, &map_value(Default::default()));
        let m = as_map(&v).unwrap();
        assert_eq!(json(&m.get("one").unwrap()), r#"{"global":{},"k":1}"#);
        assert_eq!(json(&m.get("three").unwrap()), r#"{"global":{},"k":0}"#);
        let mut c = chart(&files);
        process_dependencies(
            &mut c,
            &crate::yaml::parse_value("two: {enabled: false}").unwrap(),
        );
        assert_eq!(names(&c), ["u", "one", "three", "d"]);
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
        let v = coalesce_values(&mut c, &map_value(Default::default()));
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
