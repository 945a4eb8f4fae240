//! Sprig's `semver` and `semverCompare`, with the constraint language of Masterminds/semver v3 that Helm charts
//! are written against (`>=1.21-0`, `^1.2`, `~1.2.3`, `1.x`, `>= 1.19, < 1.22 || 2.x`) and its pre-release rule.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{FuncResult, Table, arity, err, str_arg};
use crate::value::{Value, map_value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub build: String,
}

/// Parses a version loosely, as Masterminds' `NewVersion` does (`v` prefix, missing minor/patch).
pub fn parse_version(s: &str) -> Option<Version> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let (core, build) = match s.split_once('+') {
        Some((c, b)) => (c, b.to_string()),
        None => (s, String::new()),
    };
    let (core, pre) = match core.split_once('-') {
        Some((c, p)) => (c, p.to_string()),
        None => (core, String::new()),
    };
    let mut nums = core.split('.');
    let major = nums.next()?.parse().ok()?;
    let minor = match nums.next() {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    let patch = match nums.next() {
        Some(p) => p.parse().ok()?,
        None => 0,
    };
    if nums.next().is_some() {
        return None;
    }
    Some(Version {
        major,
        minor,
        patch,
        pre,
        build,
    })
}

fn cmp_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (mut ia, mut ib) = (a.split('.'), b.split('.'));
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let o = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(n), Ok(m)) => n.cmp(&m),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    _ => x.cmp(y),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

pub fn compare(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| cmp_pre(&a.pre, &b.pre))
}

/// One comparator: an operator and a version in which trailing parts may be wildcards.
struct Comparator {
    op: String,
    version: Version,
    /// How many of major/minor/patch were given as numbers (3 = all; fewer = wildcard or missing).
    given: usize,
}

fn parse_comparator(s: &str) -> Option<Comparator> {
    let s = s.trim();
    let op_len = s
        .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
        .unwrap_or(s.len());
    let op = s[..op_len].trim().to_string();
    let rest = s[op_len..].trim();
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let (core, tail) = match rest.find(['-', '+']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut given = 0;
    let mut nums = [0u64; 3];
    for (i, part) in core.split('.').enumerate() {
        if i >= 3 {
            return None;
        }
        if matches!(part, "x" | "X" | "*") {
            break;
        }
        nums[i] = part.parse().ok()?;
        given = i + 1;
    }
    let v = format!("{}.{}.{}{tail}", nums[0], nums[1], nums[2]);
    Some(Comparator {
        op,
        version: parse_version(&v)?,
        given,
    })
}

fn bump(v: &Version, part: usize) -> Version {
    let mut n = Version {
        major: v.major,
        minor: v.minor,
        patch: v.patch,
        pre: String::new(),
        build: String::new(),
    };
    match part {
        0 => {
            n.major += 1;
            n.minor = 0;
            n.patch = 0;
        }
        1 => {
            n.minor += 1;
            n.patch = 0;
        }
        _ => n.patch += 1,
    }
    n
}

impl Comparator {
    fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        let lower_ok = |inclusive: bool| {
            let o = compare(v, c);
            o == Ordering::Greater || (inclusive && o == Ordering::Equal)
        };
        let below = |upper: &Version| compare(v, upper) == Ordering::Less;
        match self.op.as_str() {
            "" | "=" | "==" => {
                if self.given >= 3 {
                    compare(v, c) == Ordering::Equal
                } else if self.given == 0 {
                    true
                } else {
                    lower_ok(true) && below(&bump(c, self.given - 1))
                }
            }
            "!=" => {
                if self.given >= 3 {
                    compare(v, c) != Ordering::Equal
                } else if self.given == 0 {
                    false
                } else {
                    !(lower_ok(true) && below(&bump(c, self.given - 1)))
                }
            }
            ">" => {
                if self.given >= 3 || self.given == 0 {
                    lower_ok(false)
                } else {
                    !below(&bump(c, self.given - 1))
                }
            }
            ">=" | "=>" => lower_ok(true),
            "<" => compare(v, c) == Ordering::Less,
            "<=" | "=<" => {
                if self.given >= 3 || self.given == 0 {
                    compare(v, c) != Ordering::Greater
                } else {
                    below(&bump(c, self.given - 1))
                }
            }
            "~" | "~>" => {
                let upper = if self.given <= 1 {
                    bump(c, 0)
                } else {
                    bump(c, 1)
                };
                lower_ok(true) && below(&upper)
            }
            "^" => {
                let upper = if c.major > 0 || self.given <= 1 {
                    bump(c, 0)
                } else if c.minor > 0 || self.given == 2 {
                    bump(c, 1)
                } else {
                    bump(c, 2)
                };
                lower_ok(true) && below(&upper)
            }
            _ => false,
        }
    }
}

/// A constraint Masterminds' `NewConstraint` refuses (worded as it words it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("improper constraint: {constraint}")]
pub struct ImproperConstraint {
    /// The constraint as written.
    pub constraint: String,
}

/// A version constraint as Masterminds' `NewConstraint` reads it: alternatives separated by `||`, each a list of
/// comparators (separated by commas or spaces) that must all hold, hyphen ranges (`1.2 - 1.4.5`) among them.
pub struct Constraint {
    alternatives: Vec<Vec<Comparator>>,
}

fn is_operator(token: &str) -> bool {
    token.chars().all(|c| "<>=!~^".contains(c))
}

