//! `fleet test`: placeholder until its owner wires it (see the crate's issue).

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`fleet test` is not implemented yet")
}
