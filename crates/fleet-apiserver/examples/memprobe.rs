//! Measures the resident memory of 100,000 typical stored objects held as JSON values (no server around
//! them), to separate storage cost from request garbage in the benchmark's memory figure.

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn main() {
    let before = rss_mb();
    let mut objects = Vec::new();
    for i in 0..100_000 {
        let value = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("m-{i}"),
            "namespace": "default", "uid": "0f830fc8-e340-4c01-a98d-b54149213327", "resourceVersion": i.to_string(),
            "generation": 1, "creationTimestamp": "2026-11-21T11:00:52Z", "labels": {"app": "bench", "index": i.to_string()},
            "managedFields": [{"manager": "unknown", "operation": "Update", "apiVersion": "v1", "time": "2026-11-21T11:00:52Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:key": {}, "f:other": {}},
                "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:index": {}}}}}]},
            "data": {"key": "value", "other": "some longer value here"}});
        objects.push(std::sync::Arc::new(value));
    }
    println!(
        "{} objects as JSON values: +{:.0} MB",
        objects.len(),
        rss_mb() - before
    );
}
