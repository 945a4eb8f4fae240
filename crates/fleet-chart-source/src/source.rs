//! The long-lived [`ChartSource`] (its runtime, HTTP clients and the archive cache by digest) and the
//! per-bundle [`Fetcher`] the reader calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use fleet_bundle::remote::{ChartFetcher, ChartRef, DependencyRef, FetchError};

use crate::auth::{Auth, Credentials, Scope};
use crate::error::SourceError;
use crate::http::Clients;
use crate::oci::{Reference, Registry};
use crate::session::Session;

/// Downloads and caches charts; share one per process.
pub struct ChartSource {
    inner: Arc<Inner>,
    runtime: Option<tokio::runtime::Runtime>,
}

pub(crate) struct Inner {
    pub(crate) clients: Clients,
    /// Chart archives by sha256 (hex).
    archives: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    downloads: AtomicUsize,
    indexes: AtomicUsize,
    /// The page size asked of OCI tag lists (`None`: the registry's own).
    tag_page_size: Option<usize>,
    /// Chart URLs' last strong entity tag and archive digest, by URL and settings (their fingerprint).
    url_etags: Mutex<HashMap<(String, String), (String, String)>>,
}

/// What a source has done, for tests and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Chart archives downloaded (cache misses).
    pub downloads: usize,
    /// Repository indexes fetched.
    pub indexes: usize,
}

impl Inner {
    fn cached(&self, digest: &str) -> Option<Arc<Vec<u8>>> {
        self.archives
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(digest)
            .cloned()
    }

    fn store(&self, bytes: Vec<u8>) -> (String, Arc<Vec<u8>>) {
        let digest = crate::archive::sha256_hex(&bytes);
        let bytes = Arc::new(bytes);
        self.archives
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(digest.clone(), bytes.clone());
        (digest, bytes)
    }

