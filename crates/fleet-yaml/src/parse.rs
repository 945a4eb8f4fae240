//! Parsing YAML 1.1 documents into `serde_json::Value` with source locations. (Owner: yaml-core helper.)
