//! Azure DevOps `git.push` service hooks (`X-Vss-*` headers, authenticated with HTTP basic auth).

use serde::Deserialize;

use super::{Provider, PushEvent, WebhookError, parse_json, require_push};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    event_type: String,
}

#[derive(Deserialize)]
struct Push {
    resource: Resource,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resource {
    #[serde(default)]
    ref_updates: Vec<RefUpdate>,
    repository: Repository,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefUpdate {
    name: String,
    #[serde(default)]
    new_object_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Repository {
    #[serde(default)]
    remote_url: Option<String>,
    #[serde(default)]
    ssh_url: Option<String>,
    #[serde(default)]
    web_url: Option<String>,
}

pub(super) fn parse(body: &[u8]) -> Result<PushEvent, WebhookError> {
    let event: Event = parse_json(Provider::AzureDevOps, body)?;
    require_push(Provider::AzureDevOps, &event.event_type, &["git.push"])?;
    let push: Push = parse_json(Provider::AzureDevOps, body)?;
    let repo = push.resource.repository;
    let urls = [repo.remote_url, repo.ssh_url, repo.web_url]
        .into_iter()
        .flatten()
        .collect();
    let update = push.resource.ref_updates.into_iter().next();
    let (reference, commit) = match update {
        Some(update) => (update.name, update.new_object_id),
        None => (String::new(), None),
    };
    Ok(PushEvent::from_ref(
        Provider::AzureDevOps,
        urls,
        &reference,
        commit.as_deref(),
    ))
}

#[cfg(test)]
mod tests {
    use base64::Engine;

    use super::super::test_support::{check_provider, headers};
    use super::*;

    const PUSH: &str = r#"{
      "subscriptionId": "00000000-0000-0000-0000-000000000000",
      "notificationId": 3, "id": "03c164c2-8912-4d5e-8009-3707d5f83734",
      "eventType": "git.push", "publisherId": "tfs",
      "resource": {
        "commits": [{"commitId": "33b55f7cb7e7e245323987634f960cf4a6e6bc74", "comment": "Fixed bug in web.config file"}],
        "refUpdates": [{
          "name": "refs/heads/main",
          "oldObjectId": "aad331d8d3b131fa9ae03cf5e53965b51942618a",
          "newObjectId": "33b55f7cb7e7e245323987634f960cf4a6e6bc74"
        }],
        "repository": {
          "id": "278d5cd2-584d-4b63-824a-2ba458937249", "name": "Fabrikam-Fiber-Git",
          "url": "https://dev.azure.com/fabrikam/_apis/git/repositories/278d5cd2-584d-4b63-824a-2ba458937249",
          "project": {"name": "Fabrikam-Fiber-Git"},
          "defaultBranch": "refs/heads/main",
          "remoteUrl": "https://fabrikam@dev.azure.com/fabrikam/Fabrikam-Fiber-Git/_git/Fabrikam-Fiber-Git",
          "sshUrl": "git@ssh.dev.azure.com:v3/fabrikam/Fabrikam-Fiber-Git/Fabrikam-Fiber-Git"
        },
        "pushId": 14
      }
    }"#;

    #[test]
    fn push_is_verified_and_parsed() {
        let event = check_provider(PUSH.as_bytes(), |secret| {
            let credentials = base64::engine::general_purpose::STANDARD.encode(secret);
            headers(&[
                ("x-vss-activityid", "a8d5b7f3-0000-0000-0000-000000000000"),
                ("authorization", &format!("Basic {credentials}")),
            ])
        });
        assert_eq!(event.provider, Provider::AzureDevOps);
        assert_eq!(event.branch.as_deref(), Some("main"));
        assert_eq!(
            event.commit.as_deref(),
            Some("33b55f7cb7e7e245323987634f960cf4a6e6bc74")
        );
        assert!(event.matches(
            "git@ssh.dev.azure.com:v3/fabrikam/Fabrikam-Fiber-Git/Fabrikam-Fiber-Git",
            Some("main"),
            None
        ));
        assert!(event.matches(
            "https://dev.azure.com/fabrikam/Fabrikam-Fiber-Git/_git/Fabrikam-Fiber-Git",
            None,
            None
        ));
    }

    #[test]
    fn secret_joins_username_and_password() {
        let data = [
            ("azure-username".to_string(), b"hook".to_vec()),
            ("azure-password".to_string(), b"p4ss".to_vec()),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            super::super::secret_for(Provider::AzureDevOps, &data).as_deref(),
            Some(b"hook:p4ss".as_slice())
        );
    }
}
