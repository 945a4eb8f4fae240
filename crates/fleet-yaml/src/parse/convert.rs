//! Turning a node tree into `serde_json::Value` the way go-yaml reads it (v2 for Helm and kubectl, v3 for
//! kustomize), plus a table of positions by JSON pointer. serde-saphyr's reading is corrected where go-yaml
//! differs, by looking at how each scalar was spelled in the source: boolean spellings, numbers it leaves as text
//! (`1_000.5`), non-finite spellings, v3 timestamps, kustomize's annotations.

use serde_json::{Map, Value};

use super::node::{KeyText, Kind, Node, Positions, location};
use super::options::Schema;
use crate::error::Location;
use crate::{gofmt, resolve, timestamp};

/// What serde-saphyr hands over for the non-finite floats it reads.
const SAPHYR_NON_FINITE: [&str; 3] = [".nan", ".inf", "-.inf"];

/// A conversion failure: where, and why.
pub(crate) type Failure = (Option<Location>, String);

/// Turns a node tree into a JSON value; records positions into `positions` when given.
/// `source` is the parsed text, used to check how scalars were spelled.
pub(crate) fn into_value(
    node: Node,
    source: &str,
    schema: Schema,
    positions: Option<&mut Positions>,
) -> Result<Value, Failure> {
    let mut walk = Walk {
        source,
        schema,
        pointer: String::new(),
        positions,
        failure: None,
        in_flow: false,
    };
    walk.record(&node.referenced);
    let value = walk.convert(node);
    walk.failure.map_or(Ok(value), Err)
}

struct Walk<'a> {
    source: &'a str,
    schema: Schema,
    pointer: String,
    positions: Option<&'a mut Positions>,
    /// The first failure met; conversion goes on without it.
    failure: Option<Failure>,
    /// Inside a flow collection (`[…]`, `{…}`).
    in_flow: bool,
}

