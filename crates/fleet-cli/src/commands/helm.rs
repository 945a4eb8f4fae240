//! `fleet helm …`: placeholder until its owner wires it (see the crate's issue).

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Render a chart's templates like `helm template`.
    Template {},
}

pub fn run(_cmd: Command) -> anyhow::Result<()> {
    anyhow::bail!("`fleet helm template` is not implemented yet")
}
