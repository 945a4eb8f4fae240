//! YAML 1.1 parsing with locations, Helm-style YAML emitting, JSON/merge/strategic-merge patches. Pure: no I/O.
