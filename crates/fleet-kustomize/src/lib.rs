//! Kustomize, natively: builds a kustomization over an abstract file tree into Kubernetes objects, matching
//! `kubectl kustomize` (kustomize v5) output. Pure: no file system, network or process access.
//!
//! Entry points: [`build`] (objects) and [`to_yaml_stream`] (the `kubectl kustomize` text). Loading follows
//! Fleet's restrictions: files only from inside each kustomization's directory, no plugins, no remote bases.

mod build;
mod config;
pub mod error;
pub mod fieldspec;
pub mod files;
pub mod fleet;
mod generators;
mod hash;
#[cfg(feature = "helm")]
mod helm;
pub mod kustomization;
mod name_reference;
mod order;
mod patches;
mod replacements;
mod resmap;
pub mod resource;
mod root;
mod selector;
mod smp;
mod transform;
mod vars;
mod yaml;

use serde_json::Value;

pub use error::{Error, Result, Warning};
pub use files::Files;

/// Build options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Deepest nesting of kustomizations (bases and components). Default 64.
    pub max_depth: usize,
    /// Make a patch whose `target` selects no resource an error. `kubectl kustomize` skips such patches silently;
    /// by default (`false`) we skip them too, so repositories that build with kubectl build here, but report a
    /// [`Warning`] naming the kustomization file and the patch ([`build_reporting`]).
    pub strict_patch_targets: bool,
    /// `.Capabilities.KubeVersion` for `helmCharts` entries that set no `kubeVersion` (e.g. the target cluster's
    /// version); `None` uses the Helm engine's default.
    pub kube_version: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_depth: 64,
            strict_patch_targets: false,
            kube_version: None,
        }
    }
}

/// A finished build: the objects in output order and the warnings met on the way.
#[derive(Debug, Clone, Default)]
pub struct Built {
    pub objects: Vec<Value>,
    pub warnings: Vec<Warning>,
}

/// Builds the kustomization in directory `dir` (`""` for the tree root) into objects, in output order.
pub fn build(files: &impl Files, dir: &str, options: &Options) -> Result<Vec<Value>> {
    build_reporting(files, dir, options).map(|b| b.objects)
}

/// [`build`], also returning the warnings (patches whose target matches nothing, …) for the user to see.
pub fn build_reporting(files: &impl Files, dir: &str, options: &Options) -> Result<Built> {
    let dir = files::join("", dir)
        .ok_or_else(|| Error::invalid(dir, "the directory is outside the file tree"))?;
    let mut builder = build::Builder::new(files, options);
    let resmap = builder.build(&dir, None)?;
    Ok(Built {
        objects: resmap.items.into_iter().map(|r| r.obj).collect(),
        warnings: builder.warnings,
    })
}

/// Whether `dir` holds a kustomization file.
pub fn has_kustomization(files: &impl Files, dir: &str) -> bool {
    kustomization::FILE_NAMES
        .iter()
        .any(|n| files::join(dir, n).is_some_and(|p| files.read(&p).is_some()))
}

/// The objects as `kubectl kustomize` prints them: `---`-separated documents, keys sorted, kyaml style.
pub fn to_yaml_stream(objects: &[Value]) -> String {
    fleet_yaml::emit::kyaml::to_yaml_stream(objects)
}