    /// The archive at `url`, from the cache when `digest` is known and cached.
    async fn archive(
        &self,
        url: &str,
        digest: Option<&str>,
        auth: &Auth,
    ) -> Result<Arc<Vec<u8>>, SourceError> {
        if let Some(bytes) = digest.and_then(|d| self.cached(d)) {
            return Ok(bytes);
        }
        let client = self.clients.get(auth)?;
        let bytes = crate::http::get(&client, url, auth).await?;
        self.downloads.fetch_add(1, Ordering::Relaxed);
        let (actual, bytes) = self.store(bytes);
        if let Some(expected) = digest
            && expected != actual
        {
            return Err(SourceError::Digest {
                url: fleet_bundle::remote::redact_url(url),
                expected: expected.to_string(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// The archive at a chart URL, asked again in every read session (its content may change, and Fleet downloads
    /// it at every read): when an earlier session got it with a strong entity tag, the request carries
    /// `If-None-Match` and a `304 Not Modified` answer takes the archive from the cache instead of downloading it.
    async fn url_archive(&self, url: &str, auth: &Auth) -> Result<Arc<Vec<u8>>, SourceError> {
        let key = (url.to_string(), auth.fingerprint());
        let known = self
            .url_etags
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .and_then(|(etag, digest)| self.cached(digest).map(|bytes| (etag.clone(), bytes)));
        let client = self.clients.get(auth)?;
        let etag = known.as_ref().map(|(etag, _)| etag.as_str());
        match crate::http::get_unless_match(&client, url, auth, etag).await? {
            crate::http::Fetched::NotModified => match known {
                Some((_, bytes)) => Ok(bytes),
                None => Err(SourceError::Status {
                    url: fleet_bundle::remote::redact_url(url),
                    status: 304,
                }),
            },
            crate::http::Fetched::Body { bytes, etag } => {
                self.downloads.fetch_add(1, Ordering::Relaxed);
                let (digest, bytes) = self.store(bytes);
                let mut etags = self.url_etags.lock().unwrap_or_else(|p| p.into_inner());
                match etag {
                    Some(etag) => etags.insert(key, (etag, digest)),
                    None => etags.remove(&key),
                };
                Ok(bytes)
            }
        }
    }

    /// An OCI chart's archive and the tag or digest it resolved to.
    async fn oci(
        &self,
        reference: &str,
        version: &str,
        auth: &Auth,
    ) -> Result<(String, Arc<Vec<u8>>), SourceError> {
        let parsed = Reference::parse(reference)?;
        let client = self.clients.get(auth)?;
        let mut registry =
            Registry::new(client, &parsed, reference, auth).with_page_size(self.tag_page_size);
        let resolved = registry.resolve(version).await?;
        let layer = registry.chart_layer(&resolved).await?;
        let hex = layer.strip_prefix("sha256:").unwrap_or(&layer).to_string();
        if let Some(bytes) = self.cached(&hex) {
            return Ok((resolved, bytes));
        }
        let bytes = registry.blob(&layer).await?;
        self.downloads.fetch_add(1, Ordering::Relaxed);
        Ok((resolved, self.store(bytes).1))
    }

    async fn chart(
        &self,
        session: &Session,
        chart: &ChartRef,
        auth: &Auth,
    ) -> Result<Arc<Vec<u8>>, SourceError> {
        match chart {
            ChartRef::Repo {
                repo,
                chart,
                version,
            } => {
                let located = crate::repo::locate(
                    &self.clients,
                    &self.indexes,
                    session,
                    repo,
                    chart,
                    version,
                    auth,
                )
                .await?;
                self.archive(&located.url, located.digest.as_deref(), auth)
                    .await
            }
            ChartRef::Url { url } => {
                let bytes = match session.url_digest(url).and_then(|d| self.cached(&d)) {
                    Some(bytes) => bytes,
                    None => self.url_archive(url, auth).await?,
                };
                session.put_url_digest(url, crate::archive::sha256_hex(&bytes));
                Ok(bytes)
            }
            ChartRef::Oci { reference, version } => Ok(self.oci(reference, version, auth).await?.1),
        }
    }

    async fn dependency(
        &self,
        session: &Session,
        dependency: &DependencyRef,
        auth: &Auth,
    ) -> Result<(String, Vec<u8>), SourceError> {
        if dependency.repository.starts_with("oci://") {
            let reference = format!(
                "{}/{}",
                dependency.repository.trim_end_matches('/'),
                dependency.name
            );
            let (resolved, bytes) = self.oci(&reference, &dependency.version, auth).await?;
            let version = if resolved.starts_with("sha256:") {
                dependency.version.clone()
            } else {
                resolved.replace('_', "+")
            };
            return Ok((version, bytes.to_vec()));
        }
        let located = crate::repo::locate(
            &self.clients,
            &self.indexes,
            session,
            &dependency.repository,
            &dependency.name,
            &dependency.version,
            auth,
        )
        .await?;
        let bytes = self
            .archive(&located.url, located.digest.as_deref(), auth)
            .await?;
        Ok((located.version, bytes.to_vec()))
    }
}

impl Default for ChartSource {
    fn default() -> Self {
        Self::new()
    }
}

impl ChartSource {
    pub fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("chart-source")
            .enable_all()
            .build()
            .ok();
        Self {
            inner: Arc::new(Inner {
                clients: Clients::default(),
                archives: Mutex::new(HashMap::new()),
                downloads: AtomicUsize::new(0),
                indexes: AtomicUsize::new(0),
                tag_page_size: None,
                url_etags: Mutex::new(HashMap::new()),
            }),
            runtime,
        }
    }

    /// A source that asks OCI registries for tag list pages of at most `n` tags (and reads every page), instead
    /// of leaving the page size to the registry.
    pub fn with_tag_page_size(n: usize) -> Self {
        let mut source = Self::new();
        if let Some(inner) = Arc::get_mut(&mut source.inner) {
            inner.tag_page_size = Some(n.max(1));
        }
        source
    }

    pub fn stats(&self) -> Stats {
        Stats {
            downloads: self.inner.downloads.load(Ordering::Relaxed),
            indexes: self.inner.indexes.load(Ordering::Relaxed),
        }
    }

    /// A read session with `credentials`: give [`ReadSession::for_path`] each bundle's path.
    pub fn session(&self, credentials: Credentials) -> ReadSession<'_> {
        ReadSession {
            source: self,
            session: Arc::new(Session::default()),
            credentials,
        }
    }
}

impl Drop for ChartSource {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime's context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One read of many bundles sharing index look-ups.
pub struct ReadSession<'a> {
    source: &'a ChartSource,
    session: Arc<Session>,
    credentials: Credentials,
}

impl ReadSession<'_> {
    /// The fetcher for the bundle at `path` (relative to the repository root), with that path's credentials.
    pub fn for_path(&self, path: &str) -> Fetcher<'_> {
        let (auth, scope) = self.credentials.for_path(path);
        Fetcher {
            source: self.source,
            session: self.session.clone(),
            auth,
            scope,
        }
    }
}

impl ReadSession<'_> {
    /// A fetcher that sends `auth` with every request, as `helm` does with its `--username`/`--password`.
    pub fn with_auth(&self, auth: Auth) -> Fetcher<'_> {
        Fetcher {
            source: self.source,
            session: self.session.clone(),
            auth,
            scope: Scope::Anywhere,
        }
    }
}

/// Downloads for one bundle; the reader's [`ChartFetcher`].
pub struct Fetcher<'a> {
    source: &'a ChartSource,
    session: Arc<Session>,
    auth: Auth,
    scope: Scope,
}

