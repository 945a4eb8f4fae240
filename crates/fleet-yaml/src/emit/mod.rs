//! Emitting YAML the way Go tools print it, so our output is byte-for-byte what users get from real Helm and
//! kustomize: [`helm::to_yaml`] is Helm's `toYaml` (sigs.k8s.io/yaml over go-yaml v2) and [`kyaml::to_yaml`] is
//! what `kubectl kustomize` prints (kyaml over go-yaml v3). Both round-trip through JSON first, as the Go code
//! does: map keys sorted, numbers re-read by go-yaml. Verified against goldens from the real binaries
//! (`scripts/yaml-goldens.sh`, `testdata/yaml/emit/`).
//!
//! As in Go, a key `<<` is written plain (and reads back as a merge key), and NEL, LS and PS are treated as line
//! breaks. Where kustomize refuses to print (control characters, non-string keys) we print escapes instead.
//! go-yaml's key order is not transitive for mixes like `10`, `1a`, `2`; Go then prints such keys in varying
//! order, we in a fixed one.

pub mod helm;
mod keys;
pub mod kyaml;
mod scalar;
mod writer;
