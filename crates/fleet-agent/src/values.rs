//! `helm.valuesFrom`: Helm values read from ConfigMaps and Secrets on the downstream cluster, merged over the
//! BundleDeployment's `helm.values` before rendering.
//!
//! Fleet's agent decides the details (its `getValues`; the docs do not say them): a reference without a
//! namespace, or naming an object the bundle copies through `downstreamResources`, is read in the release
//! namespace (target namespace, else `defaultNamespace`, else `default`); the key defaults to `values.yaml`;
//! entries merge in their listed order over `helm.values` (so valuesFrom wins), within one entry the
//! ConfigMap first and the Secret last; maps merge key by key and any other value replaces. A missing object
//! or key is an error. Secret contents never appear in an error or a log: a Secret whose key is not a YAML
//! map is reported without the parser's message, which could quote it.

use fleet_api::{BundleDeploymentOptions, ValuesKeyRef};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The key read when a reference names none.
pub const DEFAULT_KEY: &str = "values.yaml";

/// Which kind of object a reference reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    ConfigMap,
    Secret,
}

impl Source {
    fn kind(self) -> &'static str {
        match self {
            Source::ConfigMap => "configmap",
            Source::Secret => "secret",
        }
    }
}

/// Merges the values of every `helm.valuesFrom` reference into `options.helm.values`, reading them with
/// `client` (the client the bundle deploys with).
pub async fn resolve(client: &kube::Client, options: &mut BundleDeploymentOptions) -> Result<()> {
    let Some(helm) = &options.helm else {
        return Ok(());
    };
    if helm.values_from.is_empty() {
        return Ok(());
    }
    let release = crate::apply::release_namespace(options);
    let mut values = helm
        .values
        .as_ref()
        .map(|values| values.0.clone())
        .unwrap_or_default();
    for entry in &helm.values_from {
        let references = [
            (Source::ConfigMap, &entry.config_map_key_ref),
            (Source::Secret, &entry.secret_key_ref),
        ];
        for (source, reference) in references {
            let Some(reference) = reference else {
                continue;
            };
            let namespace = if reference.namespace.is_empty() || copied(options, source, reference)
            {
                release.as_str()
            } else {
                reference.namespace.as_str()
            };
            let read = read(client, source, namespace, reference).await?;
            merge(&mut values, read);
        }
    }
    let helm = options.helm.get_or_insert_with(Default::default);
    helm.values = Some(fleet_api::GenericMap(values));
    Ok(())
}

/// Whether `downstreamResources` copies the referenced object into the release namespace.
fn copied(options: &BundleDeploymentOptions, source: Source, reference: &ValuesKeyRef) -> bool {
    options
        .downstream_resources
        .iter()
        .any(|copy| copy.name == reference.name && copy.kind.eq_ignore_ascii_case(source.kind()))
}

async fn read(
    client: &kube::Client,
    source: Source,
    namespace: &str,
    reference: &ValuesKeyRef,
) -> Result<Map<String, Value>> {
    let key = if reference.key.is_empty() {
        DEFAULT_KEY
    } else {
        reference.key.as_str()
    };
    let name = reference.name.as_str();
    let error = |problem: String| Error::ValuesFrom {
        kind: source.kind(),
        namespace: namespace.to_string(),
        name: name.to_string(),
        problem,
    };
    let text = match source {
        Source::ConfigMap => {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
            let object = api
                .get_opt(name)
                .await
                .map_err(|err| error(crate::apply::api_message(&err)))?
                .ok_or_else(|| error("not found".to_string()))?;
            object
                .data
                .and_then(|mut data| data.remove(key))
                .ok_or_else(|| error(format!("has no key {key}")))?
        }
        Source::Secret => {
            let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
            let object = api
                .get_opt(name)
                .await
                .map_err(|err| error(crate::apply::api_message(&err)))?
                .ok_or_else(|| error("not found".to_string()))?;
            let bytes = object
                .data
                .and_then(|mut data| data.remove(key))
                .ok_or_else(|| error(format!("has no key {key}")))?;
            String::from_utf8(bytes.0).map_err(|_| error(format!("key {key} is not UTF-8 text")))?
        }
    };
    let origin = format!("{} {namespace}/{name} key {key}", source.kind());
    let parsed: Option<Value> = fleet_yaml::parse::from_str(&text, &origin).map_err(|err| {
        error(match source {
            Source::ConfigMap => format!("key {key}: {err}"),
            Source::Secret => format!("key {key} is not valid YAML"),
        })
    })?;
    match parsed {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(error(format!("key {key} does not hold a map of values"))),
    }
}

/// Merges `src` over `dest` as Fleet's agent does: maps in both merge key by key, anything else replaces.
fn merge(dest: &mut Map<String, Value>, src: Map<String, Value>) {
    for (key, value) in src {
        match (dest.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(incoming)) => merge(existing, incoming),
            (_, value) => {
                dest.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_merge_and_other_values_replace() {
        let mut dest = json!({"a": {"b": 1, "c": 2}, "list": [1, 2], "scalar": {"x": 1}})
            .as_object()
            .cloned()
            .unwrap();
        let src = json!({"a": {"c": 3, "d": 4}, "list": [3], "scalar": 5, "new": true});
        merge(&mut dest, src.as_object().cloned().unwrap());
        assert_eq!(
            Value::Object(dest),
            json!({"a": {"b": 1, "c": 3, "d": 4}, "list": [3], "scalar": 5, "new": true})
        );
    }
}
