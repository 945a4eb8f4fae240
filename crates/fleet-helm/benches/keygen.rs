//! RSA key generation as a chart meets it: `genCA` (a 2048-bit key and a self-signed certificate) rendered through
//! the template engine, once per seed, so the figures include sieving, Miller–Rabin, key assembly and signing.
//! Prints the mean and median wall time per key, the mean process CPU time per key (both threads of the prime
//! search) and how far wall time is from CPU/2 on two cores. Asserts nothing.
//!
//! Prime search time is geometric: one key can take five times the mean, so compare means over many keys.
//!
//! `cargo bench -p fleet-helm --bench keygen`; `BENCH_KEYS` sets how many keys (default 200).

// Each bench uses one of its two readers.
#[allow(dead_code)]
mod cpu;

use std::time::{Duration, Instant};

use fleet_helm::TemplateSet;
use fleet_helm::funcs::{Funcs, Rng};
use fleet_helm::template::exec::Exec;

/// The `fleet` binary's allocator, as in the render bench.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let keys: u64 = std::env::var("BENCH_KEYS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(200)
        .max(1);
    let mut set = TemplateSet::new();
    set.add_file("ca", "{{ (genCA \"bench-ca\" 365).Key }}")
        .expect("the bench template parses");
    let mut walls = Vec::new();
    let cpu_before = cpu::own();
    for seed in 0..keys {
        let mut ex = Exec::new(&set, Funcs::helm());
        ex.rng = Rng::seeded(seed);
        let start = Instant::now();
        let out = ex
            .execute("ca", &fleet_helm::Value::from(()))
            .expect("genCA renders");
        walls.push(start.elapsed());
        assert!(out.contains("RSA PRIVATE KEY"), "{out}");
    }
    let cpu = cpu::own()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    let total: Duration = walls.iter().sum();
    walls.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean_wall = ms(total) / keys as f64;
    println!(
        "genCA, 2048-bit RSA, {keys} seeded keys: wall mean {mean_wall:.2} ms, median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        ms(walls[walls.len() / 2]),
        ms(walls[walls.len() * 9 / 10]),
        ms(walls[walls.len() - 1]),
    );
    if let Some(cpu) = cpu {
        let mean_cpu = ms(cpu) / keys as f64;
        println!(
            "CPU mean {mean_cpu:.2} ms per key; wall / (CPU / 2) = {:.2} (1.00: both cores busy the whole time)",
            mean_wall / (mean_cpu / 2.0)
        );
    }
}
