//! YAML for the whole project: YAML 1.1 parsing with locations (as Helm and kubectl read it), Helm-style and
//! kustomize-style emitting, and the patch algorithms (JSON patch, merge patch, strategic merge) shared by
//! overlays, kustomize and the API server. Pure: no I/O.

pub mod emit;
mod error;
mod gofmt;
pub mod gojson;
pub mod parse;
pub mod patch;
mod resolve;
mod timestamp;

pub use error::{Error, Location};
pub use gojson::to_json_go;
