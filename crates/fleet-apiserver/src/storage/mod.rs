//! What is stored and how: the versioned object store with watches ([`store`]), its journal on disk ([`persist`]),
//! object accessors ([`object`]), label and field selectors ([`selectors`]), and managedFields bookkeeping
//! ([`managed`], [`fieldset`]).

pub(crate) mod fieldset;
pub(crate) mod key;
pub(crate) mod managed;
pub(crate) mod object;
pub(crate) mod persist;
pub(crate) mod selectors;
pub(crate) mod store;
