//! Helm chart semantics on top of the template engine: loading charts from in-memory file maps, values
//! (coalescing, `--set` parsing, schema validation, dependency conditions), the built-in objects, and rendering
//! with `helm template`'s output order and format.

pub mod file;
pub mod load;
pub mod objects;
pub mod render;
pub mod schema;
pub mod setvalues;
pub mod values;

use crate::template::TemplateError;

/// Errors from loading, valuing or rendering a chart.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// A chart file is missing or malformed.
    #[error("{path}: {message}")]
    Load { path: String, message: String },
    /// A chart file could not be read.
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: file::ReadError,
    },
    /// A chart file is not YAML (the inner error names the line and column).
    #[error("{path}: {source}")]
    Yaml {
        path: String,
        source: crate::yaml::YamlError,
    },
    /// A values source (`-f` file or `--set` flag) is malformed.
    #[error("{origin}: {message}")]
    Values { origin: String, message: String },
    /// Values do not satisfy `values.schema.json`.
    #[error("{0}")]
    Schema(String),
    /// A template failed to parse or execute (worded as `helm template` prints it).
    #[error("{}", .0.helm_message())]
    Template(TemplateError),
    /// A rendered manifest is not valid YAML.
    #[error("{message}")]
    Manifest { path: String, message: String },
}

/// What `helm template`'s flags control.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub release_name: String,
    pub namespace: String,
    /// e.g. `v1.33.0`.
    pub kube_version: String,
    /// Extra API versions for `.Capabilities.APIVersions` (`--api-versions`).
    pub api_versions: Vec<String>,
    pub is_upgrade: bool,
    pub include_crds: bool,
    /// Render budget (see [`crate::template::exec::DEFAULT_FUEL`]).
    pub fuel: u64,
    /// Seed for every random function (`rand*`, `uuidv4`, keys, certificates, salts); `None` uses the OS CSPRNG.
    pub seed: Option<u64>,
    /// How the chart is named in load errors (e.g. its directory).
    pub chart_origin: Option<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            release_name: "release-name".into(),
            namespace: "default".into(),
            kube_version: "v1.33.0".into(),
            api_versions: Vec::new(),
            is_upgrade: false,
            include_crds: false,
            fuel: crate::template::exec::DEFAULT_FUEL,
            seed: None,
            chart_origin: None,
        }
    }
}

pub use file::FileData;
pub use load::{Chart, FileMap, load_chart};
pub use render::{Manifest, Rendered, render_chart};
pub use setvalues::{SetKind, apply_set};
pub use values::{merge_maps, values_from_json};
