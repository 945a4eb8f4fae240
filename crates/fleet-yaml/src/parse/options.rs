//! Parsing limits and policies, and their translation into serde-saphyr options.

/// What to do when a mapping repeats a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicateKeys {
    /// The later entry replaces the earlier one (go-yaml v2 `Unmarshal`, hence Helm values).
    LastWins,
    /// Reject the document (go-yaml v3, `kubectl` strict decoding).
    Error,
}

/// Which Go YAML library's reading rules to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// go-yaml v2 through sigs.k8s.io/yaml, as Helm and kubectl read: YAML 1.1 booleans (`yes`, `on`, `y`, …),
    /// timestamps kept as strings.
    GoYamlV2,
    /// go-yaml v3, as kustomize (kyaml) reads: only `true`/`false` (any case form Go accepts) are booleans,
    /// unquoted timestamps become RFC 3339 strings (`2024-01-01` → `2024-01-01T00:00:00Z`), and the values of the
    /// document's `metadata.annotations` stay text as written (`1.50`, `~`), as kustomize rewrites them.
    GoYamlV3,
}

/// Parsing options. `Options::default()` reads YAML 1.1 the way Helm and kubectl do, with limits that keep
/// hostile input (alias bombs, huge files, deep nesting) from exhausting memory or time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Largest accepted input in bytes. Default 10 MiB.
    pub max_bytes: usize,
    /// Largest number of nodes (scalars, sequences, mappings) after alias expansion. Default 2,000,000.
    pub max_nodes: usize,
    /// Deepest nesting of sequences and mappings. Default 500.
    pub max_depth: usize,
    /// Largest number of parser events replayed by alias expansion (billion-laughs guard). Default 100,000.
    pub max_alias_replay: usize,
    /// Duplicate keys policy. Default [`DuplicateKeys::LastWins`].
    pub duplicate_keys: DuplicateKeys,
    /// Scalar reading rules. Default [`Schema::GoYamlV2`].
    pub schema: Schema,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_bytes: 10 * 1024 * 1024,
            max_nodes: 2_000_000,
            max_depth: 500,
            max_alias_replay: 100_000,
            duplicate_keys: DuplicateKeys::LastWins,
            schema: Schema::GoYamlV2,
        }
    }
}

impl Options {
    /// The defaults with kustomize's reading rules: [`Schema::GoYamlV3`], duplicate keys rejected (as
    /// `kubectl kustomize` does: "mapping key already defined").
    pub fn kustomize() -> Self {
        Self {
            schema: Schema::GoYamlV3,
            duplicate_keys: DuplicateKeys::Error,
            ..Self::default()
        }
    }

    /// The serde-saphyr options implementing these: YAML 1.1 booleans and legacy octal, merge keys, limits.
    pub(crate) fn saphyr(&self) -> serde_saphyr::Options {
        let mut budget = serde_saphyr::Budget::default();
        budget.max_nodes = self.max_nodes;
        budget.max_events = self.max_nodes.saturating_mul(3);
        budget.max_depth = self.max_depth;
        budget.max_reader_input_bytes = Some(self.max_bytes);
        budget.max_total_scalar_bytes = self.max_bytes.saturating_mul(4);
        budget.max_aliases = self.max_nodes;
        budget.max_recorded_anchor_events = self.max_alias_replay.saturating_mul(10);
        budget.max_anchors = self.max_nodes;

        let mut alias_limits = serde_saphyr::options::AliasLimits::default();
        alias_limits.max_total_replayed_events = self.max_alias_replay;
        alias_limits.max_replay_stack_depth = self.max_depth;

        let mut options = serde_saphyr::Options::default();
        options.budget = Some(budget);
        options.alias_limits = alias_limits;
        options.legacy_octal_numbers = true;
        options.strict_booleans = false;
        options.duplicate_keys = match self.duplicate_keys {
            DuplicateKeys::LastWins => serde_saphyr::options::DuplicateKeyPolicy::LastWins,
            DuplicateKeys::Error => serde_saphyr::options::DuplicateKeyPolicy::Error,
        };
        options.merge_keys = serde_saphyr::options::MergeKeyPolicy::Merge;
        options.non_finite_float_policy = serde_saphyr::options::NonFiniteFloatPolicy::AsString;
        options.with_snippet = false;
        options.emit_comments = false;
        options
    }
}
