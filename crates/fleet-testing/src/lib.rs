//! Test helpers shared by the runtime crates' tests, used only as a dev-dependency: embedded API servers
//! with Fleet's CRDs installed ([`cluster`]), real git repositories made with `git` in temp dirs ([`git`]), and
//! bounded waits on conditions ([`wait`]), Fleet objects read back for assertions ([`fleet`]), and a stand-in
//! ssh client for the ssh transport ([`ssh`]).
//! Nothing here mocks a component: tests talk to the real API server through the real kube client.

pub mod cluster;
pub mod fleet;
pub mod git;
pub mod ssh;
pub mod wait;

pub use cluster::TestCluster;
pub use fleet::bundle_deployments;
pub use git::{GitFixture, run_git};
pub use wait::eventually;
