//! Parsing YAML 1.1 documents (as Helm and kubectl read them) into typed values or `serde_json::Value`, with
//! source positions. serde-saphyr does the reading; this module fixes its options to go-yaml's semantics
//! (YAML 1.1 booleans, legacy octal, merge keys) and adds limits, key conversion and positions.
//!
//! Checked against Helm 4 and kubectl 1.34 (`testdata/yaml/emit/`, `tests/*_goldens.rs`). Known differences from
//! go-yaml: a lone `-` in a flow sequence (`[a, -, b]`) is a syntax error here.

mod build;
mod convert;
mod fast;
mod node;
mod options;
mod typed;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use self::build::{Build, JsonTree};
use self::node::{Node, Positions};
pub use self::options::{DuplicateKeys, Options, Schema};
pub use crate::error::{Error, Location};

/// Reads the first YAML document into `T` with the default [`Options`], the way Fleet and Helm (Go) read YAML into
/// structs: YAML 1.1 → JSON → `T`, so strings stay strings only where Go's would, and integral floats fit integer
/// fields. `origin` names the input in errors, which carry the position of the offending key or item.
pub fn from_str<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, Error> {
    from_str_with(&Options::default(), text, origin)
}

/// [`from_str`] with explicit options.
pub fn from_str_with<T: DeserializeOwned>(
    options: &Options,
    text: &str,
    origin: &str,
) -> Result<T, Error> {
    let located = located_with(options, text, origin)?;
    typed::deserialize(located.value, &located.positions, origin)
}

/// [`from_str`] into a plain JSON value, without recording positions (which only typed errors need): the first
/// document, `null` when there is none, integral floats read back as integers as Go reads its own JSON.
pub fn first_value(text: &str, origin: &str) -> Result<Value, Error> {
    build_first_value(text, origin, &mut JsonTree)
}

/// [`first_value`] built straight into the caller's tree by `build`, node by node, with the same reading (and
/// errors): the common block YAML of values files is read into it without a `serde_json::Value` in between.
pub fn build_first_value<B: Build>(
    text: &str,
    origin: &str,
    build: &mut B,
) -> Result<B::Node, Error> {
    let options = Options::default();
    if text.len() <= options.max_bytes
        && let Some(value) = fast::first_value_with(text, build)
    {
        return Ok(value);
    }
    first_value_full(&options, text, origin).map(|value| build.json(value))
}

/// [`first_value`] through the full parser.
fn first_value_full(options: &Options, text: &str, origin: &str) -> Result<Value, Error> {
    let Some(node) = nodes(options, text, origin)?.into_iter().next() else {
        return Ok(Value::Null);
    };
    let mut value = with_stack(options, text, || {
        convert::into_value(node, text, options.schema, None)
    })
    .map_err(|f| failure(f, origin))?;
    typed::go_json_numbers(&mut value);
    Ok(value)
}

/// Reads every document of a `---` separated stream; empty and null documents are dropped.
pub fn documents(text: &str, origin: &str) -> Result<Vec<Value>, Error> {
    documents_with(&Options::default(), text, origin)
}

/// [`documents`] with explicit options.
pub fn documents_with(options: &Options, text: &str, origin: &str) -> Result<Vec<Value>, Error> {
    stream(options, text, origin, |node| {
        convert::into_value(node, text, options.schema, None).map_err(|f| failure(f, origin))
    })
}

/// Every document of a stream with positions (lines count from the start of the stream); empty and null
/// documents are dropped.
pub fn located_documents(text: &str, origin: &str) -> Result<Vec<Located>, Error> {
    located_documents_with(&Options::default(), text, origin)
}

/// [`located_documents`] with explicit options.
pub fn located_documents_with(
    options: &Options,
    text: &str,
    origin: &str,
) -> Result<Vec<Located>, Error> {
    stream(options, text, origin, |node| {
        let mut positions = Positions::new();
        let value = convert::into_value(node, text, options.schema, Some(&mut positions))
            .map_err(|f| failure(f, origin))?;
        Ok(Located {
            origin: origin.to_string(),
            value,
            positions,
        })
    })
}

/// Reads a `---` stream, converting each non-null document.
fn stream<T>(
    options: &Options,
    text: &str,
    origin: &str,
    convert: impl Fn(Node) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let nodes = nodes(options, text, origin)?;
    with_stack(options, text, || nodes.into_iter().map(convert).collect())
}

/// The non-null documents of a `---` stream, as node trees.
fn nodes(options: &Options, text: &str, origin: &str) -> Result<Vec<Node>, Error> {
    check_size(options, text, origin)?;
    with_stack(options, text, || {
        let nodes: Vec<Node> = serde_saphyr::from_multiple_with_options(text, options.saphyr())
            .map_err(|e| convert_error(&e, origin, options))?;
        Ok(nodes
            .into_iter()
            .filter(|n| !matches!(n.value, node::Kind::Null))
            .collect())
    })
}

