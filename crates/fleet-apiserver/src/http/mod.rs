//! The HTTP side of a request: which resource a path names ([`route`]) and the decoded request a handler gets
//! ([`request`]): verb, body, query, user.

pub(crate) mod request;
pub(crate) mod route;
