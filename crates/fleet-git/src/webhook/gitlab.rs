//! GitLab push and tag push events (`X-Gitlab-Event`, authenticated by `X-Gitlab-Token`).

use http::HeaderMap;
use serde::Deserialize;

use super::{Provider, PushEvent, WebhookError, header_str, parse_json, require_push};

#[derive(Deserialize)]
struct Push {
    #[serde(rename = "ref")]
    reference: String,
    #[serde(default)]
    checkout_sha: Option<String>,
    #[serde(default)]
    after: Option<String>,
    project: Project,
}

#[derive(Deserialize)]
struct Project {
    #[serde(default)]
    web_url: Option<String>,
    #[serde(default)]
    git_http_url: Option<String>,
    #[serde(default)]
    git_ssh_url: Option<String>,
}

pub(super) fn parse(headers: &HeaderMap, body: &[u8]) -> Result<PushEvent, WebhookError> {
    require_push(
        Provider::GitLab,
        header_str(headers, "x-gitlab-event"),
        &["Push Hook", "Tag Push Hook"],
    )?;
    let push: Push = parse_json(Provider::GitLab, body)?;
    let project = push.project;
    Ok(PushEvent::from_ref(
        Provider::GitLab,
        [project.web_url, project.git_http_url, project.git_ssh_url]
            .into_iter()
            .flatten()
            .collect(),
        &push.reference,
        push.checkout_sha.or(push.after).as_deref(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_provider, headers};

    const PUSH: &str = r#"{
      "object_kind": "push", "event_name": "push",
      "before": "95790bf891e76fee5e1747ab589903a6a1f80f22",
      "after": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      "ref": "refs/heads/main",
      "checkout_sha": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      "user_name": "John Smith", "project_id": 15,
      "project": {
        "id": 15, "name": "Diaspora",
        "web_url": "https://gitlab.example.com/mike/diaspora",
        "git_ssh_url": "git@gitlab.example.com:mike/diaspora.git",
        "git_http_url": "https://gitlab.example.com/mike/diaspora.git",
        "namespace": "Mike", "path_with_namespace": "mike/diaspora", "default_branch": "main"
      },
      "commits": [], "total_commits_count": 0
    }"#;

    #[test]
    fn push_is_verified_and_parsed() {
        let event = check_provider(PUSH.as_bytes(), |secret| {
            headers(&[
                ("x-gitlab-event", "Push Hook"),
                ("x-gitlab-token", std::str::from_utf8(secret).unwrap()),
            ])
        });
        assert_eq!(event.branch.as_deref(), Some("main"));
        assert_eq!(
            event.commit.as_deref(),
            Some("da1560886d4f094c3e6c9ef40349f7d38b5d27d7")
        );
        assert!(event.matches(
            "ssh://git@gitlab.example.com:2222/mike/diaspora.git",
            Some("main"),
            None
        ));
    }

    #[test]
    fn other_events_are_ignored() {
        let err = super::super::verify_and_parse(
            &http::Method::POST,
            &headers(&[("x-gitlab-event", "Merge Request Hook")]),
            PUSH.as_bytes(),
            None,
        )
        .unwrap_err();
        assert_eq!(err.status(), http::StatusCode::OK, "{err}");
    }
}
