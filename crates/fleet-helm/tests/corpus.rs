//! The full-corpus comparison with real `helm template` output. Runs only when `FLEET_HELM_CORPUS` (charts and
//! `<chart>.values/` sets) and `FLEET_HELM_GOLDENS` (`<chart>/<set>.yaml` or `.err`, from
//! `scripts/helm-goldens.sh`) are set — `scripts/helm-corpus.sh` sets both; it prints the match rate and, with
//! `FLEET_HELM_MIN_RATE`, fails below that rate.

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
    let mut total = 0;
    let mut matched = 0;
    for (chart, set, dir, values) in support::combinations(&corpus) {
        let golden_ok = goldens.join(&chart).join(format!("{set}.yaml"));
        let golden_err = goldens.join(&chart).join(format!("{set}.err"));
        let ours = support::render(&dir, values.as_deref());
        total += 1;
        let status = match (&ours, std::fs::read_to_string(&golden_ok)) {
            (Ok(o), Ok(g)) if *o == g => "match",
            (Err(_), Err(_)) if golden_err.exists() => "match (both fail)",
            (Ok(_), Ok(_)) => "DIFF",
            (Err(_), Ok(_)) => "OUR ERROR",
            (Ok(_), Err(_)) => "HELM ERROR ONLY",
            (Err(_), Err(_)) => "NO GOLDEN",
        };
        if status.starts_with("match") {
            matched += 1;
        }
        let detail = match &ours {
            Err(e) if status != "match (both fail)" => {
                format!(": {}", e.lines().next().unwrap_or(""))
            }
            _ => String::new(),
        };
        println!("{status:16} {chart}/{set}{detail}");
        if let (Some(d), Ok(o)) = (&out_dir, &ours) {
            let p = d.join(&chart);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join(format!("{set}.yaml")), o).unwrap();
        }
    }
    let rate = if total == 0 {
        0.0
    } else {
        100.0 * matched as f64 / total as f64
    };
    println!("helm corpus: {matched}/{total} byte-identical ({rate:.1}%)");
    if let Ok(min) = std::env::var("FLEET_HELM_MIN_RATE") {
        let min: f64 = min.parse().unwrap_or(0.0);
        assert!(
            rate >= min,
            "match rate {rate:.1}% below the required {min}%"
        );
    }
}
