//! GitHub push events (`X-GitHub-Event: push`, signed with `X-Hub-Signature-256`), and the GitHub-shaped
//! payload that Gogs and Gitea send too.

use http::HeaderMap;
use serde::Deserialize;

use super::{Provider, PushEvent, WebhookError, header_str, parse_json, require_push};

#[derive(Deserialize)]
struct Push {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(default)]
    after: Option<String>,
    repository: Repository,
}

#[derive(Deserialize)]
struct Repository {
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    clone_url: Option<String>,
    #[serde(default)]
    ssh_url: Option<String>,
}

pub(super) fn parse(headers: &HeaderMap, body: &[u8]) -> Result<PushEvent, WebhookError> {
    require_push(
        Provider::GitHub,
        header_str(headers, "x-github-event"),
        &["push"],
    )?;
    parse_payload(Provider::GitHub, body)
}

/// A GitHub-shaped push payload (`ref`, `after`, `repository.{html,clone,ssh}_url`) from `provider`.
pub(super) fn parse_payload(provider: Provider, body: &[u8]) -> Result<PushEvent, WebhookError> {
    let push: Push = parse_json(provider, body)?;
    let repo = push.repository;
    Ok(PushEvent::from_ref(
        provider,
        [repo.html_url, repo.clone_url, repo.ssh_url]
            .into_iter()
            .flatten()
            .collect(),
        &push.reference,
        push.after.as_deref(),
    ))
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::super::signature::sign;
    use super::super::test_support::{assert_body_is_signed, check_provider, headers};
    use super::super::verify_and_parse;
    use super::*;

    const PUSH: &str = r#"{
      "ref": "refs/heads/feature/x",
      "before": "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
      "after": "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
      "created": false, "deleted": false, "forced": false,
      "repository": {
        "id": 186853002, "name": "fleet-examples", "full_name": "Rancher/fleet-examples",
        "html_url": "https://github.com/Rancher/fleet-examples",
        "clone_url": "https://github.com/Rancher/fleet-examples.git",
        "ssh_url": "git@github.com:Rancher/fleet-examples.git",
        "git_url": "git://github.com/Rancher/fleet-examples.git",
        "default_branch": "master"
      },
      "pusher": {"name": "octocat", "email": "octocat@example.invalid"},
      "head_commit": {"id": "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", "message": "Update README.md"}
    }"#;

    fn signed(body: &[u8]) -> impl Fn(&[u8]) -> HeaderMap + '_ {
        move |secret| {
            headers(&[
                ("x-github-event", "push"),
                ("x-github-delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"),
                (
                    "x-hub-signature-256",
                    &format!("sha256={}", sign(secret, body)),
                ),
                ("content-type", "application/json"),
            ])
        }
    }

    #[test]
    fn push_is_verified_and_parsed() {
        let event = check_provider(PUSH.as_bytes(), signed(PUSH.as_bytes()));
        assert_body_is_signed(PUSH.as_bytes(), signed(PUSH.as_bytes()));
        assert_eq!(event.branch.as_deref(), Some("feature/x"));
        assert_eq!(event.tag, None);
        assert_eq!(
            event.commit.as_deref(),
            Some("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c")
        );
        assert_eq!(event.repo_urls.len(), 3);
        assert!(event.matches(
            "https://github.com/rancher/fleet-examples",
            Some("feature/x"),
            None
        ));
        assert!(event.matches("git@github.com:rancher/fleet-examples", None, None));
        assert!(!event.matches(
            "https://github.com/rancher/fleet-examples",
            Some("main"),
            None
        ));
        assert!(!event.matches(
            "https://github.com/rancher/fleet-examples",
            None,
            Some("v1")
        ));
        assert!(!event.matches("https://github.com/rancher/fleet", None, None));
    }

    #[test]
    fn missing_signature_is_unauthorized() {
        let err = verify_and_parse(
            &Method::POST,
            &headers(&[("x-github-event", "push")]),
            PUSH.as_bytes(),
            Some(b"s"),
        )
        .unwrap_err();
        assert_eq!(err.status(), http::StatusCode::UNAUTHORIZED);
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn ping_and_deleted_branches() {
        let ping = br#"{"zen": "Keep it logically awesome.", "hook_id": 1}"#;
        let err = verify_and_parse(
            &Method::POST,
            &headers(&[("x-github-event", "ping")]),
            ping,
            None,
        )
        .unwrap_err();
        assert_eq!(err.status(), http::StatusCode::OK);
        let deleted = PUSH.replace(
            "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c\",\n      \"created",
            "0000000000000000000000000000000000000000\",\n      \"created",
        );
        let event = verify_and_parse(
            &Method::POST,
            &headers(&[("x-github-event", "push")]),
            deleted.as_bytes(),
            None,
        )
        .unwrap();
        assert_eq!(event.commit, None);
    }

    #[test]
    fn tag_push_names_the_tag() {
        let body = PUSH.replace("refs/heads/feature/x", "refs/tags/v1.2.0");
        let event = verify_and_parse(
            &Method::POST,
            &headers(&[("x-github-event", "push")]),
            body.as_bytes(),
            None,
        )
        .unwrap();
        assert_eq!((event.branch, event.tag.as_deref()), (None, Some("v1.2.0")));
    }
}
