//! Chart version constraints as Helm and Fleet read `helm.version`: the Masterminds semver syntax, parsed and
//! matched by fleet-helm's [`fleet_helm::funcs::semver`] (the same rules as Sprig's `semverCompare`), with Helm's
//! reading of an empty constraint as "any stable version". Versions are read leniently as Helm reads chart
//! versions (`v1.2`, `1.2` are `1.2.0`).

use std::cmp::Ordering;

use fleet_helm::funcs::semver;
pub use fleet_helm::funcs::semver::{Version, parse_version};

/// A parsed constraint.
pub struct Constraint(semver::Constraint);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid version constraint {constraint:?}: {message}")]
pub struct ConstraintError {
    pub constraint: String,
    pub message: String,
}

impl Constraint {
    pub fn parse(text: &str) -> Result<Self, ConstraintError> {
        let trimmed = text.trim();
        let constraint = if trimmed.is_empty() { "*" } else { trimmed };
        semver::Constraint::parse(constraint)
            .map(Constraint)
            .map_err(|improper| ConstraintError {
                constraint: text.to_string(),
                message: improper.to_string(),
            })
    }

    /// Whether `version` satisfies the constraint.
    pub fn matches(&self, version: &Version) -> bool {
        self.0.matches(version)
    }
}

/// Version precedence (build metadata ignored), for choosing the highest matching version.
pub fn compare(a: &Version, b: &Version) -> Ordering {
    semver::compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(constraint: &str, version: &str) -> bool {
        Constraint::parse(constraint)
            .unwrap()
            .matches(&parse_version(version).unwrap())
    }

    #[test]
    fn helm_constraints() {
        assert!(ok("~1.2", "1.2.9"));
        assert!(!ok("~1.2", "1.3.0"));
        assert!(ok(">=2.0.0 <3", "2.5.1"));
        assert!(!ok(">=2.0.0 <3", "3.0.0"));
        assert!(ok(">= 2.0.0, < 3", "2.0.0"));
        assert!(ok("1.2.3", "1.2.3"));
        assert!(!ok("1.2.3", "1.2.4"), "bare versions are exact, not ^");
        assert!(ok("^1.2", "1.9.0"));
        assert!(ok("1.2.x", "1.2.7"));
        assert!(!ok("1.2.x", "1.3.0"));
        assert!(ok("*", "4.0.0"));
        assert!(ok("", "4.0.0"));
        assert!(!ok("", "4.0.0-rc.1"), "no constraint: stable only");
        assert!(!ok(">=1.0.0", "2.0.0-beta.1"));
        assert!(ok(">=1.0.0-0", "2.0.0-beta.1"));
        assert!(ok("1.0 - 1.4.0", "1.4.0"));
        assert!(!ok("1.0 - 1.4.0", "1.4.1"));
        assert!(ok("<1 || >=3", "3.1.0"));
        assert!(!ok("<1 || >=3", "2.0.0"));
        assert!(!ok("!=1.1.0", "1.1.0"));
        assert!(ok("=<1.1.0", "1.1.0"));
        assert!(ok("~>1.1", "1.1.5"));
        assert!(ok("v1.2.3", "1.2.3"));
        assert!(Constraint::parse(">=banana").is_err());
        assert!(Constraint::parse("1 || ").is_err());
    }

    #[test]
    fn lenient_versions() {
        let core = |text: &str| parse_version(text).map(|v| (v.major, v.minor, v.patch, v.pre));
        assert_eq!(core("v1.2"), Some((1, 2, 0, String::new())));
        assert_eq!(core("2"), Some((2, 0, 0, String::new())));
        assert_eq!(parse_version("1.2.3-rc.1").unwrap().pre.as_str(), "rc.1");
        assert_eq!(parse_version("latest"), None);
    }
}