/// One document as a JSON value, with the position of every node.
#[derive(Debug, Clone)]
pub struct Located {
    origin: String,
    value: Value,
    positions: Positions,
}

impl Located {
    /// The document.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The document, dropping positions.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// Where the node at an RFC 6901 JSON pointer is written: for a mapping entry, its key; for a sequence item,
    /// the item; `""` is the document. `None` for pointers that do not exist.
    pub fn location(&self, json_pointer: &str) -> Option<Location> {
        self.positions.get(json_pointer).copied()
    }

    /// The name of the input, as given to the parser.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The document as a `T`, read the way Go reads YAML into structs (sigs.k8s.io/yaml: YAML → JSON →
    /// `encoding/json`); errors name the position of the offending key or item.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, Error> {
        typed::deserialize(self.value.clone(), &self.positions, &self.origin)
    }
}

/// Reads the first YAML document with positions, as go-yaml's `Unmarshal` reads only the first (a trailing `---`
/// is fine). An empty input is `null`.
pub fn located(text: &str, origin: &str) -> Result<Located, Error> {
    located_with(&Options::default(), text, origin)
}

/// [`located`] with explicit options.
pub fn located_with(options: &Options, text: &str, origin: &str) -> Result<Located, Error> {
    let first = nodes(options, text, origin)?.into_iter().next();
    let mut positions = Positions::new();
    let value = match first {
        Some(node) => with_stack(options, text, || {
            convert::into_value(node, text, options.schema, Some(&mut positions))
        })
        .map_err(|f| failure(f, origin))?,
        None => Value::Null,
    };
    Ok(Located {
        origin: origin.to_string(),
        value,
        positions,
    })
}

fn failure((location, message): convert::Failure, origin: &str) -> Error {
    Error::new(origin, location, message)
}

/// Stack one nesting level may take while serde-saphyr descends (measured in debug builds, with a margin).
const STACK_PER_LEVEL: usize = 64 * 1024;

/// Runs a parse with enough stack for the nesting `text` can have (at most `options.max_depth` levels), on a fresh
/// stack segment of this thread when the current one is too small, so deep input is a depth error and never a
/// stack overflow.
fn with_stack<R>(options: &Options, text: &str, parse: impl FnOnce() -> R) -> R {
    // Each level needs a new line or a flow opener.
    let openers = text
        .bytes()
        .filter(|b| matches!(b, b'\n' | b'[' | b'{'))
        .count();
    let depth = options.max_depth.min(openers.saturating_add(2));
    let needed = depth
        .saturating_mul(STACK_PER_LEVEL)
        .saturating_add(1 << 20);
    stacker::maybe_grow(needed, needed, parse)
}

fn check_size(options: &Options, text: &str, origin: &str) -> Result<(), Error> {
    if text.len() > options.max_bytes {
        return Err(Error::new(
            origin,
            None,
            format!(
                "document is {} bytes, larger than the limit of {} bytes",
                text.len(),
                options.max_bytes
            ),
        ));
    }
    Ok(())
}

/// Converts a serde-saphyr error: its position, and its text in our words where its own names our settings.
fn convert_error(error: &serde_saphyr::Error, origin: &str, options: &Options) -> Error {
    let location = error.location().as_ref().and_then(node::location);
    let render = {
        let mut r = serde_saphyr::RenderOptions::default();
        r.snippets = serde_saphyr::SnippetMode::Off;
        r
    };
    let mut message = error.render_with_options(render);
    // The position is ours to print; serde-saphyr appends it (and alias sites) to its text.
    if let Some(cut) = message.find(" at line ") {
        message.truncate(cut);
    }
    let message = if message.contains("alias replay limit exceeded")
        || message.contains("RecordedAnchorEvents")
    {
        format!(
            "too many alias expansions (more than {} replayed nodes): a possible alias bomb",
            options.max_alias_replay
        )
    } else if message.contains("Depth {") {
        format!("nesting is deeper than {} levels", options.max_depth)
    } else if let Some(breach) = message.strip_prefix("budget breached: ") {
        format!("document exceeds a size limit ({breach})")
    } else if message.starts_with("non-finite float") {
        "infinity and NaN are not allowed: JSON cannot represent them".to_string()
    } else if let Some((duplicate, _)) = message.split_once(", set DuplicateKeyPolicy") {
        duplicate.to_string()
    } else {
        message
    };
    Error::new(origin, location, message.trim().to_string())
}

#[cfg(test)]
mod tests;
