//! What happens after a write, as kube-controller-manager does it: deletion with finalizers and propagation
//! ([`deletion`]), the garbage collector ([`gc`]), namespace termination ([`namespaces`]) and ownerReference scope
//! checks ([`owner_scope`]).

pub(crate) mod deletion;
pub(crate) mod gc;
pub(crate) mod namespaces;
pub(crate) mod owner_scope;
pub(crate) mod queue;
