//! Test helpers shared by the runtime crates' tests, used only as a dev-dependency: embedded API servers
//! with Fleet's CRDs installed ([`cluster`]), real git repositories made with `git` in temp dirs ([`git`]),
//! bounded waits on conditions ([`wait`]), Fleet objects read back for assertions ([`fleet`]), a stand-in
//! ssh client for the ssh transport ([`ssh`]), directory trees copied for tests and benches ([`files`]), and GitHub's webhook
//! signature ([`webhook`]).
//! Nothing here mocks a component: tests talk to the real API server through the real kube client.

pub mod cluster;
pub mod files;
pub mod fleet;
pub mod git;
pub mod ssh;
pub mod wait;
pub mod webhook;

pub use cluster::TestCluster;
pub use files::copy_dir;
pub use fleet::{bundle_deployments, bundle_resources, report_ready, secret_data};
pub use git::{GitFixture, run_git};
pub use wait::{eventually, gone};
pub use webhook::github_signature;
