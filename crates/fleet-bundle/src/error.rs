//! The reader's error type: every variant names the file or directory it is about.

use crate::fleetyaml::FleetYamlError;
use crate::glob::{BadPattern, GlobError};
use crate::tree::TreeError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error(transparent)]
    FleetYaml(#[from] FleetYamlError),
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    #[error("invalid path glob {pattern:?}: {source}")]
    PathGlob { pattern: String, source: GlobError },
    #[error("{file}: {source}")]
    IgnorePattern { file: String, source: BadPattern },
    #[error("path {path:?} leaves the repository root")]
    PathOutsideRoot { path: String },
    #[error("invalid bundle path: {path:?}")]
    InvalidDrivenPath { path: String },
    #[error("no resource found at the following paths to deploy: [{}]", .paths.join(" "))]
    NothingFound { paths: Vec<String> },
    #[error("{file}: imageScans[{index}].tagName: the name of the scan is required")]
    ImageScanTagName { file: String, index: usize },
    #[error("{file}: helm chart {chart}: {reason}")]
    ChartDownload {
        file: String,
        /// The chart as [`crate::remote::ChartRef::describe`] names it, or a chart's dependency (no credentials).
        chart: String,
        reason: String,
    },
    #[error("{file}: {field}: chart {chart:?}: {message}")]
    Chart {
        file: String,
        field: String,
        chart: String,
        message: String,
    },
    #[error("{chart}: dependency {dependency:?}: {message}")]
    ChartDependency {
        chart: String,
        dependency: String,
        message: String,
    },
    #[error("{file}: dependsOn[{index}]: {message}")]
    DependsOn {
        file: String,
        index: usize,
        message: String,
    },
}
