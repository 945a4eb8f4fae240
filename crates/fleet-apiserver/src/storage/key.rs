//! The key every stored object is found by: resource, namespace, name.

/// Identifies one stored object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

impl ObjKey {
    pub fn new(
        resource: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjKey {
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}
