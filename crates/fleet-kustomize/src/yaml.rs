//! Reading resource files (multi-document YAML or JSON, `List` kinds expanded) through `fleet-yaml`, with
//! kustomize's scalar rules (go-yaml v3: only `true`/`false` are booleans, so `yes`, `on`, `n` stay strings).

use serde_json::Value;

use crate::error::{Error, Result};

/// The text of a file, or an error naming it when it is not UTF-8.
pub(crate) fn utf8<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::invalid(
            file,
            format!(
                "not valid UTF-8 (byte {}); save the file as UTF-8",
                e.valid_up_to()
            ),
        )
    })
}

/// Every document of a YAML stream, `null` documents dropped.
pub(crate) fn documents(bytes: &[u8], file: &str) -> Result<Vec<Value>> {
    let text = utf8(bytes, file)?;
    Ok(fleet_yaml::parse::documents_with(
        &fleet_yaml::parse::Options::kustomize(),
        text,
        file,
    )?)
}

/// The Kubernetes objects of a resource file: every document must be a mapping with `kind`; `*List` kinds with
/// `items` are expanded into their items, as kustomize does.
pub(crate) fn objects(bytes: &[u8], file: &str) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for (index, doc) in documents(bytes, file)?.into_iter().enumerate() {
        expand(doc, file, index, &mut out)?;
    }
    Ok(out)
}

fn expand(doc: Value, file: &str, index: usize, out: &mut Vec<Value>) -> Result<()> {
    let Value::Object(map) = doc else {
        return Err(Error::invalid(
            file,
            format!(
                "document {} is not a mapping; a resource file holds Kubernetes objects",
                index + 1
            ),
        ));
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        return Err(Error::invalid(
            file,
            format!(
                "document {} has no `kind`; every resource needs apiVersion, kind and metadata.name",
                index + 1
            ),
        ));
    }
    if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
        if let Some(Value::Array(items)) = map.get("items") {
            for item in items {
                expand(item.clone(), file, index, out)?;
            }
        }
        return Ok(());
    }
    out.push(Value::Object(map));
    Ok(())
}
