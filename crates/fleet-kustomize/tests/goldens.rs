//! Compatibility with `kubectl kustomize`: every fixture under `testdata/kustomize` is built in memory and
//! compared with the golden that the real kubectl produced (`scripts/kustomize-goldens.sh`), both as objects and
//! byte for byte. Prints the match rates and fails when they drop below what has been reached, so that regressions
//! show. Fixtures that kubectl rejects must be rejected here too (their messages are snapshotted in `errors.rs`).

mod support;

use fleet_kustomize::{Options, to_yaml_stream};
use serde_json::Value;

/// Lowest accepted share of successful fixtures whose objects equal kubectl's, in order.
const MIN_OBJECT_MATCH: f64 = 1.0;
/// Lowest accepted share of successful fixtures whose output is byte-identical to kubectl's.
const MIN_BYTE_MATCH: f64 = 1.0;

/// Whether a fixture needs the Helm engine (cargo feature `helm`).
fn uses_helm(f: &support::Fixture) -> bool {
    f.helm_chart.is_some()
        || f.files.iter().any(|(p, c)| {
            p.ends_with("kustomization.yaml") && String::from_utf8_lossy(c).contains("helmCharts:")
        })
}

/// Builds a fixture as `scripts/kustomize-goldens.sh` did with the real tools: a plain kustomize build, or, for
/// Fleet's helm-kustomize layout, our Helm render (`helm template rel CHART -n default --kube-version v1.33.0`)
/// post-rendered by the kustomization as Fleet does.
fn build_fixture(f: &support::Fixture) -> fleet_kustomize::Result<fleet_kustomize::Built> {
    let Some(chart) = &f.helm_chart else {
        return fleet_kustomize::build_reporting(&f.files, &f.build_dir, &Options::default());
    };
    let output = render_chart(f, chart);
    let built = fleet_kustomize::fleet::render_reporting(
        &f.files,
        &f.build_dir,
        output.as_bytes(),
        &Options::default(),
    )?;
    Ok(built.expect("the helm-kustomize fixture has a kustomization.yaml"))
}

#[cfg(feature = "helm")]
fn render_chart(f: &support::Fixture, chart: &str) -> String {
    let prefix = if chart == "." {
        String::new()
    } else {
        format!("{chart}/")
    };
    let files: fleet_helm::FileMap = f
        .files
        .iter()
        .filter_map(|(p, c)| Some((p.strip_prefix(&prefix)?.to_string(), c.clone().into())))
        .collect();
    let opts = fleet_helm::RenderOptions {
        release_name: "rel".into(),
        ..Default::default()
    };
    let user = fleet_helm::values_from_json(&serde_json::json!({}));
    fleet_helm::render_chart(files, &user, &opts)
        .unwrap_or_else(|e| panic!("{}: {e}", f.name))
        .to_helm_output()
}

#[cfg(not(feature = "helm"))]
fn render_chart(f: &support::Fixture, _chart: &str) -> String {
    unreachable!(
        "{}: helm fixtures are skipped without the helm feature",
        f.name
    )
}

/// A patch whose target matches nothing is skipped as kubectl skips it, and named in a warning.
#[cfg(feature = "helm")]
#[test]
fn helm_kustomize_layout_warns_about_a_patch_that_matches_nothing() {
    let f = support::fixtures()
        .into_iter()
        .find(|f| f.name == "fleet-helm-post-render")
        .expect("fixture");
    let built = build_fixture(&f).unwrap();
    let warnings: Vec<String> = built.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "overlays/prod/kustomization.yaml: patches: the target of overlays/prod/kustomization.yaml (patches inline \
          patch) (kind=Ingress) matches no resource; fix the target or remove the patch (skipped, as `kubectl \
          kustomize` skips it)"
        ]
    );
}

#[derive(Default)]
struct Tally {
    total: usize,
    objects: usize,
    bytes: usize,
    skipped: usize,
    failures: Vec<String>,
}

