//! GitRepoRestriction checks (Fleet's `AuthorizeAndAssignDefaults` for GitRepoRestrictions):
//! the restrictions of a namespace are aggregated in name order (first non-empty default wins,
//! allow-lists are concatenated, namespace selectors are ANDed), then the GitRepo's
//! `targetNamespace`, `serviceAccount`, `repo` and `clientSecretName` are checked and defaulted.
//! Repo patterns are unanchored regular expressions, and an exact string also matches.

use serde::{Deserialize, Serialize};

use fleet_api::GitRepoRestrictionFields;

use crate::error::TargetError;
use crate::selector::LabelSelector;

/// One GitRepoRestriction as the checks read it: its name (restrictions aggregate in name order) and
/// its fields.
pub type Named<'a> = (&'a str, &'a GitRepoRestrictionFields);

/// The GitRepo fields the restrictions check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitRepoAccess {
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub repo: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub target_namespace: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub service_account: String,
    #[serde(default, deserialize_with = "crate::serde_util::null_default")]
    pub client_secret_name: String,
}

/// The checked, defaulted GitRepo fields plus the namespace selector to put on every target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Authorized {
    pub access: GitRepoAccess,
    pub allowed_target_namespace_selector: Option<LabelSelector>,
}

/// Aggregates `restrictions` (any order) and checks `gitrepo` against them.
pub fn authorize(
    gitrepo: &GitRepoAccess,
    restrictions: &[Named<'_>],
) -> Result<Authorized, TargetError> {
    if restrictions.is_empty() {
        return Ok(Authorized {
            access: gitrepo.clone(),
            allowed_target_namespace_selector: None,
        });
    }
    let agg = aggregate(restrictions);
    let target_ns = &gitrepo.target_namespace;
    if !agg.allowed_target_namespaces.is_empty() && target_ns.is_empty() {
        return Err(TargetError::Restricted(
            "empty targetNamespace denied, because allowedTargetNamespaces restriction is present"
                .into(),
        ));
    }
    if agg.allowed_target_namespace_selector.is_some() && target_ns.is_empty() {
        return Err(TargetError::Restricted(
            "empty targetNamespace denied, because allowedTargetNamespaceSelector restriction is present".into(),
        ));
    }
    let target_namespace = allowed(
        "targetNamespace",
        target_ns,
        "",
        &agg.allowed_target_namespaces,
    )?;
    let service_account = allowed(
        "serviceAccount",
        &gitrepo.service_account,
        &agg.default_service_account,
        &agg.allowed_service_accounts,
    )?;
    check_repo(&gitrepo.repo, &agg.allowed_repo_patterns)?;
    let client_secret_name = allowed(
        "clientSecretName",
        &gitrepo.client_secret_name,
        &agg.default_client_secret_name,
        &agg.allowed_client_secret_names,
    )?;
    Ok(Authorized {
        access: GitRepoAccess {
            repo: gitrepo.repo.clone(),
            target_namespace,
            service_account,
            client_secret_name,
        },
        allowed_target_namespace_selector: agg.allowed_target_namespace_selector,
    })
}

/// The `allowedTargetNamespaceSelector` of a namespace's `restrictions` (any order), ANDed as
/// [`authorize`] merges them: what Fleet's Bundle targeting puts on the options of every target of a
/// GitRepo's Bundle (`getNamespaceSelectorForBundle`). `None` when no restriction has one.
pub fn namespace_selector(restrictions: &[Named<'_>]) -> Option<LabelSelector> {
    aggregate(restrictions).allowed_target_namespace_selector
}

fn aggregate(restrictions: &[Named<'_>]) -> GitRepoRestrictionFields {
    let mut sorted: Vec<&Named<'_>> = restrictions.iter().collect();
    sorted.sort_by_key(|(name, _)| *name);
    let mut out = GitRepoRestrictionFields::default();
    for (_, r) in sorted {
        if out.default_service_account.is_empty() {
            out.default_service_account = r.default_service_account.clone();
        }
        if out.default_client_secret_name.is_empty() {
            out.default_client_secret_name = r.default_client_secret_name.clone();
        }
        out.allowed_service_accounts
            .extend(r.allowed_service_accounts.iter().cloned());
        out.allowed_client_secret_names
            .extend(r.allowed_client_secret_names.iter().cloned());
        out.allowed_repo_patterns
            .extend(r.allowed_repo_patterns.iter().cloned());
        out.allowed_target_namespaces
            .extend(r.allowed_target_namespaces.iter().cloned());
        out.allowed_target_namespace_selector = match (
            out.allowed_target_namespace_selector.take(),
            &r.allowed_target_namespace_selector,
        ) {
            (None, s) => s.clone(),
            (s, None) => s,
            (Some(mut a), Some(b)) => {
                a.match_labels.extend(b.match_labels.clone());
                a.match_expressions
                    .extend(b.match_expressions.iter().cloned());
                Some(a)
            }
        };
    }
    out
}

fn allowed(
    field: &str,
    current: &str,
    default: &str,
    allowed: &[String],
) -> Result<String, TargetError> {
    if current.is_empty() {
        return Ok(default.to_string());
    }
    if allowed.is_empty() || allowed.iter().any(|a| a == current) {
        return Ok(current.to_string());
    }
    Err(TargetError::Restricted(format!(
        "disallowed {field} {current}: {current} not in allowed set [{}]",
        allowed.join(" ")
    )))
}

/// The URL with any `user:password@` replaced by `***@`, for messages.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let host_end = url[scheme_end..]
        .find('/')
        .map_or(url.len(), |i| scheme_end + i);
    match url[scheme_end..host_end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..scheme_end], &url[scheme_end + at..]),
        None => url.to_string(),
    }
}

