//! The state every request and background task shares: the served kinds, the store, authentication, the
//! ServiceAccount token key, the garbage collector's queue and the server's configuration. Handlers, lifecycle
//! and auth modules take it; the server owns it.

use crate::auth::authenticate::Authenticator;
use crate::auth::signing_key::SigningKey;
use crate::kinds::registry::Registry;
use crate::lifecycle::queue::Collector;
use crate::server::config::Config;
use crate::storage::store::Store;

pub(crate) struct Inner {
    pub registry: Registry,
    pub store: Store,
    pub auth: Authenticator,
    pub config: Config,
    pub admin_token: Option<String>,
    pub signing_key: SigningKey,
    /// PEM of the CA that signed the serving certificate, when serving TLS.
    pub ca_pem: Option<String>,
    pub gc: Collector,
}
