//! Deleting hub objects that may already be gone: a 404 means someone else deleted it first, which is what
//! the caller wanted.

use std::fmt::Debug;

use kube::api::{Api, DeleteParams, ListParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::error::Result;

/// `Ok` for a request (a delete, or a patch of an object being deleted) that found its object gone.
pub fn ignore_missing<T>(result: kube::Result<T>) -> Result<()> {
    match result {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// Deletes `name` through `api` unless it is already gone.
pub async fn delete<K>(api: &Api<K>, name: &str) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    ignore_missing(api.delete(name, &DeleteParams::default()).await)
}

/// Deletes every object `api` lists with the label selector `selector`.
pub async fn delete_labelled<K>(api: &Api<K>, selector: &str) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let listed = api
        .list_metadata(&ListParams::default().labels(selector))
        .await?;
    for object in listed.items {
        delete(api, &object.name_any()).await?;
    }
    Ok(())
}
