//! The server-side apply of an object's status subresource, as every status writer sends it.

use std::fmt::Debug;

use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::context::FIELD_MANAGER;
use crate::error::Result;

/// Writes `status` as the status of `name` (server-side apply of the status subresource, so fields the
/// controller no longer sets are removed). Callers write only when the status changed.
pub async fn apply_status<K>(api: &Api<K>, name: &str, status: &impl Serialize) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    api.patch_status(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;
    Ok(())
}
