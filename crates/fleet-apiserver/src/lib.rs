//! Embedded Kubernetes-compatible API server (axum), usable in-process as a tower service or over HTTP(S).
