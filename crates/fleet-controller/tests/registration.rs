//! Cluster registration against an embedded API server that requires authentication: the controller
//! grants a ClusterRegistration exactly the RBAC an agent needs, and the granted token is refused
//! everything else; registration tokens get their agent values and are deleted when they expire.

mod support;

use std::collections::BTreeSet;

use fleet_api::{BundleDeployment, Cluster, ClusterRegistration, ClusterRegistrationToken};
use fleet_controller::cluster::registration::{SYSTEM_REGISTRATION_NAMESPACE, grant_secret_name};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use support::*;

fn text(secret: &Secret, key: &str) -> String {
    let data = secret.data.clone().unwrap_or_default();
    String::from_utf8(data.get(key).map(|b| b.0.clone()).unwrap_or_default()).unwrap()
}

async fn register(client: &Client, name: &str, client_id: &str) -> ClusterRegistration {
    let registration: ClusterRegistration = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterRegistration",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"clientID": client_id, "clientRandom": format!("random-{name}"),
            "clusterLabels": {"env": "prod", "fleet.cattle.io/reserved": "x"}},
    }))
    .unwrap();
    Api::<ClusterRegistration>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &registration)
        .await
        .unwrap()
}

async fn wait_for_grant(client: &Client, registration: &ClusterRegistration) -> Secret {
    let name = grant_secret_name(
        &registration.spec.client_id,
        &registration.spec.client_random,
    );
    let secrets: Api<Secret> = Api::namespaced(client.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    eventually("the grant secret", || {
        let secrets = secrets.clone();
        let name = name.clone();
        async move { secrets.get_opt(&name).await.ok().flatten() }
    })
    .await
}

/// Every (namespace, rule) granted to the ServiceAccount, flattened to comparable strings.
async fn granted_rules(client: &Client, namespace: &str, account: &str) -> BTreeSet<String> {
    let is_subject = |subjects: &Option<Vec<k8s_openapi::api::rbac::v1::Subject>>| {
        subjects.iter().flatten().any(|s| {
            s.kind == "ServiceAccount"
                && s.name == account
                && s.namespace.as_deref() == Some(namespace)
        })
    };
    let mut rules = BTreeSet::new();
    let describe = |scope: &str, rule: &k8s_openapi::api::rbac::v1::PolicyRule| {
        format!(
            "{scope}: {:?} {:?} {:?} {:?}",
            rule.api_groups.clone().unwrap_or_default(),
            rule.resources.clone().unwrap_or_default(),
            rule.resource_names.clone().unwrap_or_default(),
            rule.verbs
        )
    };
    for binding in Api::<RoleBinding>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        if !is_subject(&binding.subjects) {
            continue;
        }
        let scope = binding.namespace().unwrap();
        let role_rules = if binding.role_ref.kind == "Role" {
            Api::<Role>::namespaced(client.clone(), &scope)
                .get(&binding.role_ref.name)
                .await
                .unwrap()
                .rules
        } else {
            Api::<ClusterRole>::all(client.clone())
                .get(&binding.role_ref.name)
                .await
                .unwrap()
                .rules
        };
        for rule in role_rules.unwrap_or_default() {
            rules.insert(describe(&scope, &rule));
        }
    }
    for binding in Api::<ClusterRoleBinding>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        if !is_subject(&binding.subjects) {
            continue;
        }
        let role = Api::<ClusterRole>::all(client.clone())
            .get(&binding.role_ref.name)
            .await
            .unwrap();
        for rule in role.rules.unwrap_or_default() {
            rules.insert(describe("*", &rule));
        }
    }
    rules
}

fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 403)
}

async fn cluster_namespace_of(client: &Client, name: &str) -> String {
    let clusters: Api<Cluster> = Api::namespaced(client.clone(), NS);
    eventually("the cluster namespace", || {
        let clusters = clusters.clone();
        async move {
            let cluster = clusters.get_opt(name).await.ok().flatten()?;
            Some(cluster.status?.namespace).filter(|ns| !ns.is_empty())
        }
    })
    .await
}

