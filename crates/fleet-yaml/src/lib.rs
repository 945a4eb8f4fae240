//! YAML for the whole project: YAML 1.1 parsing with locations (as Helm and kubectl read it), Helm-style and
//! kustomize-style emitting, and the patch algorithms (JSON patch, merge patch, strategic merge) shared by
//! overlays, kustomize and the API server. Pure: no I/O.
//!
//! - Reading: [`parse::from_str`] (typed, like Go's `yaml.Unmarshal` into a struct), [`parse::documents`]
//!   (`---` streams as JSON values), [`parse::located`] / [`parse::located_documents`] (with positions by JSON
//!   pointer). [`parse::Options`] holds the limits (size, depth, alias expansion) and the reading rules: Helm and
//!   kubectl by default, [`parse::Options::kustomize`] for kustomize.
//! - Writing: [`emit::helm::to_yaml`] (Helm's `toYaml`), [`emit::kyaml::to_yaml`] (`kubectl kustomize` output),
//!   [`to_json_go`] (Go's `encoding/json`).
//! - Go durations: [`goduration::parse_nanos`] (Go's `time.ParseDuration`).
//! - Errors: one [`Error`] with origin, line and column for reading; the patch algorithms fail with
//!   [`patch::PatchError`], whose reason is typed ([`patch::json_patch::OperationError`] with
//!   [`patch::pointer::PointerError`], [`patch::MergeProblem`]).

pub mod emit;
mod error;
pub mod goduration;
mod gofmt;
pub mod gojson;
pub mod parse;
pub mod patch;
mod resolve;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod timestamp;

pub use error::{Error, Location};
pub use gojson::to_json_go;
