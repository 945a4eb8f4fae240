//! Throughput of parsing and emitting on a synthetic multi-document manifest stream (MB/s of YAML text).
//! Run: `cargo bench -p fleet-yaml --bench parse`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fleet_yaml::emit::{helm, kyaml};
use fleet_yaml::parse;

/// A stream of Deployment-like manifests, about `count` × 1.3 KB.
fn manifests(count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: team-{ns}
  labels: {{app: app-{i}, tier: backend, managed-by: fleet}}
  annotations:
    description: \"A long description of deployment number {i} that goes past the fold width of eighty columns\"
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      containers:
      - name: app
        image: registry.example.com/app:{i}.0.1
        args: [--port=8080, --verbose, \"--enabled=yes\"]
        env:
        - name: MODE
          value: \"on\"
        - name: RATIO
          value: \"0.5\"
        resources:
          limits: {{cpu: 500m, memory: 256Mi}}
          requests: {{cpu: 0.25, memory: 128Mi}}
        ports:
        - containerPort: 8080
          protocol: TCP
      volumes:
      - name: config
        configMap:
          name: app-{i}-config
          defaultMode: 0644
",
                ns = i % 7,
                replicas = i % 5 + 1
            )
        })
        .collect()
}

/// One measured operation over the whole input.
type Workload<'a> = Box<dyn FnMut() + 'a>;

/// CPU time this thread has used (Linux `schedstat`), to report figures that do not depend on machine load.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        text.split_whitespace().next()?.parse().ok()?,
    ))
}

/// Runs `f` repeatedly for about a second of CPU time; returns MB/s of `bytes` per run, by wall clock and by this
/// thread's CPU time.
fn throughput(bytes: usize, mut f: impl FnMut()) -> (f64, Option<f64>) {
    f();
    let (start, cpu_start) = (Instant::now(), thread_cpu_time());
    let mut runs = 0u32;
    loop {
        f();
        runs += 1;
        let cpu = thread_cpu_time()
            .zip(cpu_start)
            .map(|(now, then)| now - then);
        if cpu.unwrap_or_else(|| start.elapsed()) >= Duration::from_secs(1) {
            break;
        }
    }
    let total = bytes as f64 * f64::from(runs) / 1e6;
    let cpu = thread_cpu_time()
        .zip(cpu_start)
        .map(|(now, then)| total / (now - then).as_secs_f64());
    (total / start.elapsed().as_secs_f64(), cpu)
}

fn main() {
    let text = manifests(1000);
    let docs = parse::documents(&text, "bench.yaml").unwrap();
    assert_eq!(docs.len(), 1000);
    let bytes = text.len();
    println!(
        "input: {} documents, {:.2} MB",
        docs.len(),
        bytes as f64 / 1e6
    );
    let rows: [(&str, Workload); 6] = [
        (
            "serde-saphyr alone (reference)",
            Box::new(|| {
                drop(black_box(
                    serde_saphyr::from_multiple::<serde_json::Value>(&text).unwrap(),
                ))
            }),
        ),
        (
            "parse::documents",
            Box::new(|| drop(black_box(parse::documents(&text, "b.yaml").unwrap()))),
        ),
        (
            "parse::located_documents",
            Box::new(|| {
                drop(black_box(
                    parse::located_documents(&text, "b.yaml").unwrap(),
                ))
            }),
        ),
        (
            "emit::helm::to_yaml",
            Box::new(|| docs.iter().for_each(|d| drop(black_box(helm::to_yaml(d))))),
        ),
        (
            "emit::kyaml::to_yaml",
            Box::new(|| docs.iter().for_each(|d| drop(black_box(kyaml::to_yaml(d))))),
        ),
        (
            "to_json_go",
            Box::new(|| {
                docs.iter()
                    .for_each(|d| drop(black_box(fleet_yaml::to_json_go(d))))
            }),
        ),
    ];
    println!("{:<32} {:>10} {:>10}", "", "wall MB/s", "CPU MB/s");
    for (name, f) in rows {
        let (wall, cpu) = throughput(bytes, f);
        let cpu = cpu.map_or("-".to_string(), |c| format!("{c:.1}"));
        println!("{name:<32} {wall:>10.1} {cpu:>10}");
    }
}
