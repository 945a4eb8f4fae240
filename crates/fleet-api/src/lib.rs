//! Fleet-compatible API types (fleet.cattle.io/v1alpha1) and CRD generation. Pure: no I/O.
