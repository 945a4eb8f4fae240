//! `fleet apiserver`: runs the embedded Kubernetes-compatible API server over HTTPS (CA and serving
//! certificate generated on first start and kept in the data dir) or, on loopback only, plain HTTP, and
//! writes a kubeconfig that kubectl and kube-rs accept.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use fleet_apiserver::standalone::{self, Options};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Keep objects, certificates and the admin token here; without it everything lives in memory.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Write a kubeconfig for this server (admin credentials) to this file.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Serve plain HTTP instead of HTTPS (only allowed on a loopback address).
    #[arg(long)]
    plain_http: bool,
    /// How many watch events to keep for resuming watches.
    #[arg(long, default_value_t = 10_000)]
    watch_history: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let options = Options {
        listen: args.listen,
        data_dir: args.data_dir,
        kubeconfig_out: args.kubeconfig_out,
        plain_http: args.plain_http,
        watch_history: args.watch_history,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(standalone::run(options))?;
    Ok(())
}