async fn create_deployment(client: &Client, namespace: &str, name: &str) {
    let bd: BundleDeployment = serde_json::from_value(json!({
        "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "BundleDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"deploymentID": "s-1:abc"},
    }))
    .unwrap();
    Api::<BundleDeployment>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &bd)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_registration_is_granted_exactly_its_own_cluster() {
    let hub = authenticated_hub().await;
    let admin = hub.client.clone();
    put_cluster(&admin, "other", &[]).await;
    let controller = RunningController::start(admin.clone()).await;
    let registration = register(&admin, "request-1", "client-1").await;
    let grant = wait_for_grant(&admin, &registration).await;

    let cluster_name = text(&grant, "clusterName");
    let cluster_ns = text(&grant, "deploymentNamespace");
    assert_eq!(text(&grant, "clusterNamespace"), NS);
    assert_eq!(
        cluster_ns,
        fleet_controller::cluster::cluster_namespace(NS, &cluster_name)
    );
    let cluster = Api::<Cluster>::namespaced(admin.clone(), NS)
        .get(&cluster_name)
        .await
        .unwrap();
    assert_eq!(cluster.spec.client_id, "client-1");
    assert_eq!(
        cluster.labels().get("env").map(String::as_str),
        Some("prod")
    );
    assert!(!cluster.labels().contains_key("fleet.cattle.io/reserved"));
    let granted = eventually("the registration marked granted", || {
        let api = Api::<ClusterRegistration>::namespaced(admin.clone(), NS);
        async move {
            let status = api.get("request-1").await.ok()?.status?;
            status.granted.then_some(status)
        }
    })
    .await;
    assert_eq!(granted.cluster_name, cluster_name);

    // Exactly these rules, nothing else.
    let account =
        fleet_bundle::names::safe_concat_name(&["request-1", &registration.uid().unwrap()]);
    let rules = granted_rules(&admin, &cluster_ns, &account).await;
    let expected: BTreeSet<String> = [
        format!(
            "{cluster_ns}: [\"fleet.cattle.io\"] [\"bundledeployments\"] [] [\"get\", \"list\", \"watch\"]"
        ),
        format!(
            "{cluster_ns}: [\"fleet.cattle.io\"] [\"bundledeployments/status\"] [] [\"update\", \"patch\"]"
        ),
        format!("{cluster_ns}: [\"\"] [\"secrets\", \"configmaps\"] [] [\"get\"]"),
        format!(
            "{NS}: [\"fleet.cattle.io\"] [\"clusters/status\"] [\"{cluster_name}\"] [\"get\", \"patch\"]"
        ),
        "*: [\"fleet.cattle.io\"] [\"contents\"] [] [\"get\"]".to_string(),
    ]
    .into_iter()
    .collect();
    assert_eq!(rules, expected);

    // The granted token at work.
    let agent = hub.server.client_with_token(&text(&grant, "token"));
    create_deployment(&admin, &cluster_ns, "mine").await;
    let own: Api<BundleDeployment> = Api::namespaced(agent.clone(), &cluster_ns);
    own.get("mine")
        .await
        .expect("reads its own BundleDeployment");
    assert_eq!(
        own.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    let status = json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "BundleDeployment",
        "status": {"ready": true}});
    own.patch_status(
        "mine",
        &PatchParams::apply("agent").force(),
        &Patch::Apply(&status),
    )
    .await
    .expect("updates its BundleDeployment's status");
    assert!(forbidden(own.delete("mine", &Default::default()).await));

    let other_ns = cluster_namespace_of(&admin, "other").await;
    create_deployment(&admin, &other_ns, "theirs").await;
    assert!(forbidden(
        Api::<BundleDeployment>::namespaced(agent.clone(), &other_ns)
            .list(&ListParams::default())
            .await
    ));
    assert!(forbidden(
        Api::<BundleDeployment>::namespaced(agent.clone(), &other_ns)
            .get("theirs")
            .await
    ));
    assert!(forbidden(
        Api::<Secret>::all(agent.clone())
            .list(&ListParams::default())
            .await
    ));
    let clusters: Api<Cluster> = Api::namespaced(agent.clone(), NS);
    let heartbeat = json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "Cluster",
        "status": {"agent": {"lastSeen": "2026-01-01T00:00:00Z"}}});
    assert!(forbidden(
        clusters
            .patch_status(
                "other",
                &PatchParams::apply("agent"),
                &Patch::Merge(&heartbeat)
            )
            .await
    ));
    clusters
        .patch_status(
            &cluster_name,
            &PatchParams::default(),
            &Patch::Merge(&heartbeat),
        )
        .await
        .expect("patches its own Cluster's status");
    // Content is readable (absent here: 404, not 403).
    let content = Api::<fleet_api::Content>::all(agent.clone())
        .get("s-absent")
        .await;
    assert!(
        matches!(&content, Err(kube::Error::Api(s)) if s.code == 404),
        "{content:?}"
    );

    // Registering again with the same clientID finds the same Cluster and replaces the older request.
    let again = register(&admin, "request-2", "client-1").await;
    assert_eq!(
        text(&wait_for_grant(&admin, &again).await, "clusterName"),
        cluster_name
    );
    let registrations: Api<ClusterRegistration> = Api::namespaced(admin.clone(), NS);
    fleet_testing::gone(
        "the older registration removed",
        &registrations,
        "request-1",
    )
    .await;
    // Its ClusterRoleBinding goes with it (no ownerReference can take a cluster-scoped object along).
    let bindings = Api::<ClusterRoleBinding>::all(admin.clone());
    assert!(bindings.get_opt(&account).await.unwrap().is_none());
    let again_account =
        fleet_bundle::names::safe_concat_name(&["request-2", &again.uid().unwrap()]);
    let kept = bindings.get(&again_account).await.unwrap();
    assert!(kept.metadata.owner_references.is_none());
    // The replaced registration's ServiceAccount (and with it every token minted for it) and its
    // RoleBinding in the cluster namespace go now, not when the cluster leaves.
    eventually("the replaced registration's token refused", || {
        let own = own.clone();
        async move {
            matches!(own.get("mine").await, Err(kube::Error::Api(s)) if s.code == 401).then_some(())
        }
    })
    .await;
    assert!(
        Api::<ServiceAccount>::namespaced(admin.clone(), &cluster_ns)
            .get_opt(&account)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<RoleBinding>::namespaced(admin.clone(), &cluster_ns)
            .get_opt(&account)
            .await
            .unwrap()
            .is_none()
    );
    let again_grant = wait_for_grant(&admin, &again).await;
    Api::<BundleDeployment>::namespaced(
        hub.server.client_with_token(&text(&again_grant, "token")),
        &cluster_ns,
    )
    .get("mine")
    .await
    .expect("the new registration's token works");
    let clients: Vec<String> = Api::<Cluster>::namespaced(admin.clone(), NS)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.spec.client_id)
        .filter(|id| id == "client-1")
        .collect();
    assert_eq!(clients.len(), 1, "one Cluster per clientID");
    controller.stop().await;
}

