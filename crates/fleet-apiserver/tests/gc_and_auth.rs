//! ownerReference garbage collection (background, foreground, orphan), and authentication/authorization:
//! admin token, ServiceAccount tokens from TokenRequest and token Secrets, RBAC scoping with kube-apiserver's
//! 403 message, and SelfSubjectAccessReview.

mod common;

use common::until;
use fleet_apiserver::{ApiServer, Config};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

fn cm(name: &str, owners: serde_json::Value, finalizers: &[&str]) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": owners, "finalizers": finalizers}}))
    .unwrap()
}

fn owner_ref(owner: &ConfigMap) -> serde_json::Value {
    json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.name_any(), "uid": owner.uid().unwrap(),
        "blockOwnerDeletion": true, "controller": true}])
}

fn code(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.message),
        other => panic!("expected an API error: {other:?}"),
    }
}

#[tokio::test]
async fn garbage_collection_policies() {
    let server = ApiServer::in_memory();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let pp = PostParams::default();

    // Background: dependents (and their dependents) go with the owner.
    let owner = cms.create(&pp, &cm("owner", json!([]), &[])).await.unwrap();
    let child = cms
        .create(&pp, &cm("child", owner_ref(&owner), &[]))
        .await
        .unwrap();
    cms.create(&pp, &cm("grandchild", owner_ref(&child), &[]))
        .await
        .unwrap();
    // The owner is gone when the request returns; the collector takes its dependents afterwards.
    cms.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(cms.get_opt("owner").await.unwrap().is_none());
    for name in ["child", "grandchild"] {
        until(&format!("{name} collected"), || async {
            cms.get_opt(name).await.unwrap().is_none()
        })
        .await;
    }

    // Orphan: dependents stay, without the ownerReference.
    let owner = cms
        .create(&pp, &cm("owner2", json!([]), &[]))
        .await
        .unwrap();
    cms.create(&pp, &cm("kept", owner_ref(&owner), &[]))
        .await
        .unwrap();
    cms.delete("owner2", &DeleteParams::orphan()).await.unwrap();
    let kept = cms.get("kept").await.unwrap();
    assert!(kept.owner_references().is_empty());

    // Foreground: the owner waits (with the foregroundDeletion finalizer) until its blocking dependents are gone.
    let owner = cms
        .create(&pp, &cm("owner3", json!([]), &[]))
        .await
        .unwrap();
    cms.create(&pp, &cm("slow", owner_ref(&owner), &["example.com/hold"]))
        .await
        .unwrap();
    cms.delete("owner3", &DeleteParams::foreground())
        .await
        .unwrap();
    // The request returns at once; the owner waits for its dependents.
    let waiting = cms.get("owner3").await.unwrap();
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(
        waiting
            .finalizers()
            .contains(&"foregroundDeletion".to_string())
    );
    until("the collector deletes the blocking dependent", || async {
        let slow = cms.get("slow").await.unwrap();
        slow.metadata.deletion_timestamp.is_some()
    })
    .await;
    assert!(
        cms.get("owner3")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    );
    cms.patch(
        "slow",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(cms.get_opt("slow").await.unwrap().is_none());
    assert!(
        cms.get_opt("owner3").await.unwrap().is_none(),
        "owner removed once its dependents are gone"
    );
}

#[tokio::test]
async fn authentication_rbac_and_access_reviews() {
    let server = ApiServer::new(Config {
        require_auth: true,
        ..Config::default()
    })
    .unwrap();
    let addr = server.spawn_loopback().await.unwrap();
    let admin = server.client();

    // Without a token: 401.
    let anonymous =
        kube::Client::try_from(kube::Config::new(format!("http://{addr}").parse().unwrap()))
            .unwrap();
    let (status, _) = code(
        Api::<ConfigMap>::namespaced(anonymous, "default")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 401);

    // A ServiceAccount allowed to read configmaps in `team-a` only.
    for ns in ["team-a", "team-b"] {
        let ns_api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(admin.clone());
        ns_api
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
            )
            .await
            .unwrap();
        Api::<ConfigMap>::namespaced(admin.clone(), ns)
            .create(&PostParams::default(), &cm("data", json!([]), &[]))
            .await
            .unwrap();
    }
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "team-a");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "reader"}})).unwrap(),
    )
    .await
    .unwrap();
    let apply = |api_version: &str, kind: &str, body: serde_json::Value| {
        let mut obj = body;
        obj["apiVersion"] = json!(api_version);
        obj["kind"] = json!(kind);
        obj
    };
    let rbac = |kind: &str| -> Api<kube::core::DynamicObject> {
        Api::namespaced_with(
            admin.clone(),
            "team-a",
            &kube::discovery::ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk(
                "rbac.authorization.k8s.io",
                "v1",
                kind,
            )),
        )
    };
    let roles = rbac("Role");
    roles
        .create(&PostParams::default(), &serde_json::from_value(apply("rbac.authorization.k8s.io/v1", "Role", json!({
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]})))
        .unwrap())
        .await
        .unwrap();
    let bindings = rbac("RoleBinding");
    bindings
        .create(&PostParams::default(), &serde_json::from_value(apply("rbac.authorization.k8s.io/v1", "RoleBinding", json!({
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "team-a"}]})))
        .unwrap())
        .await
        .unwrap();

    // TokenRequest (what `kubectl create token` calls).
    let request: TokenRequest =
        serde_json::from_value(json!({"spec": {"audiences": [], "expirationSeconds": 3600}}))
            .unwrap();
    let issued: TokenRequest = sas
        .create_subresource("token", "reader", &PostParams::default(), &request)
        .await
        .unwrap();
    let token = issued.status.unwrap().token;
    let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    config.auth_info.token = Some(token.clone().into());
    let reader = kube::Client::try_from(config).unwrap();

    let own: Api<ConfigMap> = Api::namespaced(reader.clone(), "team-a");
    assert_eq!(own.get("data").await.unwrap().name_any(), "data");
    let (status, message) = code(
        Api::<ConfigMap>::namespaced(reader.clone(), "team-b")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 403);
    assert_eq!(
        message,
        "configmaps is forbidden: User \"system:serviceaccount:team-a:reader\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team-b\""
    );
    let (status, message) = code(
        own.delete("data", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 403);
    assert!(
        message.starts_with("configmaps \"data\" is forbidden"),
        "{message}"
    );
    let (status, _) = code(
        Api::<Secret>::namespaced(reader.clone(), "team-a")
            .list(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 403);

    // SelfSubjectAccessReview (what `kubectl auth can-i` sends).
    let reviews: Api<SelfSubjectAccessReview> = Api::all(reader.clone());
    let ask = |verb: &str, ns: &str| -> SelfSubjectAccessReview {
        serde_json::from_value(json!({"spec": {"resourceAttributes": {"verb": verb, "resource": "configmaps", "namespace": ns}}})).unwrap()
    };
    let yes = reviews
        .create(&PostParams::default(), &ask("list", "team-a"))
        .await
        .unwrap();
    assert!(yes.status.unwrap().allowed);
    let no = reviews
        .create(&PostParams::default(), &ask("list", "team-b"))
        .await
        .unwrap();
    assert!(!no.status.unwrap().allowed);

    // A token Secret gets a token that works like the requested one, and stops working when deleted.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "team-a");
    let secret: Secret = serde_json::from_value(json!({"metadata": {"name": "reader-token",
        "annotations": {"kubernetes.io/service-account.name": "reader"}}, "type": "kubernetes.io/service-account-token"}))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let filled = secrets.get("reader-token").await.unwrap();
    let secret_token = String::from_utf8(filled.data.unwrap()["token"].0.clone()).unwrap();
    let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    config.auth_info.token = Some(secret_token.into());
    let via_secret = kube::Client::try_from(config.clone()).unwrap();
    Api::<ConfigMap>::namespaced(via_secret, "team-a")
        .get("data")
        .await
        .unwrap();
    secrets
        .delete("reader-token", &DeleteParams::default())
        .await
        .unwrap();
    let revoked = kube::Client::try_from(config).unwrap();
    let (status, _) = code(
        Api::<ConfigMap>::namespaced(revoked, "team-a")
            .get("data")
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 401);

    // The same identity in-process.
    let in_process: Api<ConfigMap> = Api::namespaced(server.client_with_token(&token), "team-b");
    assert_eq!(code(in_process.get("data").await.unwrap_err()).0, 403);

    // Deleting the ServiceAccount revokes its tokens.
    sas.delete("reader", &DeleteParams::default())
        .await
        .unwrap();
    let (status, _) = code(own.get("data").await.unwrap_err());
    assert_eq!(status, 401);
}

/// The collector's queue is not persisted: a restarted server collects the dependents of owners that are gone.
#[tokio::test]
async fn collection_resumes_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = || Config {
        data_dir: Some(dir.path().to_path_buf()),
        ..Config::default()
    };
    {
        let server = ApiServer::new(config()).unwrap();
        let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
        let gone_owner = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "0f0f0f0f-0000-4000-8000-000000000000"}]);
        cms.create(&PostParams::default(), &cm("stray", gone_owner, &[]))
            .await
            .unwrap();
        cms.create(&PostParams::default(), &cm("standalone", json!([]), &[]))
            .await
            .unwrap();
    }
    let server = ApiServer::new(config()).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    until("the dependent of a missing owner is collected", || async {
        cms.get_opt("stray").await.unwrap().is_none()
    })
    .await;
    assert!(cms.get_opt("standalone").await.unwrap().is_some());
}
