//! `configMapGenerator` and `secretGenerator`: building ConfigMaps and Secrets from literals, files and env
//! files, with `generatorOptions` merged into each generator's own options.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::files::{self, Files};
use crate::kustomization::{GeneratorArgs, GeneratorOptions};
use crate::resource::{Behavior, Resource};

/// Which kind a generator makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `configMapGenerator`.
    ConfigMap,
    /// `secretGenerator`.
    Secret,
}

impl Kind {
    fn field(self) -> &'static str {
        match self {
            Kind::ConfigMap => "configMapGenerator",
            Kind::Secret => "secretGenerator",
        }
    }
}

/// A generator's options with the global ones merged in (local values win; flags are or-ed).
fn merged_options(
    local: Option<&GeneratorOptions>,
    global: Option<&GeneratorOptions>,
) -> GeneratorOptions {
    let mut out = local.cloned().unwrap_or_default();
    if let Some(g) = global {
        for (k, v) in &g.labels {
            out.labels.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &g.annotations {
            out.annotations
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
        if g.disable_name_suffix_hash == Some(true) {
            out.disable_name_suffix_hash = Some(true);
        }
        if g.immutable == Some(true) {
            out.immutable = Some(true);
        }
    }
    out
}

/// Strips one pair of matching surrounding quotes.
fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b[b.len() - 1] && (b[0] == b'"' || b[0] == b'\'') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Generates one ConfigMap or Secret.
pub fn generate(
    files: &impl Files,
    dir: &str,
    kfile: &str,
    kind: Kind,
    args: &GeneratorArgs,
    global: Option<&GeneratorOptions>,
) -> Result<Resource> {
    let field = kind.field();
    if args.name.is_empty() {
        return Err(Error::invalid(
            kfile,
            format!("{field} entry without a name; give it a `name`"),
        ));
    }
    let what = format!("{field} {:?}", args.name);
    let mut pairs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut env_files: Vec<&String> = args.envs.iter().collect();
    if let Some(env) = &args.env {
        env_files.push(env);
    }
    for env in env_files {
        let bytes = read(files, dir, kfile, &format!("{field}.envs"), env)?;
        let text = crate::yaml::utf8(&bytes, env)?;
        for (n, raw) in text.lines().enumerate() {
            let line = if n == 0 {
                raw.trim_start_matches('\u{feff}')
            } else {
                raw
            };
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line.split_once('=').unwrap_or((line, ""));
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "{what}: env file {env:?} line {}: {key:?} is not a valid variable name",
                        n + 1
                    ),
                ));
            }
            pairs.push((key.to_string(), value.as_bytes().to_vec()));
        }
    }
    for lit in &args.literals {
        let Some((key, value)) = lit.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(Error::invalid(
                kfile,
                format!("{what}: literal {lit:?} is not of the form key=value"),
            ));
        };
        pairs.push((key.to_string(), remove_quotes(value).as_bytes().to_vec()));
    }
    for source in &args.files {
        let (key, path) = match source.split_once('=') {
            Some((k, p)) if !k.is_empty() && !p.is_empty() => (k.to_string(), p),
            Some(_) => {
                return Err(Error::invalid(
                    kfile,
                    format!("{what}: file source {source:?} must be `key=path` or `path`"),
                ));
            }
            None => (files::base_name(source).to_string(), source.as_str()),
        };
        let bytes = read(files, dir, kfile, &format!("{field}.files"), path)?;
        pairs.push((key, bytes));
    }
    let mut seen = BTreeMap::new();
    for (k, _) in &pairs {
        if seen.insert(k.clone(), ()).is_some() {
            return Err(Error::invalid(
                kfile,
                format!("{what}: key {k:?} is given more than once; each key may appear only once"),
            ));
        }
    }
    let options = merged_options(args.options.as_ref(), global);
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(args.name.clone()));
    if let Some(ns) = args.namespace.as_ref().filter(|n| !n.is_empty()) {
        metadata.insert("namespace".into(), Value::String(ns.clone()));
    }
    if !options.labels.is_empty() {
        metadata.insert("labels".into(), json!(options.labels));
    }
    if !options.annotations.is_empty() {
        metadata.insert("annotations".into(), json!(options.annotations));
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!("v1"));
    obj.insert(
        "kind".into(),
        json!(match kind {
            Kind::ConfigMap => "ConfigMap",
            Kind::Secret => "Secret",
        }),
    );
    obj.insert("metadata".into(), Value::Object(metadata));
    let b64 = |b: &[u8]| Value::String(encode_base64(b));
    let mut data = Map::new();
    let mut binary = Map::new();
    for (k, v) in pairs {
        match kind {
            Kind::Secret => {
                data.insert(k, b64(&v));
            }
            Kind::ConfigMap => match String::from_utf8(v) {
                Ok(s) => {
                    data.insert(k, Value::String(s));
                }
                Err(e) => {
                    binary.insert(k, b64(e.as_bytes()));
                }
            },
        }
    }
    if !data.is_empty() {
        obj.insert("data".into(), Value::Object(data));
    }
    if !binary.is_empty() {
        obj.insert("binaryData".into(), Value::Object(binary));
    }
    if kind == Kind::Secret {
        let t = args.secret_type.clone().unwrap_or_else(|| "Opaque".into());
        obj.insert("type".into(), Value::String(t));
    } else if args.secret_type.is_some() {
        return Err(Error::invalid(
            kfile,
            format!("{what}: `type` is only valid in secretGenerator"),
        ));
    }
    if options.immutable == Some(true) {
        obj.insert("immutable".into(), Value::Bool(true));
    }
    let behavior = match args.behavior.as_deref().unwrap_or("create") {
        "" | "create" => Behavior::Create,
        "merge" => Behavior::Merge,
        "replace" => Behavior::Replace,
        other => {
            return Err(Error::invalid(
                kfile,
                format!("{what}: behavior {other:?} is not one of create, merge, replace"),
            ));
        }
    };
    let mut r = Resource::new(Value::Object(obj), kfile);
    r.behavior = Some(behavior);
    r.needs_hash = options.disable_name_suffix_hash != Some(true);
    Ok(r)
}

/// Reads a file a generator names, inside the kustomization's directory.
fn read(files: &impl Files, dir: &str, kfile: &str, field: &str, entry: &str) -> Result<Vec<u8>> {
    let path = crate::root::resolve_in_root(dir, kfile, field, entry)?;
    files
        .read(&path)
        .map(|b| b.into_owned())
        .ok_or_else(|| Error::Missing {
            file: kfile.to_string(),
            field: field.to_string(),
            entry: entry.to_string(),
            resolved: path,
        })
}

/// Base64 as kustomize writes Secret data and ConfigMap binary data: when the encoding is 70 characters or more,
/// it is cut into lines of 70, each followed by a newline.
pub fn encode_base64(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let enc = base64::engine::general_purpose::STANDARD.encode(bytes);
    if enc.len() < LINE {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / LINE + 1);
    for chunk in enc.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}