impl Fetcher<'_> {
    /// The settings for a chart named by `url`: credentials only where the scope allows.
    fn auth_for(&self, url: &str) -> Result<Auth, SourceError> {
        if self.scope.allows(url)? {
            Ok(self.auth.clone())
        } else {
            Ok(self.auth.without_credentials())
        }
    }

    /// Runs `work` on the source's runtime and waits for it (callable from any thread, async or not).
    fn run<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = Result<T, SourceError>> + Send + 'static,
    ) -> Result<T, SourceError> {
        let runtime = self.source.runtime.as_ref().ok_or(SourceError::Stopped)?;
        let (sender, receiver) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let _ = sender.send(work.await);
        });
        receiver.recv().map_err(|_| SourceError::Stopped)?
    }
}

fn fetch_error(err: SourceError) -> FetchError {
    FetchError::new(err.to_string())
}

impl ChartFetcher for Fetcher<'_> {
    fn fetch(&self, chart: &ChartRef) -> Result<Vec<(String, Vec<u8>)>, FetchError> {
        let url = match chart {
            ChartRef::Repo { repo, .. } => repo.as_str(),
            ChartRef::Url { url } => url.as_str(),
            ChartRef::Oci { reference, .. } => reference.as_str(),
        };
        let auth = self.auth_for(url).map_err(fetch_error)?;
        let (inner, session, owned) = (
            self.source.inner.clone(),
            self.session.clone(),
            chart.clone(),
        );
        let bytes = self
            .run(async move { inner.chart(&session, &owned, &auth).await })
            .map_err(fetch_error)?;
        crate::archive::unpack(&chart.describe(), &bytes).map_err(fetch_error)
    }

    fn fetch_dependency(
        &self,
        dependency: &DependencyRef,
    ) -> Result<(String, Vec<u8>), FetchError> {
        let auth = self.auth_for(&dependency.repository).map_err(fetch_error)?;
        let (inner, session, owned) = (
            self.source.inner.clone(),
            self.session.clone(),
            dependency.clone(),
        );
        self.run(async move { inner.dependency(&session, &owned, &auth).await })
            .map_err(fetch_error)
    }
}

/// A single chart reference, outside any bundle read: what a HelmOp's controller resolves and its agents
/// download (each call looks at the repository index or tag list afresh, so polling sees new versions).
impl ChartSource {
    /// Runs `work` on the source's runtime (its HTTP clients live there) and awaits it from any runtime.
    async fn spawn<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = Result<T, SourceError>> + Send + 'static,
    ) -> Result<T, SourceError> {
        let runtime = self.runtime.as_ref().ok_or(SourceError::Stopped)?;
        runtime
            .spawn(work)
            .await
            .map_err(|_| SourceError::Stopped)?
    }

    /// The concrete version `chart`'s version constraint selects now: the highest matching entry of a Helm
    /// repository's `index.yaml`, or the highest matching tag of an OCI repository (Helm writes `+` as `_`
    /// in tags; the version keeps the `+`). A digest stays as given; a chart URL has no version to resolve
    /// (empty).
    pub async fn resolve_version(
        &self,
        chart: &ChartRef,
        auth: &Auth,
    ) -> Result<String, SourceError> {
        let (inner, chart, auth) = (self.inner.clone(), chart.clone(), auth.clone());
        self.spawn(async move {
            match &chart {
                ChartRef::Repo {
                    repo,
                    chart,
                    version,
                } => {
                    let session = Session::default();
                    let located = crate::repo::locate(
                        &inner.clients,
                        &inner.indexes,
                        &session,
                        repo,
                        chart,
                        version,
                        &auth,
                    )
                    .await?;
                    Ok(located.version)
                }
                ChartRef::Oci { reference, version } => {
                    let parsed = Reference::parse(reference)?;
                    let client = inner.clients.get(&auth)?;
                    let mut registry = Registry::new(client, &parsed, reference, &auth)
                        .with_page_size(inner.tag_page_size);
                    let resolved = registry.resolve(version).await?;
                    Ok(if resolved.starts_with("sha256:") {
                        resolved
                    } else {
                        resolved.replace('_', "+")
                    })
                }
                ChartRef::Url { .. } => Ok(String::new()),
            }
        })
        .await
    }

    /// The files of `chart` (named as in its archive), downloaded once per archive digest.
    pub async fn fetch_chart(
        &self,
        chart: &ChartRef,
        auth: &Auth,
    ) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
        let (inner, owned, auth) = (self.inner.clone(), chart.clone(), auth.clone());
        let bytes = self
            .spawn(async move {
                let session = Session::default();
                inner.chart(&session, &owned, &auth).await
            })
            .await?;
        crate::archive::unpack(&chart.describe(), &bytes)
    }
}
