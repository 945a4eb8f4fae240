//! The `fleet` binary: parses the command line and dispatches to subcommands.

fn main() {
    println!("fleet: not yet wired");
}
