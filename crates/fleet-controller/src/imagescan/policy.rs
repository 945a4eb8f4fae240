//! The newest tag by an ImageScan's policy, as Fleet's tag scan chooses it: the highest semantic version
//! within a range (Masterminds' lenient versions, `v1.2` included; pre-releases only when the range names one;
//! the tag returned as written), or the last (`desc`, the default) or first (`asc`) tag in byte order. No
//! policy is semver `*`.

use fleet_api::ImagePolicyChoice;
use fleet_bundle::remote::version::{Constraint, ConstraintError, compare, parse_version};

/// Why no tag could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("no tag found")]
    NoTags,
    #[error("policy.semver.range: an empty range")]
    EmptyRange,
    #[error("policy.semver.range: {0}")]
    BadRange(#[from] ConstraintError),
    #[error("no available version matching {0}")]
    NoMatch(String),
}

/// The tag `policy` selects among `tags`.
pub fn latest_tag(policy: &ImagePolicyChoice, tags: &[String]) -> Result<String, PolicyError> {
    if tags.is_empty() {
        return Err(PolicyError::NoTags);
    }
    if let Some(semver) = &policy.semver {
        return semver_latest(&semver.range, tags);
    }
    if let Some(alphabetical) = &policy.alphabetical {
        // Fleet's code (not the field's doc comment, which says the opposite) takes the greatest tag for
        // `desc` and for an empty order, and the least for anything else.
        let descending =
            alphabetical.order.is_empty() || alphabetical.order.eq_ignore_ascii_case("desc");
        let chosen = if descending {
            tags.iter().max()
        } else {
            tags.iter().min()
        };
        return Ok(chosen.cloned().unwrap_or_default());
    }
    semver_latest("*", tags)
}

fn semver_latest(range: &str, tags: &[String]) -> Result<String, PolicyError> {
    // Masterminds refuses an empty constraint (Fleet passes the range as written).
    if range.trim().is_empty() {
        return Err(PolicyError::EmptyRange);
    }
    let constraint = Constraint::parse(range)?;
    tags.iter()
        .filter_map(|tag| parse_version(tag).map(|version| (version, tag)))
        .filter(|(version, _)| constraint.matches(version))
        .max_by(|(a, _), (b, _)| compare(a, b))
        .map(|(_, tag)| tag.clone())
        .ok_or_else(|| PolicyError::NoMatch(range.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{AlphabeticalPolicy, SemVerPolicy};

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    fn semver(range: &str) -> ImagePolicyChoice {
        ImagePolicyChoice {
            semver: Some(SemVerPolicy {
                range: range.to_string(),
            }),
            alphabetical: None,
        }
    }

    fn alphabetical(order: &str) -> ImagePolicyChoice {
        ImagePolicyChoice {
            semver: None,
            alphabetical: Some(AlphabeticalPolicy {
                order: order.to_string(),
            }),
        }
    }

    #[test]
    fn semver_takes_the_highest_in_range_as_written() {
        let all = tags(&["latest", "1.0.0", "v1.10.0", "1.9.3", "2.0.0-rc.1", "0.9"]);
        assert_eq!(latest_tag(&semver("*"), &all).unwrap(), "v1.10.0");
        assert_eq!(
            latest_tag(&ImagePolicyChoice::default(), &all).unwrap(),
            "v1.10.0"
        );
        assert_eq!(latest_tag(&semver("<1.5"), &all).unwrap(), "1.0.0");
        // Pre-releases count only when the range names one (Fleet's documented example).
        assert_eq!(
            latest_tag(&semver(">= 2.0.0-rc.0"), &all).unwrap(),
            "2.0.0-rc.1"
        );
        assert_eq!(
            latest_tag(&semver(">=3"), &all).unwrap_err(),
            PolicyError::NoMatch(">=3".into())
        );
        let Err(PolicyError::BadRange(bad)) = latest_tag(&semver("not a range"), &all) else {
            panic!("not a range is refused");
        };
        assert_eq!(bad.constraint, "not a range");
        assert_eq!(
            latest_tag(&semver(" "), &all).unwrap_err(),
            PolicyError::EmptyRange
        );
        assert_eq!(
            latest_tag(&semver("*"), &[]).unwrap_err(),
            PolicyError::NoTags
        );
    }

    #[test]
    fn alphabetical_follows_fleets_code() {
        let all = tags(&["b", "c", "a"]);
        assert_eq!(latest_tag(&alphabetical(""), &all).unwrap(), "c");
        assert_eq!(latest_tag(&alphabetical("DESC"), &all).unwrap(), "c");
        assert_eq!(latest_tag(&alphabetical("asc"), &all).unwrap(), "a");
    }
}
