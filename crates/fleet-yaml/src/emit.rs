//! Emitting YAML in the styles of go-yaml v2 (Helm `toYaml`) and kyaml (kustomize). (Owner: yaml-core helper.)
