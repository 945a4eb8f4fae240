//! What the HelmOp reconciler remembers between reconciles (a leaf: the context holds it, the reconciler
//! fills and reads it).

use std::collections::HashMap;
use std::sync::Mutex;

/// Secret copies written by this process: (namespace, name) → (owning BundleDeployment's uid, data hash).
pub type Written = Mutex<HashMap<(String, String), (String, String)>>;

/// The HelmOp reconciler's memory.
#[derive(Default)]
pub struct State {
    /// By HelmOp uid: the chart reference (repo, chart, constraint, secret name) last resolved and its
    /// version, so that a reconcile woken by a BundleDeployment does not ask the chart source again.
    pub resolved: Mutex<HashMap<String, (String, String)>>,
    /// The Secret copies written ([`super::access`]).
    pub copies: Written,
}
