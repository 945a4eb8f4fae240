//! `allowedTargetNamespaceSelector`: a BundleDeployment deploys only into an existing target namespace whose
//! labels match; otherwise its `Deployed` condition says why and nothing is applied.

mod common;

use std::collections::BTreeMap;

use common::*;
use fleet_api::{BundleDeploymentOptions, LabelSelector};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};
use serde_json::json;

async fn labelled_namespace(client: &kube::Client, name: &str, team: &str) {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"team": team}}}))
            .unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
}

fn restricted_to_team_a(namespace: &str) -> BundleDeploymentOptions {
    BundleDeploymentOptions {
        target_namespace: namespace.to_string(),
        allowed_target_namespace_selector: Some(LabelSelector {
            match_labels: BTreeMap::from([("team".to_string(), "a".to_string())]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn only_existing_matching_target_namespaces_are_deployed_to() {
    let (hub, downstream) = hub_with_agent().await;
    labelled_namespace(&downstream.client, "team-a", "a").await;
    labelled_namespace(&downstream.client, "team-b", "b").await;
    let files = [("cm.yaml", config_map("settings", "v"))];
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, c)| (*n, c.as_str())).collect();
    let cases = [
        ("allowed", "team-a", None),
        (
            "denied",
            "team-b",
            Some("namespace team-b does not match allowedTargetNamespaceSelector"),
        ),
        (
            "missing",
            "team-c",
            Some(
                "namespace team-c does not exist; allowedTargetNamespaceSelector requires an existing namespace",
            ),
        ),
    ];
    for (name, namespace, refusal) in cases {
        let id = publish(
            &hub.client,
            name,
            &borrowed,
            restricted_to_team_a(namespace),
            |_| {},
        )
        .await;
        let status = wait_status(&hub.client, name, "deployed or refused", |s| {
            s.conditions.iter().any(|c| c.type_ == "Deployed")
        })
        .await;
        let config_maps: Api<ConfigMap> = Api::namespaced(downstream.client.clone(), namespace);
        let applied = config_maps.get_opt("settings").await.unwrap().is_some();
        match refusal {
            None => {
                assert_eq!(condition(&status, "Deployed").status, "True", "{name}");
                assert_eq!(status.applied_deployment_id, id);
                assert!(applied, "{name}: applied");
            }
            Some(message) => {
                assert_eq!(condition(&status, "Deployed").message, message, "{name}");
                assert_eq!(status.display.state, "ErrApplied", "{name}");
                assert!(!applied, "{name}: nothing applied");
            }
        }
    }
}
