//! The one error type of the crate, and its warnings. Every variant names the file (or directory) at fault and says
//! what to fix; none carries document values, which may be secret.

/// Why a kustomization could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A YAML document could not be read (its file, line and column are in the inner error).
    #[error(transparent)]
    Yaml(#[from] fleet_yaml::Error),
    /// A directory listed as a base or component has no kustomization file.
    #[error(
        "{dir}: no kustomization.yaml, kustomization.yml or Kustomization file in this directory"
    )]
    MissingKustomization {
        /// The directory searched.
        dir: String,
    },
    /// A file or directory named in a kustomization does not exist.
    #[error(
        "{file}: {field} entry {entry:?} does not exist ({resolved}); fix the path or add the file"
    )]
    Missing {
        /// The kustomization file naming it.
        file: String,
        /// The field naming it, e.g. `resources`.
        field: String,
        /// The entry as written.
        entry: String,
        /// The path it resolved to inside the tree.
        resolved: String,
    },
    /// A path leaves the directory it may load from (Fleet's load restriction: root only).
    #[error(
        "{file}: {field} entry {entry:?} is outside the kustomization's directory {root}; \
         files may only be loaded from the kustomization's own directory tree"
    )]
    OutsideRoot {
        /// The kustomization file.
        file: String,
        /// The field naming the path.
        field: String,
        /// The entry as written.
        entry: String,
        /// The kustomization's directory.
        root: String,
    },
    /// Kustomizations refer to each other in a loop.
    #[error("cycle between kustomizations: {chain}; remove one of these references")]
    Cycle {
        /// The directories in the loop, `a -> b -> a`.
        chain: String,
    },
    /// The kustomization file is invalid: unknown field, wrong type, unsupported feature, bad value.
    #[error("{file}{}: {message}", .location.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The file at fault.
        file: String,
        /// Where in the file, when known.
        location: Option<fleet_yaml::Location>,
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl Error {
    /// An [`Error::Invalid`] without a position.
    pub(crate) fn invalid(file: &str, message: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.to_string(),
            location: None,
            message: message.into(),
        }
    }
}

/// Something the build accepted, as `kubectl kustomize` does, but that probably does not do what its author meant
/// (a patch whose `target` selects no resource). Shown to the user; never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The kustomization file at fault.
    pub file: String,
    /// What happened and how to fix it.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
