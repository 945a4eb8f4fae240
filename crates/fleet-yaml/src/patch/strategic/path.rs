//! The location inside the document that strategic merge is working on, for error messages and the depth limit.

use crate::patch::error::MergeProblem;
use serde_json::Value;

use crate::patch::error::PatchError;

/// Deepest nesting strategic merge descends into; deeper documents are rejected instead of exhausting the stack.
pub const MAX_DEPTH: usize = 256;

/// A location such as `spec.template.spec.containers[name="app"].env`, built without allocating while descending.
#[derive(Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
    depth: usize,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Field(&'a str),
    Item { key: &'a str, id: &'a Value },
}

impl<'a> Path<'a> {
    /// The document root.
    pub fn root() -> Self {
        Self {
            parent: None,
            segment: Segment::Root,
            depth: 0,
        }
    }

    /// The member `name` of the map at this path.
    pub fn field(&'a self, name: &'a str) -> Path<'a> {
        self.child(Segment::Field(name))
    }

    /// The list item whose merge key `key` is `id`, in the list at this path.
    pub fn item(&'a self, key: &'a str, id: &'a Value) -> Path<'a> {
        self.child(Segment::Item { key, id })
    }

    fn child(&'a self, segment: Segment<'a>) -> Path<'a> {
        Path {
            parent: Some(self),
            segment,
            depth: self.depth + 1,
        }
    }

    /// An error at this path, or a nesting error when the path is deeper than [`MAX_DEPTH`].
    pub fn check_depth(&self) -> Result<(), PatchError> {
        if self.depth > MAX_DEPTH {
            return Err(self.error(MergeProblem::TooDeep { max: MAX_DEPTH }));
        }
        Ok(())
    }

    /// A [`PatchError::StrategicMerge`] at this path.
    pub fn error(&self, reason: MergeProblem) -> PatchError {
        PatchError::StrategicMerge {
            path: self.to_string(),
            reason,
        }
    }
}

impl Path<'_> {
    fn write_segments(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(parent) = self.parent else {
            return Ok(());
        };
        parent.write_segments(f)?;
        match self.segment {
            Segment::Root => Ok(()),
            Segment::Field(name) if parent.parent.is_none() => f.write_str(name),
            Segment::Field(name) => write!(f, ".{name}"),
            Segment::Item { key, id } => write!(f, "[{key}={id}]"),
        }
    }
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.parent.is_none() {
            return f.write_str("<root>");
        }
        self.write_segments(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_fields_and_items() {
        let root = Path::root();
        assert_eq!(root.to_string(), "<root>");
        let spec = root.field("spec");
        let containers = spec.field("containers");
        let id = json!("app");
        let item = containers.item("name", &id);
        let env = item.field("env");
        assert_eq!(env.to_string(), "spec.containers[name=\"app\"].env");
    }
}
