//! Test helpers shared by the runtime crates' tests, used only as a dev-dependency: embedded API servers
//! with Fleet's CRDs installed ([`cluster`]) and real git repositories made with `git` in temp dirs ([`git`]).
//! Nothing here mocks a component: tests talk to the real API server through the real kube client.

pub mod cluster;
pub mod git;

pub use cluster::TestCluster;
pub use git::{GitFixture, run_git};
