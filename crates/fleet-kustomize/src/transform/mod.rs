//! The built-in transformers a kustomization configures, in kustomize's order: namespace, name prefix/suffix,
//! labels and annotations, replica counts and images. (Patches, name references and replacements have their own
//! modules.)

pub mod images;
pub mod metadata;
pub mod names;
pub mod replicas;
