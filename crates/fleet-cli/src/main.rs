//! The `fleet` binary: parses the command line and dispatches to one module per subcommand.

mod commands;

use clap::Parser;

/// mimalloc instead of glibc's malloc: the API server's writes run about twice as fast with it, and so does
/// every request-heavy command (measured by `cargo bench -p fleet-apiserver --bench apiserver`).
///
/// It is mimalloc's v2 line (the workspace turns on the crate's `v2` feature), not the crate's v3 default:
/// `fleet helm template` touched 2–6 fewer 2 MB pages per chart and used 10–20% less CPU on every chart measured
/// (interleaved runs on an idle machine, e.g. wordpress 23.6 against 27.9 ms, redis 17.9 against 20.9, hello-world
/// 3.2 against 3.8). The API server bench gave the same figures within its run-to-run spread (in-process creates
/// perhaps 10% slower), and the controller's scale bench too (50,000 BundleDeployments created in 19.6–26.7 s,
/// controller peak RSS 156–190 MiB; v3 gave 19.2–25.4 s and 175–198 MiB).
///
/// mimalloc's transparent huge pages stay on (its `no_thp` feature is off) although zeroing the first 2 MB pages is
/// most of a trivial command's start-up (about 0.5 ms of `fleet --version`'s 2.5–3 ms of CPU): without them a big
/// chart takes a 4 KB page fault per page of heap, and `fleet helm template` of kyverno or kube-prometheus-stack
/// used 25–45% more CPU (measured with `MIMALLOC_ALLOW_THP=0`). A trivial command touches three 2 MB pages (the
/// arena's metadata, its first pages, one more), so huge pages off from the start would save about 0.3 ms of
/// `fleet helm template` of hello-world, but cost 1.3 ms on grafana and 3.7 ms on keda, whose heaps fill their pages
/// (4 KB faults are expensive on a VM). So they stay on for every chart.
///
/// mimalloc is compiled with 128 KiB medium pages instead of 512 KiB (`MI_MEDIUM_PAGE_SHIFT=17`, set as `CFLAGS` in
/// `.cargo/config.toml`): objects of 8–16 KiB share 128 KiB pages per size class, and objects of 16–64 KiB get a page
/// of their own in 64 KiB steps. A render allocates only a few objects in each of a dozen medium classes (template
/// sources, parsed-code stores, token and line vectors), and with 512 KiB pages each class spread the heap over
/// another part of a 2 MB huge page the kernel zeroes whole. 2 MB pages touched per `fleet helm template`: kafka 5 →
/// 3, wordpress 5 → 3, ingress-nginx 4 → 2, prometheus 4 → 3, kube-prometheus-stack 13 → 12; CPU per process
/// (median of interleaved batches) kafka 9.5 → 8.6 ms, prometheus 9.4 → 8.1 ms. The API server bench gave the same
/// rates and memory within its spread.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
