//! Bitbucket Cloud (`X-Event-Key: repo:push`, with `X-Hook-UUID`) and Bitbucket Server / Data Center
//! (`X-Event-Key: repo:refs_changed`) push events, both signed with `X-Hub-Signature: sha256=<hex>`.

use http::HeaderMap;
use serde::Deserialize;

use super::{Provider, PushEvent, WebhookError, header_str, parse_json, require_push};

#[derive(Deserialize)]
struct CloudPush {
    push: CloudChanges,
    repository: CloudRepository,
}

#[derive(Deserialize)]
struct CloudChanges {
    #[serde(default)]
    changes: Vec<CloudChange>,
}

#[derive(Deserialize)]
struct CloudChange {
    #[serde(default)]
    new: Option<CloudRef>,
}

#[derive(Deserialize)]
struct CloudRef {
    #[serde(rename = "type")]
    kind: String,
    name: String,
    #[serde(default)]
    target: Option<CloudTarget>,
}

#[derive(Deserialize)]
struct CloudTarget {
    #[serde(default)]
    hash: Option<String>,
}

#[derive(Deserialize)]
struct CloudRepository {
    #[serde(default)]
    links: CloudLinks,
    #[serde(default)]
    full_name: Option<String>,
}

#[derive(Deserialize, Default)]
struct CloudLinks {
    #[serde(default)]
    html: Option<Link>,
}

#[derive(Deserialize)]
struct Link {
    href: String,
}

pub(super) fn parse_cloud(headers: &HeaderMap, body: &[u8]) -> Result<PushEvent, WebhookError> {
    let provider = Provider::BitbucketCloud;
    require_push(provider, header_str(headers, "x-event-key"), &["repo:push"])?;
    let push: CloudPush = parse_json(provider, body)?;
    let mut urls: Vec<String> = push
        .repository
        .links
        .html
        .map(|link| link.href)
        .into_iter()
        .collect();
    if let Some(full_name) = &push.repository.full_name {
        urls.push(format!("git@bitbucket.org:{full_name}.git"));
    }
    let Some(new) = push.push.changes.into_iter().find_map(|change| change.new) else {
        // Only deletions: nothing new to fetch, but the repository still changed.
        return Ok(PushEvent::from_ref(provider, urls, "", None));
    };
    let reference = match new.kind.as_str() {
        "tag" => format!("refs/tags/{}", new.name),
        _ => format!("refs/heads/{}", new.name),
    };
    let commit = new.target.and_then(|target| target.hash);
    Ok(PushEvent::from_ref(
        provider,
        urls,
        &reference,
        commit.as_deref(),
    ))
}

