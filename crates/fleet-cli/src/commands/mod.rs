//! The subcommands of `fleet`, one module each, and the dispatch between them.

mod agent;
mod apiserver;
mod apply;
mod bundle_input;
mod chart_source;
mod controller;
mod dev;
mod helm;
mod logging;
mod target;
mod test;
mod yaml_out;

use clap::{Parser, Subcommand};

/// Declarative GitOps for fleets of Kubernetes clusters, compatible with Rancher Fleet.
#[derive(Debug, Parser)]
#[command(name = "fleet", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Render bundle directories into Bundle resources (offline with `-o`).
    Apply(apply::Args),
    /// Show which target a bundle matches and the objects it would deploy there.
    Test(test::Args),
    /// Show, offline, which clusters each bundle lands on and why the others do not.
    #[command(long_about = target::LONG_ABOUT)]
    Target(target::Args),
    /// Render Helm charts like `helm`, without Helm.
    #[command(subcommand)]
    Helm(helm::Command),
    /// Run the embedded Kubernetes-compatible API server.
    Apiserver(apiserver::Args),
    /// Run the hub controller: GitRepos → Bundles → BundleDeployments, with status and webhooks.
    Controller(controller::Args),
    /// Run the downstream agent: deploy this cluster's BundleDeployments from the hub.
    Agent(agent::Args),
    /// Dev mode: hub, controller, local agent and simulated clusters in one process, with a live view.
    Dev(dev::Args),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Apply(args) => apply::run(args),
        Command::Test(args) => test::run(args),
        Command::Target(args) => target::run(args),
        Command::Helm(cmd) => helm::run(cmd),
        Command::Apiserver(args) => apiserver::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Controller(args) => controller::run(args),
        Command::Dev(args) => dev::run(args),
    }
}
