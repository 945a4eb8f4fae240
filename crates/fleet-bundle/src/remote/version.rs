//! Chart version constraints as Helm and Fleet read `helm.version` (the Masterminds semver syntax): `||` between
//! alternatives, commas or spaces between comparators that must all hold, `=`, `!=`, `>`, `>=`, `<`, `<=`/`=<`,
//! `~`/`~>`, `^`, wildcards (`1.2.x`, `*`) and hyphen ranges (`1.2 - 1.4`); a bare version is an exact match.
//! Versions are read leniently as Helm reads chart versions (`v1.2`, `1.2` are `1.2.0`). An empty constraint is
//! "any stable version". Pre-releases match only constraints that name a pre-release.

use semver::{Comparator, Op, Prerelease, Version};

/// A parsed constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    alternatives: Vec<Vec<Term>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Term {
    Cmp(Comparator),
    NotEqual(Version),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid version constraint {constraint:?}: {message}")]
pub struct ConstraintError {
    pub constraint: String,
    pub message: String,
}

/// Parses a chart version leniently: an optional `v`, and missing minor or patch numbers as zero.
pub fn parse_version(text: &str) -> Option<Version> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    if let Ok(version) = Version::parse(text) {
        return Some(version);
    }
    let split = text.find(['-', '+']).unwrap_or(text.len());
    let (core, rest) = text.split_at(split);
    let mut parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.parse::<u64>().is_err()) {
        return None;
    }
    while parts.len() < 3 {
        parts.push("0");
    }
    Version::parse(&format!("{}{rest}", parts.join("."))).ok()
}

impl Constraint {
    pub fn parse(text: &str) -> Result<Self, ConstraintError> {
        let error = |message: String| ConstraintError {
            constraint: text.to_string(),
            message,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(Self {
                alternatives: vec![vec![]],
            });
        }
        let mut alternatives = Vec::new();
        for alternative in trimmed.split("||") {
            let tokens = tokens(alternative);
            if tokens.is_empty() {
                return Err(error("an empty alternative".to_string()));
            }
            let mut terms = Vec::new();
            let mut index = 0;
            while index < tokens.len() {
                // Hyphen range: `a - b`.
                if tokens.get(index + 1).map(String::as_str) == Some("-") {
                    let low = tokens[index].clone();
                    let high = tokens
                        .get(index + 2)
                        .ok_or_else(|| error("a hyphen range without an upper bound".into()))?;
                    terms.push(term(&format!(">={low}")).map_err(&error)?);
                    terms.push(term(&format!("<={high}")).map_err(&error)?);
                    index += 3;
                    continue;
                }
                terms.push(term(&tokens[index]).map_err(&error)?);
                index += 1;
            }
            alternatives.push(terms);
        }
        Ok(Self { alternatives })
    }

    /// Whether `version` satisfies the constraint.
    pub fn matches(&self, version: &Version) -> bool {
        self.alternatives.iter().any(|terms| {
            if !version.pre.is_empty() && !terms.iter().any(names_prerelease) {
                return false;
            }
            terms.iter().all(|term| match term {
                Term::NotEqual(excluded) => version != excluded,
                Term::Cmp(cmp) => comparator_matches(cmp, version),
            })
        })
    }
}

fn names_prerelease(term: &Term) -> bool {
    match term {
        Term::Cmp(cmp) => !cmp.pre.is_empty(),
        Term::NotEqual(v) => !v.pre.is_empty(),
    }
}

/// A comparator applied to one version, pre-releases compared by precedence (the alternative already decided
/// whether pre-releases may match at all).
fn comparator_matches(cmp: &Comparator, version: &Version) -> bool {
    let stable = Version {
        pre: Prerelease::EMPTY,
        ..version.clone()
    };
    let req = semver::VersionReq {
        comparators: vec![cmp.clone()],
    };
    if version.pre.is_empty() {
        return req.matches(version);
    }
    // semver's own rule admits pre-releases only on the comparator's exact core; Masterminds admits them
    // anywhere once the constraint names one, so compare by precedence here.
    let low = Version::new(cmp.major, cmp.minor.unwrap_or(0), cmp.patch.unwrap_or(0));
    let low = Version {
        pre: cmp.pre.clone(),
        ..low
    };
    match cmp.op {
        Op::Exact => *version == low,
        Op::Greater => *version > low,
        Op::GreaterEq => *version >= low,
        Op::Less => *version < low,
        Op::LessEq => *version <= low,
        _ => *version >= low && req.matches(&stable),
    }
}

/// Splits an alternative into comparators, gluing an operator written apart from its version.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending_op = String::new();
    for raw in text.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        if raw.chars().all(|c| "=<>!~^".contains(c)) {
            pending_op.push_str(raw);
            continue;
        }
        out.push(format!("{}{raw}", std::mem::take(&mut pending_op)));
    }
    if !pending_op.is_empty() {
        out.push(pending_op);
    }
    out
}

fn term(token: &str) -> Result<Term, String> {
    let (op, rest) = match token {
        t if t.starts_with("!=") => ("!=", &t[2..]),
        t if t.starts_with("=<") => ("<=", &t[2..]),
        t if t.starts_with("~>") => ("~", &t[2..]),
        t if t.starts_with(">=") || t.starts_with("<=") => t.split_at(2),
        t if t.starts_with(['>', '<', '=', '~', '^']) => t.split_at(1),
        t => ("", t),
    };
    let rest = rest.trim();
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    if rest == "-" {
        return Err("a hyphen range without a lower bound".to_string());
    }
    if op == "!=" {
        return parse_version(rest)
            .map(Term::NotEqual)
            .ok_or_else(|| format!("{rest:?} is not a version"));
    }
    let wildcard = rest.is_empty() || rest.split('.').any(|part| matches!(part, "x" | "X" | "*"));
    // A bare version is exact in Helm (semver's default would be a caret range); a bare wildcard is a range.
    let op = match op {
        "" if wildcard => "",
        "" => "=",
        op => op,
    };
    if rest.is_empty() || matches!(rest.split('.').next(), Some("x" | "X" | "*")) {
        // Any version at all.
        return Comparator::parse(">=0.0.0")
            .map(Term::Cmp)
            .map_err(|err| err.to_string());
    }
    Comparator::parse(&format!("{op}{rest}"))
        .map(Term::Cmp)
        .map_err(|err| format!("{token:?}: {err}"))
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
        assert_eq!(parse_version("v1.2"), Some(Version::new(1, 2, 0)));
        assert_eq!(parse_version("2"), Some(Version::new(2, 0, 0)));
        assert_eq!(parse_version("1.2.3-rc.1").unwrap().pre.as_str(), "rc.1");
        assert_eq!(parse_version("latest"), None);
    }
}
