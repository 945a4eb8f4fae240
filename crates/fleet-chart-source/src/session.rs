//! The memos of one read session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fleet_bundle::remote::index::RepoIndex;

/// Memos of one read (one GitRepo commit, or one `fleet apply`): repository indexes and chart URLs' digests are
/// fetched once per session, so a new read sees new chart versions.
#[derive(Default)]
pub(crate) struct Session {
    indexes: Mutex<HashMap<String, Arc<RepoIndex>>>,
    urls: Mutex<HashMap<String, String>>,
}

impl Session {
    pub(crate) fn index(&self, key: &str) -> Option<Arc<RepoIndex>> {
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    pub(crate) fn put_index(&self, key: String, index: Arc<RepoIndex>) {
        self.indexes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, index);
    }

    pub(crate) fn url_digest(&self, url: &str) -> Option<String> {
        self.urls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(url)
            .cloned()
    }

    pub(crate) fn put_url_digest(&self, url: &str, digest: String) {
        self.urls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(url.to_string(), digest);
    }
}
