//! A Secret's data as bytes by key, the form the credential and values parsers take (git and chart
//! credentials, webhook secrets, a Bundle's values Secret).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;

use crate::error::Result;

/// `secret`'s `data` (empty when it has none).
pub fn data_of(secret: Secret) -> BTreeMap<String, Vec<u8>> {
    secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key, value.0))
        .collect()
}

/// The data of the Secret `namespace`/`name`, `None` when there is no such Secret.
pub async fn read_data(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<BTreeMap<String, Vec<u8>>>> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    Ok(secrets.get_opt(name).await?.map(data_of))
}
