//! Running a reconcile through kube-runtime's finalizer helper: the live object is applied, the object being
//! deleted cleaned up, and the finalizer added or removed around them; an error names the object.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use kube::api::Api;
use kube::core::NamespaceResourceScope;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{Event, finalizer};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::error::{Error, Result};

/// Runs `reconcile` on `object`'s [`Event`] (apply or cleanup) while keeping `finalizer_name` on it; the
/// error of a failed apply or cleanup is returned as it is, a failed finalizer write as
/// [`Error::Finalizer`] naming `Kind namespace/name`.
pub async fn with_finalizer<K, F, Fut>(
    ctx: &Arc<Context>,
    finalizer_name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
    F: FnOnce(Event<K>, Arc<Context>) -> Fut,
    Fut: Future<Output = Result<Action>>,
{
    let namespace = object.namespace().unwrap_or_default();
    let api: Api<K> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = format!("{} {namespace}/{}", K::kind(&()), object.name_any());
    let ctx = ctx.clone();
    finalizer(&api, finalizer_name, object, |event| reconcile(event, ctx))
        .await
        .map_err(|err| Error::from_finalizer(name, err))
}
