//! Our output against `helm template` goldens committed under `testdata/helm/` (a representative subset of the
//! corpus: plain charts, library charts, subcharts, schemas, `fail`/`required` errors, hooks, random values).
//! Every combination must be byte-identical (outside lines where two helm runs differ) or fail where helm fails.

mod support;

use std::path::PathBuf;

#[test]
fn committed_goldens_match() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/helm");
    let combos = support::combinations(&root.join("charts"));
    assert!(
        combos.len() >= 20,
        "expected the committed chart subset, found {} combinations",
        combos.len()
    );
    let mut failures = Vec::new();
    for (chart, set, dir, values) in &combos {
        let (status, detail, _) =
            support::check(&root.join("goldens"), chart, set, dir, values.as_deref());
        if !status.starts_with("match") {
            failures.push(format!("{status} {chart}/{set}{detail}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} combinations differ:\n{}",
        failures.len(),
        combos.len(),
        failures.join("\n")
    );
}