impl Walk<'_> {
    /// A boolean as go-yaml reads it: the value, or (`None`) a string when the spelling is not one go-yaml knows
    /// (then the source text is the value).
    fn boolean(&self, value: bool, at: &serde_saphyr::Location) -> Option<bool> {
        let known: &[&str] = match self.schema {
            Schema::GoYamlV2 => &resolve::V2_BOOLEANS,
            Schema::GoYamlV3 => &resolve::V3_BOOLEANS,
        };
        match self.text(at) {
            Some(t) if !known.contains(&t) && bool_word(t) => None,
            _ => Some(value),
        }
    }

    /// The source text of a scalar.
    fn text(&self, at: &serde_saphyr::Location) -> Option<&str> {
        let span = at.span();
        let (start, len) = span.byte_offset().zip(span.byte_len())?;
        let start = usize::try_from(start).ok()?;
        self.source
            .get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }

    /// A string as go-yaml reads it. For untagged plain scalars: numbers serde-saphyr leaves as text
    /// (`1_000.5`) become numbers, and go-yaml v3 turns timestamps into RFC 3339 text.
    fn string(&mut self, s: String, at: &serde_saphyr::Location) -> Value {
        let folded = self.block_header(at).and_then(|h| h.strip_prefix('>'));
        if let Some(header) = folded.filter(|_| self.schema == Schema::GoYamlV3) {
            return Value::String(go_yaml_v3_folded(&s, header.contains('+')));
        }
        if let Some(spelling) = self.non_finite_spelling(&s, at) {
            if resolve::NON_FINITE.contains(&spelling.as_str()) {
                self.failure.get_or_insert_with(|| {
                    (
                        location(at),
                        "infinity and NaN are not allowed: JSON cannot represent them".into(),
                    )
                });
                return Value::Null;
            }
            return Value::String(spelling);
        }
        if !self.untagged_plain(&s, at) {
            return Value::String(s);
        }
        if let Some(n) = resolve::number(&s) {
            return Value::Number(n);
        }
        // kustomize converts timestamps, except space-separated ones inside flow collections.
        let converts =
            |s: &str| self.schema == Schema::GoYamlV3 && !(self.in_flow && s.contains(' '));
        match timestamp::parse(&s).filter(|_| converts(&s)) {
            Some(t) => Value::String(t.to_rfc3339()),
            None => Value::String(s),
        }
    }

    /// A text key as sigs.k8s.io/yaml converts it: plain number spellings serde-saphyr left as text become the
    /// number's JSON key.
    fn key(&self, text: String, at: &serde_saphyr::Location) -> String {
        if let Some(spelling) = self.non_finite_spelling(&text, at) {
            // go-yaml's own spellings are float keys (`.inf`, `.nan` in JSON); others are text.
            return if resolve::NON_FINITE.contains(&spelling.as_str()) {
                text
            } else {
                spelling
            };
        }
        match resolve::number(&text).filter(|_| self.untagged_plain(&text, at)) {
            Some(n) => n
                .as_f64()
                .filter(|_| n.is_f64())
                .map_or_else(|| n.to_string(), gofmt::yaml_key_float),
            None => text,
        }
    }

    /// For a plain scalar serde-saphyr read as a non-finite float (and passed on as `.nan`, `.inf`, `-.inf`): how
    /// it was spelled.
    fn non_finite_spelling(&self, s: &str, at: &serde_saphyr::Location) -> Option<String> {
        if !SAPHYR_NON_FINITE.contains(&s) {
            return None;
        }
        let text = self.text(at)?;
        let plain =
            !text.starts_with(['"', '\'']) && !self.tagged(at) && self.block_header(at).is_none();
        plain.then(|| text.to_string())
    }

    /// kustomize keeps the values of a resource's `metadata.annotations` as written (`1.50`, `~`, `2024-01-01`
    /// stay text): for [`Schema::GoYamlV3`], the text of a scalar there.
    fn kustomize_annotation(&self, node: &Node) -> Option<String> {
        if self.schema != Schema::GoYamlV3
            || matches!(node.value, Kind::Sequence(_) | Kind::Mapping(_))
        {
            return None;
        }
        let key = self.pointer.strip_prefix("/metadata/annotations/")?;
        if key.contains('/') {
            return None;
        }
        let block = self.block_header(&node.referenced).is_some();
        match (&node.value, self.text(&node.referenced)) {
            (Kind::String(s), Some(t)) if block || t.starts_with(['"', '\'']) => Some(s.clone()),
            (_, Some(t)) => Some(t.to_string()),
            (Kind::String(s), None) => Some(s.clone()),
            (_, None) => Some(String::new()),
        }
    }

    /// Whether a tag (`!!str`, `!foo`) precedes the node.
    fn tagged(&self, at: &serde_saphyr::Location) -> bool {
        let start = at
            .span()
            .byte_offset()
            .and_then(|o| usize::try_from(o).ok())
            .unwrap_or(0);
        let before = self
            .source
            .get(..start)
            .unwrap_or("")
            .trim_end_matches([' ', '\t']);
        let last_token = before
            .rsplit([' ', '\t', '\n', '[', '{', ','])
            .next()
            .unwrap_or("");
        last_token.starts_with('!')
    }

    /// Whether a string node was written as a plain scalar (its source text is the value) without a tag.
    fn untagged_plain(&self, s: &str, at: &serde_saphyr::Location) -> bool {
        self.text(at) == Some(s) && !self.tagged(at) && self.block_header(at).is_none()
    }

    /// For a block scalar, its header (`|`, `>-`, `|2+`…): the last token of the line before its content
    /// (serde-saphyr's span starts at the content).
    fn block_header(&self, at: &serde_saphyr::Location) -> Option<&str> {
        let start = at
            .span()
            .byte_offset()
            .and_then(|o| usize::try_from(o).ok())?;
        let before = self
            .source
            .get(..start)?
            .trim_end_matches([' ', '\t', '\n', '\r']);
        let line = before.rsplit('\n').next()?;
        let line = line.split(" #").next()?.trim_end();
        let token = line.rsplit([' ', '\t']).next()?;
        token.starts_with(['|', '>']).then_some(token)
    }

    fn record(&mut self, at: &serde_saphyr::Location) {
        if let (Some(table), Some(l)) = (self.positions.as_deref_mut(), location(at)) {
            table.insert(self.pointer.clone(), l);
        }
    }

    fn convert(&mut self, node: Node) -> Value {
        let outer_flow = self.in_flow;
        if matches!(node.value, Kind::Sequence(_) | Kind::Mapping(_)) {
            let start = node
                .referenced
                .span()
                .byte_offset()
                .and_then(|o| usize::try_from(o).ok());
            let opener = start
                .and_then(|o| self.source.get(o..))
                .and_then(|rest| rest.chars().next());
            self.in_flow |= matches!(opener, Some('[' | '{'));
        }
        let value = self.convert_node(node);
        self.in_flow = outer_flow;
        value
    }

    fn convert_node(&mut self, node: Node) -> Value {
        if let Some(text) = self.kustomize_annotation(&node) {
            return Value::String(text);
        }
        match node.value {
            Kind::Null => Value::Null,
            Kind::Bool(b) => match self.boolean(b, &node.referenced) {
                Some(b) => Value::Bool(b),
                None => Value::String(self.text(&node.referenced).unwrap_or_default().to_string()),
            },
            Kind::Number(n) => Value::Number(n),
            Kind::String(s) => self.string(s, &node.referenced),
            Kind::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (index, item) in items.into_iter().enumerate() {
                    let len = self.pointer.len();
                    self.pointer.push('/');
                    self.pointer.push_str(&index.to_string());
                    self.record(&item.referenced);
                    out.push(self.convert(item));
                    self.pointer.truncate(len);
                }
                Value::Array(out)
            }
            Kind::Mapping(entries) => {
                let mut out = Map::with_capacity(entries.len());
                for (key, value) in entries {
                    let key_text = match key.value {
                        KeyText::Text(t) => self.key(t, &key.referenced),
                        KeyText::Bool(b) => match self.boolean(b, &key.referenced) {
                            Some(b) => b.to_string(),
                            None => self.text(&key.referenced).unwrap_or_default().to_string(),
                        },
                    };
                    let len = self.pointer.len();
                    self.pointer.push('/');
                    push_escaped(&mut self.pointer, &key_text);
                    self.record(&key.referenced);
                    let converted = self.convert(value);
                    self.pointer.truncate(len);
                    // A repeated converted key (`1` and `"1"`) keeps the last, like a Go map assignment.
                    out.shift_remove(&key_text);
                    out.insert(key_text, converted);
                }
                Value::Object(out)
            }
        }
    }
}

/// A folded block scalar as go-yaml v3 reads it, from the YAML spec's reading: one more line break before a
/// more-indented line that follows an ordinary one (across blank lines), and one more at the end of a kept
/// (`>+`) scalar that ends in blank lines.
fn go_yaml_v3_folded(value: &str, keep: bool) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    let mut after_ordinary_line = false;
    for (i, line) in value.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let more_indented = line.starts_with([' ', '\t']);
        if more_indented && after_ordinary_line {
            out.push('\n');
        }
        out.push_str(line);
        if !line.is_empty() {
            after_ordinary_line = !more_indented;
        }
    }
    if keep && value.ends_with("\n\n") {
        out.push('\n');
    }
    out
}

/// Whether a plain scalar is some case mix of a YAML 1.1 boolean word (what serde-saphyr may read as one).
fn bool_word(text: &str) -> bool {
    ["y", "yes", "true", "on", "n", "no", "false", "off"]
        .iter()
        .any(|w| text.eq_ignore_ascii_case(w))
}

/// Appends a reference token escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
pub(crate) fn push_escaped(pointer: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}
