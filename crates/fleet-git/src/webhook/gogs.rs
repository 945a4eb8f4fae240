//! Gogs and Gitea push events (`X-Gogs-Event`/`X-Gitea-Event`, signed with a bare hex HMAC in
//! `X-Gogs-Signature`/`X-Gitea-Signature`); the payload is GitHub's shape.

use http::HeaderMap;

use super::{Provider, PushEvent, WebhookError, header_str, require_push};

pub(super) fn parse(headers: &HeaderMap, body: &[u8]) -> Result<PushEvent, WebhookError> {
    let event = match header_str(headers, "x-gitea-event") {
        "" => header_str(headers, "x-gogs-event"),
        gitea => gitea,
    };
    require_push(Provider::Gogs, event, &["push"])?;
    super::github::parse_payload(Provider::Gogs, body)
}

#[cfg(test)]
mod tests {
    use super::super::signature::sign;
    use super::super::test_support::{assert_body_is_signed, check_provider, headers};
    use super::*;

    const PUSH: &str = r#"{
      "ref": "refs/heads/develop",
      "before": "28e1879d029cb852e4844d9c718537df08844e03",
      "after": "bffeb74224043ba2feb48d137756c8a9331c449a",
      "compare_url": "https://gitea.example.com/org/app/compare/28e1879d...bffeb742",
      "commits": [{"id": "bffeb74224043ba2feb48d137756c8a9331c449a", "message": "webhooks"}],
      "repository": {
        "id": 140, "name": "app", "full_name": "org/app",
        "html_url": "https://gitea.example.com/org/app",
        "ssh_url": "git@gitea.example.com:org/app.git",
        "clone_url": "https://gitea.example.com/org/app.git",
        "default_branch": "main"
      },
      "pusher": {"login": "gitea"}
    }"#;

    #[test]
    fn gitea_push_is_verified_and_parsed() {
        let signed = |secret: &[u8]| {
            headers(&[
                ("x-gitea-event", "push"),
                ("x-gogs-event", "push"),
                ("x-github-event", "push"),
                ("x-gitea-signature", &sign(secret, PUSH.as_bytes())),
            ])
        };
        let event = check_provider(PUSH.as_bytes(), signed);
        assert_body_is_signed(PUSH.as_bytes(), signed);
        assert_eq!(
            event.provider,
            Provider::Gogs,
            "Gitea's GitHub header does not win"
        );
        assert_eq!(event.branch.as_deref(), Some("develop"));
        assert!(event.matches("https://gitea.example.com/org/app", Some("develop"), None));
    }

    #[test]
    fn gogs_push_is_verified_and_parsed() {
        let signed = |secret: &[u8]| {
            headers(&[
                ("x-gogs-event", "push"),
                ("x-gogs-signature", &sign(secret, PUSH.as_bytes())),
            ])
        };
        let event = check_provider(PUSH.as_bytes(), signed);
        assert_body_is_signed(PUSH.as_bytes(), signed);
        assert_eq!(
            event.commit.as_deref(),
            Some("bffeb74224043ba2feb48d137756c8a9331c449a")
        );
    }
}
