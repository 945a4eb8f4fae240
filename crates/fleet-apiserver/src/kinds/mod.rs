//! The kinds served and their rules: the registry of resource types ([`registry`]) filled with the built-in kinds
//! ([`builtin`], [`core_kinds`], schemas in [`builtin_schema`]) and CRDs ([`crd`]); defaulting ([`defaults`]),
//! validation ([`validate`]), strategic-merge schemas ([`strategic`]) and protobuf decoding ([`protobuf`]).

pub(crate) mod builtin;
pub(crate) mod builtin_schema;
pub(crate) mod core_kinds;
pub(crate) mod crd;
pub(crate) mod defaults;
pub(crate) mod protobuf;
pub(crate) mod registry;
pub(crate) mod strategic;
pub(crate) mod validate;
