//! Names of what a Cluster brings along on the hub: its cluster namespace and its import token.

use fleet_bundle::names::{key_hash, safe_concat_name};

/// Prefix of the import token's name (Fleet's `ImportTokenPrefix`): the import
/// ([`super::import`]) creates it, the leave ([`super::leave`]) deletes it.
pub const IMPORT_TOKEN_PREFIX: &str = "import-token-";

/// Fleet's cluster namespace name: `cluster-<ns>-<name>-<KeyHash(ns::name)>`, cut as SafeConcatName cuts.
pub fn cluster_namespace(namespace: &str, name: &str) -> String {
    safe_concat_name(&[
        "cluster",
        namespace,
        name,
        &key_hash(&format!("{namespace}::{name}")),
    ])
}