impl Constraint {
    /// Parses every alternative; an unparsable one is an error even when an earlier one would match.
    pub fn parse(constraint: &str) -> Result<Constraint, ImproperConstraint> {
        let improper = || ImproperConstraint {
            constraint: constraint.to_string(),
        };
        let mut alternatives = Vec::new();
        for alt in constraint.split("||") {
            // An operator written apart from its version belongs to the version that follows it.
            let mut tokens: Vec<String> = Vec::new();
            for tok in alt.replace(',', " ").split_whitespace() {
                match tokens.last_mut() {
                    Some(last) if is_operator(last) => last.push_str(tok),
                    _ => tokens.push(tok.to_string()),
                }
            }
            if tokens.is_empty() {
                return Err(improper());
            }
            let mut comparators = Vec::new();
            let mut index = 0;
            while index < tokens.len() {
                if tokens.get(index + 1).map(String::as_str) == Some("-") {
                    // A hyphen range `low - high` is `>=low <=high`.
                    let high = tokens.get(index + 2).ok_or_else(improper)?;
                    for bound in [format!(">={}", tokens[index]), format!("<={high}")] {
                        comparators.push(parse_comparator(&bound).ok_or_else(improper)?);
                    }
                    index += 3;
                    continue;
                }
                comparators.push(parse_comparator(&tokens[index]).ok_or_else(improper)?);
                index += 1;
            }
            alternatives.push(comparators);
        }
        Ok(Constraint { alternatives })
    }

    /// Whether `version` satisfies some alternative. A pre-release satisfies only alternatives that name one.
    pub fn matches(&self, version: &Version) -> bool {
        self.alternatives.iter().any(|comparators| {
            let has_pre = comparators.iter().any(|c| !c.version.pre.is_empty());
            (version.pre.is_empty() || has_pre) && comparators.iter().all(|c| c.matches(version))
        })
    }
}

/// Does `version` satisfy `constraint`? Errors on unparsable constraints.
pub fn satisfies(constraint: &str, version: &Version) -> Result<bool, ImproperConstraint> {
    Ok(Constraint::parse(constraint)?.matches(version))
}

pub(super) fn register(t: &mut Table) {
    t.insert("semverCompare", |_, a| semver_compare("semverCompare", a));
    t.insert("mustSemverCompare", |_, a| {
        semver_compare("mustSemverCompare", a)
    });
    t.insert("semver", |_, a| {
        arity("semver", a, 1)?;
        let s = str_arg(&a[0]);
        let Some(v) = parse_version(&s) else {
            return err("Invalid Semantic Version");
        };
        let mut m = BTreeMap::new();
        m.insert("Major".to_string(), Value::from(v.major as i64));
        m.insert("Minor".to_string(), Value::from(v.minor as i64));
        m.insert("Patch".to_string(), Value::from(v.patch as i64));
        m.insert("Prerelease".to_string(), Value::from(v.pre.clone()));
        m.insert("Metadata".to_string(), Value::from(v.build.clone()));
        m.insert("Original".to_string(), Value::from(s));
        Ok(map_value(m))
    });
}

fn semver_compare(name: &str, a: &[Value]) -> FuncResult {
    arity(name, a, 2)?;
    let Some(v) = parse_version(&str_arg(&a[1])) else {
        return err("Invalid Semantic Version");
    };
    satisfies(&str_arg(&a[0]), &v)
        .map(Value::from)
        .map_err(super::FuncError::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(c: &str, v: &str) -> bool {
        satisfies(c, &parse_version(v).unwrap()).unwrap()
    }

    #[test]
    fn constraints_like_masterminds() {
        assert!(ok(">=1.21-0", "v1.33.0"));
        assert!(ok(">=1.19.0-0", "1.33.0"));
        assert!(!ok("<1.19-0", "v1.33.0"));
        assert!(ok(">= 1.19, < 1.34", "1.33.0"));
        assert!(ok("^1.2.0", "1.9.0"));
        assert!(!ok("^1.2.0", "2.0.0"));
        assert!(ok("~1.2.3", "1.2.9"));
        assert!(!ok("~1.2.3", "1.3.0"));
        assert!(ok("1.x", "1.5.0"));
        assert!(ok("<1.0 || >=1.30", "1.33.0"));
        assert!(!ok(">=1.0", "1.33.0-rc.1"));
        assert!(ok(">=1.0-0", "1.33.0-rc.1"));
        assert!(ok("1.0 - 1.4.0", "1.4.0"));
        assert!(!ok("1.0 - 1.4.0", "1.4.1"));
        assert!(
            ok("1.0 - 1.4", "1.4.9"),
            "a partial upper bound covers its minor, as <=1.4 does"
        );
    }

    #[test]
    fn every_alternative_must_parse() {
        let version = parse_version("1.2.3").unwrap();
        assert_eq!(
            satisfies("1.2.3 || >=banana", &version),
            Err(ImproperConstraint {
                constraint: "1.2.3 || >=banana".into()
            })
        );
        assert_eq!(
            satisfies("1.2.3 || >=banana", &version)
                .unwrap_err()
                .to_string(),
            "improper constraint: 1.2.3 || >=banana"
        );
        assert!(satisfies("1 || ", &version).is_err());
        assert!(satisfies("1.0 -", &version).is_err());
    }
}