#[derive(Deserialize)]
struct ServerPush {
    #[serde(default)]
    changes: Vec<ServerChange>,
    repository: ServerRepository,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerChange {
    #[serde(default)]
    ref_id: Option<String>,
    #[serde(rename = "ref", default)]
    reference: Option<ServerRef>,
    #[serde(default)]
    to_hash: Option<String>,
}

#[derive(Deserialize)]
struct ServerRef {
    id: String,
}

#[derive(Deserialize)]
struct ServerRepository {
    #[serde(default)]
    links: ServerLinks,
}

#[derive(Deserialize, Default)]
struct ServerLinks {
    #[serde(default)]
    clone: Vec<Link>,
    #[serde(rename = "self", default)]
    self_links: Vec<Link>,
}

pub(super) fn parse_server(headers: &HeaderMap, body: &[u8]) -> Result<PushEvent, WebhookError> {
    let provider = Provider::BitbucketServer;
    require_push(
        provider,
        header_str(headers, "x-event-key"),
        &["repo:refs_changed"],
    )?;
    let push: ServerPush = parse_json(provider, body)?;
    let links = push.repository.links;
    let urls = links
        .clone
        .into_iter()
        .chain(links.self_links)
        .map(|link| link.href)
        .collect();
    let change = push.changes.into_iter().next();
    let (reference, commit) = match change {
        Some(change) => (
            change
                .reference
                .map(|r| r.id)
                .or(change.ref_id)
                .unwrap_or_default(),
            change.to_hash,
        ),
        None => (String::new(), None),
    };
    Ok(PushEvent::from_ref(
        provider,
        urls,
        &reference,
        commit.as_deref(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::signature::sign;
    use super::super::test_support::{assert_body_is_signed, check_provider, headers};
    use super::*;

    const CLOUD_PUSH: &str = r#"{
      "actor": {"display_name": "Dev", "type": "user"},
      "repository": {
        "type": "repository", "full_name": "team/infra", "name": "infra",
        "links": {"html": {"href": "https://bitbucket.org/team/infra"}},
        "uuid": "{4a4b1d8c-0000-0000-0000-000000000000}"
      },
      "push": {"changes": [{
        "old": {"type": "branch", "name": "release", "target": {"hash": "1e65c05c1d5171631d92438a13901ca7dae9618c"}},
        "new": {"type": "branch", "name": "release", "target": {"type": "commit", "hash": "709d658dc5b6d6afcd46049c2f332ee3f515a67d"}},
        "created": false, "forced": false, "closed": false
      }]}
    }"#;

    const SERVER_PUSH: &str = r#"{
      "eventKey": "repo:refs_changed", "date": "2024-01-01T10:00:00+0000",
      "actor": {"name": "admin"},
      "repository": {
        "slug": "deploy", "name": "deploy", "project": {"key": "OPS"},
        "links": {
          "clone": [
            {"href": "ssh://git@bitbucket.example.com:7999/ops/deploy.git", "name": "ssh"},
            {"href": "https://bitbucket.example.com/scm/ops/deploy.git", "name": "http"}
          ],
          "self": [{"href": "https://bitbucket.example.com/projects/OPS/repos/deploy/browse"}]
        }
      },
      "changes": [{
        "ref": {"id": "refs/heads/main", "displayId": "main", "type": "BRANCH"},
        "refId": "refs/heads/main",
        "fromHash": "ecddabb624f6f5ba43816f5926e580a5f680a932",
        "toHash": "178864a7d521b6f5e720b386b2c2b0ef8563e0dc",
        "type": "UPDATE"
      }]
    }"#;

    #[test]
    fn cloud_push_is_verified_and_parsed() {
        let signed = |secret: &[u8]| {
            headers(&[
                ("x-event-key", "repo:push"),
                ("x-hook-uuid", "f9c7a8e2-0000-0000-0000-000000000000"),
                (
                    "x-hub-signature",
                    &format!("sha256={}", sign(secret, CLOUD_PUSH.as_bytes())),
                ),
            ])
        };
        let event = check_provider(CLOUD_PUSH.as_bytes(), signed);
        assert_body_is_signed(CLOUD_PUSH.as_bytes(), signed);
        assert_eq!(event.provider, Provider::BitbucketCloud);
        assert_eq!(event.branch.as_deref(), Some("release"));
        assert_eq!(
            event.commit.as_deref(),
            Some("709d658dc5b6d6afcd46049c2f332ee3f515a67d")
        );
        assert!(event.matches("git@bitbucket.org:team/infra.git", Some("release"), None));
    }

    #[test]
    fn cloud_push_without_signature_is_checked_by_uuid() {
        let event = check_provider(CLOUD_PUSH.as_bytes(), |secret| {
            headers(&[
                ("x-event-key", "repo:push"),
                ("x-hook-uuid", std::str::from_utf8(secret).unwrap()),
            ])
        });
        assert_eq!(event.branch.as_deref(), Some("release"));
    }

    #[test]
    fn server_push_is_verified_and_parsed() {
        let signed = |secret: &[u8]| {
            headers(&[
                ("x-event-key", "repo:refs_changed"),
                ("x-request-id", "b5e2c4d6-0000"),
                (
                    "x-hub-signature",
                    &format!("sha256={}", sign(secret, SERVER_PUSH.as_bytes())),
                ),
            ])
        };
        let event = check_provider(SERVER_PUSH.as_bytes(), signed);
        assert_body_is_signed(SERVER_PUSH.as_bytes(), signed);
        assert_eq!(event.provider, Provider::BitbucketServer);
        assert_eq!(event.branch.as_deref(), Some("main"));
        assert_eq!(
            event.commit.as_deref(),
            Some("178864a7d521b6f5e720b386b2c2b0ef8563e0dc")
        );
        assert!(event.matches(
            "https://bitbucket.example.com/scm/ops/deploy.git",
            Some("main"),
            None
        ));
        assert!(event.matches(
            "ssh://git@bitbucket.example.com:7999/ops/deploy.git",
            None,
            None
        ));
    }
}
