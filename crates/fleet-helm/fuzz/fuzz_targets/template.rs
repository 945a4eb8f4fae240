//! Fuzzes the Go-template parser and evaluator: any input must parse or fail with an error, and execution must
//! stop within its fuel — never panic or hang. Run with `scripts/helm-fuzz.sh [SECONDS]` (nightly and cargo-fuzz).
#![no_main]

use fleet_helm::funcs::Funcs;
use fleet_helm::template::TemplateSet;
use fleet_helm::template::exec::Exec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut set = TemplateSet::new();
    if set.add_file("fuzz", src).is_err() {
        return;
    }
    let values = fleet_helm::yaml::parse_value("a: {b: [1, x, {c: true}]}\nn: 3\ns: text")
        .unwrap_or_default();
    let mut exec = Exec::new(&set, Funcs::helm()).with_fuel(20_000);
    let _ = exec.execute("fuzz", &values);
});
