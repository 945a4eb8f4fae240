//! Compatibility with `kubectl kustomize`: every fixture under `testdata/kustomize` is built in memory and
//! compared with the golden that the real kubectl produced (`scripts/kustomize-goldens.sh`). Prints the match
//! rates and fails when they drop below what has been reached, so that regressions show.

mod support;

use fleet_kustomize::{Options, build};
use serde_json::Value;

/// Lowest accepted share of successful fixtures whose objects equal kubectl's, in order.
const MIN_OBJECT_MATCH: f64 = 45.0 / 46.0;

#[test]
fn goldens_match_kubectl_kustomize() {
    let fixtures = support::fixtures();
    assert!(
        fixtures.len() >= 30,
        "expected at least 30 fixtures, found {}",
        fixtures.len()
    );
    let (mut total, mut objects_ok) = (0usize, 0usize);
    let mut failures = Vec::new();
    for f in &fixtures {
        let result = build(&f.files, &f.build_dir, &Options::default());
        match (&f.expected, &f.expected_err, result) {
            (Some(expected), _, Ok(objects)) => {
                total += 1;
                let want = fleet_yaml::parse::documents(expected, "golden").expect("golden parses");
                if want == objects {
                    objects_ok += 1;
                } else {
                    failures.push(format!(
                        "{}: objects differ\n{}",
                        f.name,
                        diff(&want, &objects)
                    ));
                }
            }
            (Some(_), _, Err(e)) => {
                total += 1;
                failures.push(format!("{}: kubectl succeeds but we fail: {e}", f.name));
            }
            (None, Some(_), Ok(_)) => {
                failures.push(format!("{}: kubectl fails but we succeed", f.name))
            }
            (None, Some(_), Err(_)) => {}
            (None, None, _) => failures.push(format!(
                "{}: no golden; run scripts/kustomize-goldens.sh",
                f.name
            )),
        }
    }
    let rate = objects_ok as f64 / total.max(1) as f64;
    println!(
        "kustomize goldens: {objects_ok}/{total} object-identical ({:.1}%)",
        rate * 100.0
    );
    for fl in &failures {
        println!("--- {fl}");
    }
    assert!(
        rate >= MIN_OBJECT_MATCH,
        "object match rate {rate:.3} fell below {MIN_OBJECT_MATCH}"
    );
    let error_mismatches: Vec<_> = failures
        .iter()
        .filter(|f| f.contains("kubectl fails but we succeed") || f.contains("no golden"))
        .collect();
    assert!(error_mismatches.is_empty(), "{error_mismatches:#?}");
}

fn diff(want: &[Value], got: &[Value]) -> String {
    let mut out = String::new();
    for i in 0..want.len().max(got.len()) {
        let (a, b) = (want.get(i), got.get(i));
        if a != b {
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
