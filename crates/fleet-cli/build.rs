//! Link options for the `fleet` binary that cut its start-up time (short commands such as `fleet helm template`
//! run in a few milliseconds, so the dynamic loader's work is a visible share of them).
//!
//! On Linux with glibc the binary is linked as a fixed-address executable (`-no-pie`), as Go links `helm`,
//! `kubectl` and Rancher Fleet's own binaries. A position-independent `fleet` carries about 1.2 MB of pointers in
//! `.data.rel.ro` (vtables, panic locations, string tables) that the loader must relocate at every start: about 300
//! copy-on-write page faults, 1.3–2 ms of CPU per process on our 2-core VM (`fleet helm template` of hello-world
//! took 4.3 ms of CPU as PIE, 2.9 ms without). The cost is ASLR for the executable image only; the heap, the
//! stacks, the shared libraries and every other mapping stay randomised.
//!
//! The objects stay position-independent code (rustc's default), which links as a fixed-address executable as is.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