#[tokio::test]
async fn registration_tokens_get_agent_values_and_expire() {
    let hub = authenticated_hub().await;
    let admin = hub.client.clone();
    let controller = RunningController::start(admin.clone()).await;
    let tokens: Api<ClusterRegistrationToken> = Api::namespaced(admin.clone(), NS);
    let mut short_account = String::new();
    for (name, ttl) in [("lasting", None), ("short", Some("2s"))] {
        let token: ClusterRegistrationToken = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterRegistrationToken",
            "metadata": {"name": name, "namespace": NS}, "spec": {"ttl": ttl},
        }))
        .unwrap();
        let created = tokens.create(&PostParams::default(), &token).await.unwrap();
        short_account = fleet_bundle::names::safe_concat_name(&[name, &created.uid().unwrap()]);
    }
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);
    // The short-lived token is granted before it expires.
    let system_roles: Api<Role> = Api::namespaced(admin.clone(), SYSTEM_REGISTRATION_NAMESPACE);
    eventually("the short token's values and grants", || {
        let (secrets, system_roles, account) =
            (secrets.clone(), system_roles.clone(), short_account.clone());
        async move {
            secrets.get_opt("short").await.ok()??;
            system_roles.get_opt(&account).await.ok()?.map(|_| ())
        }
    })
    .await;
    let values = eventually("the values secret", || {
        let secrets = secrets.clone();
        async move { secrets.get_opt("lasting").await.ok().flatten() }
    })
    .await;
    assert_eq!(
        values.type_.as_deref(),
        Some("fleet.cattle.io/cluster-registration-values")
    );
    let values: serde_json::Value = serde_json::from_str(&text(&values, "values")).unwrap();
    assert_eq!(values["clusterNamespace"], NS);
    assert_eq!(values["tokenName"], "lasting");
    assert_eq!(
        values["systemRegistrationNamespace"],
        SYSTEM_REGISTRATION_NAMESPACE
    );
    // The import token may create ClusterRegistrations, and nothing like listing Clusters.
    let import = hub
        .server
        .client_with_token(values["token"].as_str().unwrap());
    register(&import, "request-imported", "client-imported").await;
    assert!(forbidden(
        Api::<Cluster>::namespaced(import, NS)
            .list(&ListParams::default())
            .await
    ));
    let status = eventually("token status", || {
        let tokens = tokens.clone();
        async move { tokens.get("lasting").await.ok()?.status }
    })
    .await;
    assert_eq!(status.secret_name, "lasting");
    assert!(status.expires.is_none());

    eventually("the expired token deleted", || {
        let tokens = tokens.clone();
        async move { tokens.get_opt("short").await.ok()?.is_none().then_some(()) }
    })
    .await;
    assert!(tokens.get_opt("lasting").await.unwrap().is_some());
    // Nothing of the expired token stays: its ServiceAccount, Roles and RoleBindings go with it, in its
    // namespace (by owner) and in the system registration namespace (explicitly).
    eventually("the expired token's identity and grants gone", || {
        let (admin, account) = (admin.clone(), short_account.clone());
        async move {
            let mut left = Api::<ServiceAccount>::namespaced(admin.clone(), NS)
                .get_opt(&account)
                .await
                .ok()?
                .is_some();
            for ns in [NS, SYSTEM_REGISTRATION_NAMESPACE] {
                left |= Api::<Role>::namespaced(admin.clone(), ns)
                    .get_opt(&account)
                    .await
                    .ok()?
                    .is_some();
                left |= Api::<RoleBinding>::namespaced(admin.clone(), ns)
                    .get_opt(&account)
                    .await
                    .ok()?
                    .is_some();
            }
            (!left).then_some(())
        }
    })
    .await;
    controller.stop().await;
}
