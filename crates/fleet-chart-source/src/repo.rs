//! Helm repositories over HTTP(S): the repository's `index.yaml` (fetched once per read session and settings)
//! and the chart version it selects.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fleet_bundle::remote::index::{RepoIndex, resolve_url};
use fleet_bundle::remote::redact_url;

use crate::auth::Auth;
use crate::error::SourceError;
use crate::http::Clients;
use crate::session::Session;

/// A chart version found in a repository index: where its archive is and, when the index says, its sha256.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub url: String,
    pub version: String,
    pub digest: Option<String>,
}

/// The index URL of a repository: `<repo>/index.yaml`.
fn index_url(repo: &str) -> String {
    match repo.split_once('?') {
        Some((base, query)) => format!("{}/index.yaml?{query}", base.trim_end_matches('/')),
        None => format!("{}/index.yaml", repo.trim_end_matches('/')),
    }
}

/// The index of `repo`, fetched once per session; `fetched` counts the downloads.
pub(crate) async fn index(
    clients: &Clients,
    fetched: &AtomicUsize,
    session: &Session,
    repo: &str,
    auth: &Auth,
) -> Result<Arc<RepoIndex>, SourceError> {
    let key = format!("{}\n{repo}", auth.fingerprint());
    if let Some(index) = session.index(&key) {
        return Ok(index);
    }
    let url = index_url(repo);
    let client = clients.get(auth)?;
    let bytes = crate::http::get(&client, &url, auth).await?;
    fetched.fetch_add(1, Ordering::Relaxed);
    let text = String::from_utf8(bytes).map_err(|_| SourceError::Index {
        url: redact_url(&url),
        message: "not UTF-8".to_string(),
    })?;
    let index = RepoIndex::parse(&text, &redact_url(&url)).map_err(|err| SourceError::Index {
        url: redact_url(&url),
        message: err.to_string(),
    })?;
    let index = Arc::new(index);
    session.put_index(key, index.clone());
    Ok(index)
}

/// Finds `chart` at `version` (a constraint, or empty for the latest stable) in `repo`'s index.
pub(crate) async fn locate(
    clients: &Clients,
    fetched: &AtomicUsize,
    session: &Session,
    repo: &str,
    chart: &str,
    version: &str,
    auth: &Auth,
) -> Result<Located, SourceError> {
    let index = index(clients, fetched, session, repo, auth).await?;
    let entry = index
        .select(chart, version)
        .map_err(|err| SourceError::Index {
            url: redact_url(&index_url(repo)),
            message: err.to_string(),
        })?;
    Ok(Located {
        url: resolve_url(repo, &entry.urls[0]),
        version: entry.version.clone(),
        digest: Some(entry.digest.trim().to_ascii_lowercase()).filter(|d| d.len() == 64),
    })
}