impl Tally {
    fn compare(&mut self, name: &str, expected: &str, objects: &[Value]) {
        self.total += 1;
        let options = fleet_yaml::parse::Options::kustomize();
        let want =
            fleet_yaml::parse::documents_with(&options, expected, "golden").expect("golden parses");
        if want.len() == objects.len() && want.iter().zip(objects).all(|(a, b)| same(a, b)) {
            self.objects += 1;
        } else {
            self.failures
                .push(format!("{name}: objects differ\n{}", diff(&want, objects)));
        }
        let text = to_yaml_stream(objects);
        if text == expected {
            self.bytes += 1;
        } else {
            self.failures.push(format!(
                "{name}: text differs\n{}",
                text_diff(expected, &text)
            ));
        }
    }
}

#[test]
fn goldens_match_kubectl_kustomize() {
    let fixtures = support::fixtures();
    assert!(
        fixtures.len() >= 30,
        "expected at least 30 fixtures, found {}",
        fixtures.len()
    );
    let mut t = Tally::default();
    for f in &fixtures {
        if !cfg!(feature = "helm") && uses_helm(f) {
            t.skipped += 1;
            continue;
        }
        let result = build_fixture(f).map(|b| b.objects);
        match (&f.expected, &f.expected_err, result) {
            (Some(expected), _, Ok(objects)) => t.compare(&f.name, expected, &objects),
            (Some(_), _, Err(e)) => {
                t.total += 1;
                t.failures
                    .push(format!("{}: kubectl succeeds but we fail: {e}", f.name));
            }
            (None, Some(_), Ok(_)) => t
                .failures
                .push(format!("{}: kubectl fails but we succeed", f.name)),
            (None, Some(_), Err(_)) => {}
            (None, None, _) => t.failures.push(format!(
                "{}: no golden; run scripts/kustomize-goldens.sh",
                f.name
            )),
        }
    }
    let rate = |n: usize| n as f64 / t.total.max(1) as f64;
    println!(
        "kustomize goldens: {}/{} byte-identical ({:.1}%), {}/{} object-identical ({:.1}%); {} helmCharts fixtures \
         skipped (feature `helm` off)",
        t.bytes,
        t.total,
        rate(t.bytes) * 100.0,
        t.objects,
        t.total,
        rate(t.objects) * 100.0,
        t.skipped
    );
    for fl in &t.failures {
        println!("--- {fl}");
    }
    assert!(
        rate(t.objects) >= MIN_OBJECT_MATCH,
        "object match rate fell below {MIN_OBJECT_MATCH}"
    );
    assert!(
        rate(t.bytes) >= MIN_BYTE_MATCH,
        "byte match rate fell below {MIN_BYTE_MATCH}"
    );
    let wrong_outcome: Vec<_> = t
        .failures
        .iter()
        .filter(|f| f.contains("kubectl fails but we succeed") || f.contains("no golden"))
        .collect();
    assert!(wrong_outcome.is_empty(), "{wrong_outcome:#?}");
}

/// Equal as JSON values, numbers compared by value (a golden's `2` is our `2.0` after go-yaml's round trip).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn diff(want: &[Value], got: &[Value]) -> String {
    let mut out = String::new();
    for i in 0..want.len().max(got.len()) {
        let (a, b) = (want.get(i), got.get(i));
        if !a.zip(b).is_some_and(|(a, b)| same(a, b)) {
            let show = |v: Option<&Value>| {
                v.map_or("-".to_string(), |v| {
                    serde_json::to_string(v).unwrap_or_default()
                })
            };
            out.push_str(&format!(
                "  doc {i}\n    want {}\n    got  {}\n",
                show(a),
                show(b)
            ));
        }
    }
    out
}

/// The first differing line, with context.
fn text_diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let at = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    format!(
        "  line {}\n    want {:?}\n    got  {:?}\n  (want {} lines, got {}; trailing newline: want {}, got {})",
        at + 1,
        w.get(at),
        g.get(at),
        w.len(),
        g.len(),
        want.ends_with('\n'),
        got.ends_with('\n')
    )
}
