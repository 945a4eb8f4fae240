//! The server handle: shared state (registry, store, authentication), the axum `Router` that dispatches every
//! request, and helpers to serve it over TCP or hand it to `kube::Client` in-process.

pub mod config;
pub(crate) mod kubeconfig;
pub mod tls;

pub use config::Config;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Method, Uri};
use serde_json::Value;

use crate::auth::authenticate::{Authenticator, User};
use crate::error::{ApiError, ApiResult};
use crate::handlers;
use crate::http::request::{MAX_BODY, Query, Request};
use crate::http::route::{self, Route};
use crate::kinds::registry::Registry;
use crate::state::Inner;
use crate::storage::persist::Journal;
use crate::storage::store::Store;
use crate::{handlers::discovery, handlers::openapi, kinds::crd, lifecycle::namespaces};

/// Failure to start a server.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open the data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A Kubernetes-compatible API server. Cheap to clone; all clones share state.
#[derive(Clone)]
pub struct ApiServer {
    pub(crate) inner: Arc<Inner>,
}

impl ApiServer {
    /// An in-memory server with default settings.
    pub fn in_memory() -> Self {
        Self::new(Config::default()).expect("an in-memory server has nothing to open")
    }

    pub fn new(config: Config) -> Result<Self, StartError> {
        let mut recovered = None;
        let journal = match &config.data_dir {
            Some(dir) => {
                let (journal, rec) = Journal::open(dir).map_err(|source| StartError::DataDir {
                    path: dir.clone(),
                    source,
                })?;
                recovered = Some(rec);
                Some(journal)
            }
            None => None,
        };
        let store = Store::new(config.watch_history, journal);
        let auth = Authenticator::new(config.require_auth);
        let admin_token = match (&config.admin_token, config.require_auth) {
            (Some(token), _) => Some(token.clone()),
            (None, true) => Some(
                crate::auth::authenticate::load_or_create_admin_token(config.data_dir.as_deref())
                    .map_err(|source| StartError::DataDir {
                    path: config.data_dir.clone().unwrap_or_default(),
                    source,
                })?,
            ),
            (None, false) => None,
        };
        if let Some(token) = &admin_token {
            auth.add_token(token.clone(), User::admin());
        }
        let signing_key =
            crate::auth::signing_key::SigningKey::load_or_create(config.data_dir.as_deref())
                .map_err(|source| StartError::DataDir {
                    path: config.data_dir.clone().unwrap_or_default(),
                    source,
                })?;
        let ca_pem = config.ca_pem.clone();
        crate::kinds::builtin_schema::prepare_in_background();
        let (gc, gc_work) = crate::lifecycle::queue::Collector::new();
        let server = ApiServer {
            inner: Arc::new(Inner {
                registry: Registry::with_types(crate::kinds::builtin::resource_types()),
                store,
                auth,
                config,
                admin_token,
                signing_key,
                ca_pem,
                gc,
            }),
        };
        crate::lifecycle::gc::start(Arc::downgrade(&server.inner), gc_work);
        if let Some(rec) = recovered {
            server.inner.store.restore(rec.rv, rec.objects);
            crd::register_all(&server.inner);
            crate::lifecycle::gc::resume(&server.inner);
        }
        namespaces::ensure_defaults(&server.inner);
        crate::auth::rbac_defaults::ensure(&server.inner);
        Ok(server)
    }

    /// The admin bearer token, when one is set.
    pub fn admin_token(&self) -> Option<&str> {
        self.inner.admin_token.as_deref()
    }

    /// The axum router serving the whole API.
    pub fn router(&self) -> axum::Router {
        axum::Router::new()
            .fallback(dispatch)
            .with_state(self.clone())
    }

    /// The whole API as a plain tower service: what [`ApiServer::router`] serves, without axum's routing
    /// (one route matched, one route built and dropped per request). The in-process clients and the
    /// listeners use it.
    pub fn service(&self) -> ApiService {
        ApiService {
            server: self.clone(),
        }
    }

    /// A kube client talking to this server in-process (as the admin).
    pub fn client(&self) -> kube::Client {
        self.client_as(self.admin_token())
    }

    /// A kube client talking to this server in-process with a bearer token (e.g. a ServiceAccount token
    /// from TokenRequest); `None` sends no token.
    pub fn client_with_token(&self, token: &str) -> kube::Client {
        self.client_as(Some(token))
    }

