//! Who is asking and whether they may: bearer tokens and client certificates ([`authenticate`]), ServiceAccount
//! tokens the server issues ([`tokens`]), RBAC ([`rbac`], with the default roles of [`rbac_defaults`]), and the
//! TokenReview/SubjectAccessReview APIs ([`reviews`]).

pub(crate) mod authenticate;
pub(crate) mod rbac;
pub(crate) mod rbac_defaults;
pub(crate) mod reviews;
pub(crate) mod signing_key;
pub(crate) mod tokens;
