//! Link options for the `fleet` binary that cut its start-up time (short commands such as `fleet helm template`
//! run in a few milliseconds, so the dynamic loader's work is a visible share of them).
//!
//! On Linux with glibc the binary is linked with `-z pack-relative-relocs` (DT_RELR): its ~68,000 relative
//! relocations, a 1.6 MB `RELA` table the loader reads and applies at every start, become a table of a few
//! kilobytes that is applied in one tight loop. The binary stays position-independent, so ASLR is kept; a
//! non-PIE link would remove the relocations entirely but load the server binary at a fixed address, which we do not
//! want for a process that serves the network. Needs glibc 2.36+ at run time (Debian 12, the Dockerfile's base) and
//! GNU ld 2.38+ or lld 15+ (rustc's bundled lld) at link time.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