    fn client_as(&self, token: Option<&str>) -> kube::Client {
        let token = token.map(str::to_string);
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut req: http::Request<kube::client::Body>| {
                if let Some(token) = &token
                    && let Ok(value) = format!("Bearer {token}").parse()
                {
                    req.headers_mut().insert(http::header::AUTHORIZATION, value);
                }
                req
            })
            .service(self.service());
        kube::Client::new(service, "default")
    }

    /// Number of stored objects.
    pub fn object_count(&self) -> usize {
        self.inner.store.object_count()
    }

    /// Serves plain HTTP on `listener` until the future is dropped.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        use axum::serve::ListenerExt;
        // Small responses go out at once, as kube-apiserver's (Go sets TCP_NODELAY by default).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(
            listener,
            axum::ServiceExt::<http::Request<Body>>::into_make_service(self.service()),
        )
        .await
    }

    /// Serves HTTPS on `listener` with `certs` until the future is dropped.
    pub async fn serve_tls(
        self,
        listener: tokio::net::TcpListener,
        certs: &crate::server::tls::Certificates,
    ) -> std::io::Result<()> {
        let config = certs.server_config().map_err(std::io::Error::other)?;
        let tls = crate::server::tls::TlsListener::new(listener, config)?;
        axum::serve(
            tls,
            axum::ServiceExt::<http::Request<Body>>::into_make_service(self.service()),
        )
        .await
    }

    /// A kubeconfig (kubectl and kube-rs read it) for `server_url`, with the admin token and, for
    /// HTTPS, the CA this server was configured with.
    pub fn kubeconfig(&self, server_url: &str) -> String {
        let ca = server_url
            .starts_with("https://")
            .then_some(self.inner.ca_pem.as_deref())
            .flatten();
        crate::server::kubeconfig::render(server_url, ca, self.admin_token(), "default")
    }

    /// Binds 127.0.0.1 on a free port and serves plain HTTP in a background task.
    pub async fn spawn_loopback(&self) -> std::io::Result<SocketAddr> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(self.clone().serve(listener));
        Ok(addr)
    }
}

/// See [`ApiServer::service`].
#[derive(Clone)]
pub struct ApiService {
    server: ApiServer,
}

impl<B> tower::Service<http::Request<B>> for ApiService
where
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        use futures::FutureExt;
        let (parts, body) = req.into_parts();
        let server = State(self.server.clone());
        dispatch(
            server,
            parts.method,
            parts.uri,
            parts.headers,
            Body::new(body),
        )
        .map(Ok)
        .boxed()
    }
}

/// Every request: a handler that panics (a bug) still gets a 500 Status, never a dropped connection.
async fn dispatch(
    State(server): State<ApiServer>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    use futures::FutureExt;
    let path = uri.path().to_string();
    match std::panic::AssertUnwindSafe(serve_request(server, method, uri, headers, body))
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(_) => {
            tracing::error!(%path, "request handler panicked");
            ApiError::internal("an internal error occurred").into_response()
        }
    }
}

async fn serve_request(
    server: ApiServer,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return ApiError::too_large().into_response(),
    };
    let user = match server.inner.auth.authenticate(&headers, |token| {
        crate::auth::tokens::verify(&server.inner, token)
    }) {
        Ok(user) => user,
        Err(err) => return err.into_response(),
    };
    let inner = &server.inner;
    let user = match crate::auth::authenticate::impersonate(user, &headers, |user, name| {
        let attrs = crate::auth::rbac::Attributes {
            verb: "impersonate".into(),
            resource: "users".into(),
            name: name.into(),
            ..Default::default()
        };
        crate::auth::rbac::allowed(inner, user, &attrs)
    }) {
        Ok(user) => user,
        Err(err) => return err.into_response(),
    };
    let result = match route::parse(uri.path()) {
        Route::Version => Ok(json(discovery::version())),
        Route::Health => Ok("ok".into_response()),
        Route::CoreVersions => Ok(json(discovery::core_versions())),
        Route::Groups => Ok(json(discovery::groups(&inner.registry))),
        Route::Group(g) => discovery::group(&inner.registry, &g)
            .map(json)
            .ok_or_else(ApiError::no_route),
        Route::GroupVersion(g, v) => discovery::resource_list(&inner.registry, &g, &v)
            .map(json)
            .ok_or_else(ApiError::no_route),
        Route::OpenApiRoot => Ok(json(openapi::root(&inner.registry))),
        Route::OpenApiGroupVersion(g, v) => openapi::group_version(&inner.registry, &g, &v)
            .map(json)
            .ok_or_else(ApiError::no_route),
        Route::OpenApiV2 => Err(ApiError::no_route()),
        Route::Resource(path) => {
            let query = Query::parse(uri.query());
            match resolve(inner, method, path, query, headers, body, user) {
                Ok(req) => handlers::handle(&server.inner, req),
                Err(err) => Err(err),
            }
        }
        Route::NotFound => Err(ApiError::no_route()),
    };
    match result {
        Ok(resp) => resp,
        Err(err) => err.into_response(),
    }
}

fn resolve(
    inner: &Inner,
    method: Method,
    path: route::ResourcePath,
    query: Query,
    headers: HeaderMap,
    body: bytes::Bytes,
    user: User,
) -> ApiResult<Request> {
    let rt = inner
        .registry
        .get(&path.group, &path.version, &path.resource)
        .ok_or_else(ApiError::no_route)?;
    if path.namespace.is_some() && !rt.namespaced {
        return Err(ApiError::no_route());
    }
    Ok(Request {
        method,
        path,
        rt,
        query,
        headers,
        body,
        user,
        warnings: Default::default(),
    })
}

pub(crate) fn json(value: Value) -> Response {
    axum::Json(value).into_response()
}
