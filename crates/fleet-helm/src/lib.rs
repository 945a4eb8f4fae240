//! Helm chart rendering without Helm: a Go `text/template` engine running on minijinja's value model, Sprig's and
//! Helm's functions, and Helm's chart semantics, aiming at byte-identical output with `helm template`. Pure: the
//! caller reads files; this crate works on in-memory file maps.
//!
//! # Design
//!
//! minijinja cannot parse Go templates (both delimiters start with `{{`, and Go's pipelines, `$` scoping and
//! `define`/`template` have no Jinja equivalent), so [`template`] has its own lexer and parser producing a tree
//! shaped like Go's `text/template/parse`, and an evaluator that walks it with Go's rules. What we take from
//! minijinja is its runtime data model: every template value is a [`minijinja::Value`] (nil = `none`, ints =
//! `i64`, floats = `f64`, slices = sequences), maps are a minijinja [`minijinja::value::Object`] ([`value::GoMap`]:
//! sorted like Go's map iteration, shared and mutable like Go maps, because Sprig's `set`/`merge` mutate in place),
//! and objects with methods (`.Files`, `.Capabilities.APIVersions`) are minijinja objects whose `call_method` the
//! evaluator invokes. Functions live in a name → `fn` table ([`funcs::Funcs`]) rather than a minijinja
//! `Environment`, because Go passes the piped value last, evaluates `and`/`or` lazily and needs late-bound
//! `include`/`tpl` with access to the template set. What a function is (its signature, its call context — the
//! render's generator, [`rng::Rng`] — and its error) lives in [`call`], which the table and the evaluator both import,
//! so neither imports the other's internals. The render budget is our own fuel counter (minijinja's fuel
//! only counts its own VM's instructions), plus a nesting limit for `template`/`include`/`tpl` and an output cap.
//! Printing follows Go's `fmt` ([`gofmt`]); YAML reading and `toYaml` come from `fleet-yaml` ([`yaml`]).
//!
//! # Errors
//!
//! Failures are typed and their `Display` text is what `helm template` prints: [`ChartError`] for loading, values
//! and rendering (naming the chart file), [`TemplateError`] for the engine (Helm's `FILE:LINE:COL` position and
//! failing expression), [`call::FuncError`] for a template function, and beneath them one error per area
//! ([`yaml::YamlError`], [`value::JsonError`], [`chart::file::ReadError`], [`funcs::crypto::CryptoError`],
//! [`funcs::semver::ImproperConstraint`]).
//!
//! # Use
//!
//! ```
//! use fleet_helm::{FileMap, RenderOptions, render_chart, values_from_json};
//!
//! let mut files = FileMap::new();
//! files.insert("Chart.yaml".into(), "apiVersion: v2\nname: web\nversion: 1.0.0\n".into());
//! files.insert("values.yaml".into(), "replicas: 1\n".into());
//! files.insert("templates/cm.yaml".into(), "kind: ConfigMap\nreplicas: {{ .Values.replicas }}\n".into());
//! let user = values_from_json(&serde_json::json!({"replicas": 3}));
//! let opts = RenderOptions { release_name: "rel".into(), ..Default::default() };
//! let rendered = render_chart(files, &user, &opts).unwrap();
//! let docs: Vec<_> = rendered.documents().collect();
//! assert_eq!(docs, [("web/templates/cm.yaml", "kind: ConfigMap\nreplicas: 3")]);
//! assert_eq!(rendered.to_helm_output(), "---\n# Source: web/templates/cm.yaml\nkind: ConfigMap\nreplicas: 3\n");
//! ```

pub mod call;
pub mod chart;
pub mod funcs;
pub mod gofloat;
pub mod gofmt;
pub mod rng;
pub mod template;
pub mod value;
pub mod yaml;

pub use chart::render::install_rank;
pub use chart::{
    ChartError, FileData, FileMap, Manifest, RenderOptions, Rendered, SetKind, apply_set,
    merge_maps, render_chart, values_from_json,
};
pub use funcs::Funcs;
pub use template::exec::MissingKey;
pub use template::lex::Syntax;
pub use template::text::{TextOptions, render_text};
pub use template::{TemplateError, TemplateSet};
pub use value::Value;
