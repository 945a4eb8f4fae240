//! What strategic merge needs to know about a type: per field, the patch strategy and list merge key (the
//! `patchStrategy` / `patchMergeKey` struct tags of k8s.io/api, or `x-kubernetes-patch-*` / list-map extensions in an
//! OpenAPI schema), and the schema of the field's value.

/// How a field is patched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strategy {
    /// No tag: maps merge recursively, lists are replaced by the patch's list.
    #[default]
    Default,
    /// `patchStrategy: merge`: lists merge item by item (maps by their merge key, primitives as sets).
    Merge,
    /// `patchStrategy: replace`: the patch's value replaces the field as a whole, maps included.
    Replace,
}

/// Patch metadata of one field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PatchMeta<'s> {
    /// The field's patch strategy.
    pub strategy: Strategy,
    /// For a merged list of objects: the member that identifies an item (`name` for containers).
    pub merge_key: Option<&'s str>,
    /// `patchStrategy: retainKeys`: the field is a union whose cleared members a generated patch lists in
    /// `$retainKeys`. Applying honours `$retainKeys` wherever it appears, so only patch creation reads this.
    pub retain_keys: bool,
}

/// A field's metadata and the schema of its value (for a list, of its items).
#[derive(Clone, Copy)]
pub struct Field<'s> {
    /// How the field is patched.
    pub meta: PatchMeta<'s>,
    /// The schema of the field's value; for lists, of each item.
    pub schema: &'s dyn MergeSchema,
}

/// The patch knowledge of one object type. Implemented by the built-in Kubernetes tables
/// ([`super::BuiltinSchema`]), by CRD OpenAPI schemas ([`super::OpenApiSchema`]: `x-kubernetes-list-map-keys`,
/// `x-kubernetes-patch-merge-key`) and by [`Schemaless`]; other sources can implement it too.
pub trait MergeSchema {
    /// Metadata and value schema of the member `name` of an object of this type; `None` when the type does not
    /// declare it, which makes the field behave like a JSON merge patch (maps merge, lists are replaced).
    fn field(&self, name: &str) -> Option<Field<'_>>;
}

/// The schema that knows nothing: every list is replaced, every map merged. Used for kinds without a schema
/// (custom resources), which is how kubectl and kustomize treat them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schemaless;

impl MergeSchema for Schemaless {
    fn field(&self, _name: &str) -> Option<Field<'_>> {
        None
    }
}

/// Looks up `name` in `schema`, falling back to no metadata and [`Schemaless`] for undeclared fields.
pub(super) fn field_of<'s>(schema: &'s dyn MergeSchema, name: &str) -> Field<'s> {
    schema.field(name).unwrap_or(Field {
        meta: PatchMeta::default(),
        schema: &Schemaless,
    })
}
