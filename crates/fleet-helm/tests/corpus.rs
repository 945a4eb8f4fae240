//! The full-corpus comparison with real `helm template` output. Runs only when `FLEET_HELM_CORPUS` (charts and
//! `<chart>.values/` sets) and `FLEET_HELM_GOLDENS` (from `scripts/helm-goldens.sh`) are set —
//! `scripts/helm-corpus.sh` sets both. It prints one line per combination and the match rate and, with
//! `FLEET_HELM_MIN_RATE`, fails below that rate. `FLEET_HELM_OUT` keeps our outputs for diffing.

mod support;

use std::path::PathBuf;

#[test]
fn corpus_match_rate() {
    let (Ok(corpus), Ok(goldens)) = (
        std::env::var("FLEET_HELM_CORPUS"),
        std::env::var("FLEET_HELM_GOLDENS"),
    ) else {
        eprintln!("FLEET_HELM_CORPUS/FLEET_HELM_GOLDENS not set; run scripts/helm-corpus.sh");
        return;
    };
    let corpus = PathBuf::from(corpus);
    let goldens = PathBuf::from(goldens);
    let out_dir = std::env::var("FLEET_HELM_OUT").ok().map(PathBuf::from);
    let (mut total, mut exact, mut masked, mut both_fail) = (0, 0, 0, 0);
    for (chart, set, dir, values) in support::combinations(&corpus) {
        let (status, detail, ours) =
            support::check(&goldens, &chart, &set, &dir, values.as_deref());
        total += 1;
        match status {
            "match" => exact += 1,
            "match-masked" => masked += 1,
            "match-error" => both_fail += 1,
            _ => {}
        }
        println!("{status:12} {chart}/{set}{detail}");
        if let (Some(d), Ok(o)) = (&out_dir, &ours) {
            let p = d.join(&chart);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join(format!("{set}.yaml")), o).unwrap();
        }
    }
    let matched = exact + masked + both_fail;
    let rate = if total == 0 {
        0.0
    } else {
        100.0 * matched as f64 / total as f64
    };
    println!(
        "helm corpus: {matched}/{total} match ({rate:.1}%): {exact} byte-identical, {masked} identical outside \
         random values, {both_fail} fail like helm"
    );
    if let Ok(min) = std::env::var("FLEET_HELM_MIN_RATE") {
        let min: f64 = min.parse().unwrap_or(0.0);
        assert!(
            rate >= min,
            "match rate {rate:.1}% below the required {min}%"
        );
    }
}