fn check_repo(repo: &str, patterns: &[String]) -> Result<(), TargetError> {
    if repo.is_empty() || patterns.is_empty() {
        return Ok(());
    }
    let shown = redact(repo);
    for pattern in patterns {
        if pattern == repo {
            return Ok(());
        }
        let re = regex::Regex::new(pattern).map_err(|e| {
            TargetError::Restricted(format!(
                "disallowed repo {shown}: GitRepoRestriction failed to compile regex '{pattern}': {e}"
            ))
        })?;
        if re.is_match(repo) {
            return Ok(());
        }
    }
    Err(TargetError::Restricted(format!(
        "disallowed repo {shown}: {shown} not in allowed set [{}]",
        patterns.join(" ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::SelectorExt;

    /// The borrowed view of owned (name, fields) pairs.
    fn view<'a>(list: &'a [(&'static str, GitRepoRestrictionFields)]) -> Vec<Named<'a>> {
        list.iter().map(|(name, fields)| (*name, fields)).collect()
    }

    fn repo(repo: &str, target_ns: &str, sa: &str, secret: &str) -> GitRepoAccess {
        GitRepoAccess {
            repo: repo.into(),
            target_namespace: target_ns.into(),
            service_account: sa.into(),
            client_secret_name: secret.into(),
        }
    }

    #[test]
    fn no_restrictions_allow_everything() {
        let r = repo("https://x", "", "", "");
        assert_eq!(authorize(&r, &[]).unwrap().access, r);
    }

    #[test]
    fn restrictions_table() {
        let owned = [
            (
                "b",
                GitRepoRestrictionFields {
                    default_service_account: "ignored-default".into(),
                    allowed_service_accounts: vec!["sa2".into()],
                    allowed_repo_patterns: vec!["^https://github.com/acme/".into()],
                    ..Default::default()
                },
            ),
            (
                "a",
                GitRepoRestrictionFields {
                    default_service_account: "sa1".into(),
                    default_client_secret_name: "cred".into(),
                    allowed_service_accounts: vec!["sa1".into()],
                    allowed_target_namespaces: vec!["apps".into()],
                    ..Default::default()
                },
            ),
        ];
        let restrictions = view(&owned);
        let ok = authorize(
            &repo("https://github.com/acme/app", "apps", "", ""),
            &restrictions,
        )
        .unwrap();
        assert_eq!(
            ok.access,
            repo("https://github.com/acme/app", "apps", "sa1", "cred")
        );
        let ok = authorize(
            &repo("https://github.com/acme/app", "apps", "sa2", "mine"),
            &restrictions,
        )
        .unwrap();
        assert_eq!(ok.access.service_account, "sa2");
        let errors = [
            (
                repo("https://github.com/acme/app", "", "", ""),
                "empty targetNamespace denied, because allowedTargetNamespaces restriction is present",
            ),
            (
                repo("https://github.com/acme/app", "other", "", ""),
                "disallowed targetNamespace other: other not in allowed set [apps]",
            ),
            (
                repo("https://github.com/acme/app", "apps", "root", ""),
                "disallowed serviceAccount root: root not in allowed set [sa1 sa2]",
            ),
            (
                repo("https://gitlab.com/evil/app", "apps", "", ""),
                "disallowed repo https://gitlab.com/evil/app: https://gitlab.com/evil/app not in allowed set [^https://github.com/acme/]",
            ),
        ];
        for (input, want) in errors {
            assert_eq!(
                authorize(&input, &restrictions).unwrap_err().to_string(),
                want
            );
        }
    }

    #[test]
    fn namespace_selectors_are_merged_and_require_a_target_namespace() {
        let owned = [
            (
                "a",
                GitRepoRestrictionFields {
                    allowed_target_namespace_selector: Some(LabelSelector::from_labels([(
                        "x", "1",
                    )])),
                    ..Default::default()
                },
            ),
            (
                "b",
                GitRepoRestrictionFields {
                    allowed_target_namespace_selector: Some(LabelSelector::from_labels([(
                        "y", "2",
                    )])),
                    ..Default::default()
                },
            ),
        ];
        let restrictions = view(&owned);
        let err = authorize(&repo("r", "", "", ""), &restrictions).unwrap_err();
        assert_eq!(
            err.to_string(),
            "empty targetNamespace denied, because allowedTargetNamespaceSelector restriction is present"
        );
        let ok = authorize(&repo("r", "ns", "", ""), &restrictions).unwrap();
        assert_eq!(
            ok.allowed_target_namespace_selector,
            Some(LabelSelector::from_labels([("x", "1"), ("y", "2")]))
        );
        // The same merge, in any order, for the Bundles' targeting; none without a selector.
        let reversed: Vec<Named<'_>> = restrictions.iter().rev().copied().collect();
        assert_eq!(
            namespace_selector(&reversed),
            ok.allowed_target_namespace_selector
        );
        assert_eq!(
            namespace_selector(&[("a", &GitRepoRestrictionFields::default())]),
            None
        );
        assert_eq!(namespace_selector(&[]), None);
    }

    #[test]
    fn credentials_in_repo_urls_are_not_shown() {
        let fields = GitRepoRestrictionFields {
            allowed_repo_patterns: vec!["^https://github.com/acme/".into()],
            ..Default::default()
        };
        let restrictions = [("a", &fields)];
        let err = authorize(
            &repo("https://bob:s3cret@gitlab.com/x/y", "", "", ""),
            &restrictions,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "disallowed repo https://***@gitlab.com/x/y: https://***@gitlab.com/x/y not in allowed set [^https://github.com/acme/]"
        );
        assert_eq!(
            redact("git@github.com:acme/x.git"),
            "git@github.com:acme/x.git"
        );
        assert_eq!(redact("ssh://git@host/x"), "ssh://***@host/x");
    }

    #[test]
    fn bad_regex_is_reported() {
        let fields = GitRepoRestrictionFields {
            allowed_repo_patterns: vec!["(".into()],
            ..Default::default()
        };
        let restrictions = [("a", &fields)];
        let err = authorize(&repo("r", "", "", ""), &restrictions)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("disallowed repo r: GitRepoRestriction failed to compile regex '('"),
            "{err}"
        );
    }
}
