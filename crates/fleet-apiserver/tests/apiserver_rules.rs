//! Answers that must be kube-apiserver's, because code that only worked against a lenient server is a bug
//! on real clusters: an empty namespace segment, paths no route serves, and ownerReferences across scopes.

mod common;

use fleet_apiserver::ApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Event};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn api_error(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error: {other:?}"),
    }
}

fn configmap(name: &str, namespace: Option<&str>) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace}, "data": {"k": "v"}}))
    .unwrap()
}

#[tokio::test]
async fn an_empty_namespace_segment_is_answered_as_kube_apiserver_does() {
    let server = ApiServer::in_memory();
    for transport in common::TRANSPORTS {
        let client = common::client(&server, transport).await;
        let default: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        default
            .create(&PostParams::default(), &configmap("x", None))
            .await
            .unwrap();
        let empty: Api<ConfigMap> = Api::namespaced(client.clone(), "");
        let required = (
            400,
            "BadRequest".to_string(),
            "Namespace parameter required.".to_string(),
        );
        // Reading, writing and deleting one object need its key: 400.
        assert_eq!(api_error(empty.get("x").await.unwrap_err()), required);
        assert_eq!(
            api_error(
                empty
                    .delete("x", &DeleteParams::default())
                    .await
                    .unwrap_err()
            ),
            required
        );
        assert_eq!(
            api_error(
                empty
                    .replace("x", &PostParams::default(), &configmap("x", None))
                    .await
                    .unwrap_err()
            ),
            required
        );
        for patch in [
            Patch::Merge(json!({"data": {"k": "w"}})),
            Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "x"}, "data": {"k": "w"}})),
        ] {
            let params = PatchParams::apply("test");
            assert_eq!(
                api_error(empty.patch("x", &params, &patch).await.unwrap_err()),
                required
            );
        }
        // Creating validates an object whose namespace the empty one replaced: 422.
        for namespace in [None, Some("default")] {
            let (code, reason, message) = api_error(
                empty
                    .create(&PostParams::default(), &configmap("y", namespace))
                    .await
                    .unwrap_err(),
            );
            assert_eq!(
                (code, reason.as_str(), message.as_str()),
                (
                    422,
                    "Invalid",
                    "ConfigMap \"y\" is invalid: metadata.namespace: Required value"
                ),
                "{namespace:?}"
            );
        }
        // Listing with no namespace lists every namespace.
        let names: Vec<String> = empty
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|cm| {
                format!(
                    "{}/{}",
                    cm.metadata.namespace.unwrap(),
                    cm.metadata.name.unwrap()
                )
            })
            .collect();
        assert!(names.contains(&"default/x".to_string()), "{names:?}");
        // Deleting a collection lists every namespace, then cannot delete what it found.
        assert_eq!(
            api_error(
                empty
                    .delete_collection(&DeleteParams::default(), &ListParams::default())
                    .await
                    .unwrap_err()
            ),
            required
        );
        let nothing = ListParams::default().labels("no-such-label");
        assert!(
            empty
                .delete_collection(&DeleteParams::default(), &nothing)
                .await
                .is_ok()
        );
        default.get("x").await.unwrap();
        default.delete("x", &DeleteParams::default()).await.unwrap();
    }
}

fn owned_by(owner: &ConfigMap) -> serde_json::Value {
    json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name, "uid": owner.metadata.uid}])
}

async fn events_about(client: &kube::Client, namespace: &str, uid: &str) -> Vec<Event> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.uid.as_deref() == Some(uid))
        .collect()
}

#[tokio::test]
async fn owners_across_scopes_are_not_collected_and_get_an_event() {
    let server = ApiServer::in_memory();
    let client = server.client();
    let pp = PostParams::default();
    let default: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = default
        .create(&pp, &configmap("owner", None))
        .await
        .unwrap();

    // A cluster-scoped dependent of a namespaced owner: an Event, and it outlives its owner.
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let role: ClusterRole = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "cross-scope", "ownerReferences": owned_by(&owner)}}))
    .unwrap();
    let role = roles.create(&pp, &role).await.unwrap();
    let role_uid = role.metadata.uid.clone().unwrap();
    common::until("the OwnerRefInvalidNamespace event", || {
        let client = client.clone();
        let uid = role_uid.clone();
        async move { !events_about(&client, "default", &uid).await.is_empty() }
    })
    .await;
    let events = events_about(&client, "default", &role_uid).await;
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(
        (event.reason.as_deref(), event.type_.as_deref()),
        (Some("OwnerRefInvalidNamespace"), Some("Warning"))
    );
    assert_eq!(
        event.message.as_deref(),
        Some(
            format!(
                "ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {}] does not exist in namespace \"\"",
                owner.metadata.uid.as_deref().unwrap()
            )
            .as_str()
        )
    );
    assert_eq!(event.involved_object.kind.as_deref(), Some("ClusterRole"));

    default
        .delete("owner", &DeleteParams::default())
        .await
        .unwrap();
    // The collector works in order: once a dependent deleted after this owner is collected, the owner's
    // dependents have been judged.
    let marker_owner: ClusterRole =
        serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "marker-owner"}}))
        .unwrap();
    let marker_owner = roles.create(&pp, &marker_owner).await.unwrap();
    let marker: ClusterRole = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "marker", "ownerReferences": [{
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "marker-owner",
            "uid": marker_owner.metadata.uid}]}}))
    .unwrap();
    roles.create(&pp, &marker).await.unwrap();
    roles
        .delete("marker-owner", &DeleteParams::default())
        .await
        .unwrap();
    common::until("the marker's collection", || {
        let roles = roles.clone();
        async move { roles.get_opt("marker").await.unwrap().is_none() }
    })
    .await;
    let kept = roles.get("cross-scope").await.unwrap();
    assert_eq!(kept.metadata.uid.as_deref(), Some(role_uid.as_str()));
    assert_eq!(kept.metadata.owner_references.unwrap().len(), 1);

    // A namespaced dependent whose owner lives in another namespace has no owner in its namespace: the
    // collector deletes it at once, after recording the Event.
    let owner = default
        .create(&pp, &configmap("owner2", None))
        .await
        .unwrap();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &pp,
            &serde_json::from_value(json!({"metadata": {"name": "other"}})).unwrap(),
        )
        .await
        .unwrap();
    let other: Api<ConfigMap> = Api::namespaced(client.clone(), "other");
    let mut dependent = configmap("dependent", None);
    dependent.metadata.owner_references = Some(serde_json::from_value(owned_by(&owner)).unwrap());
    let dependent = other.create(&pp, &dependent).await.unwrap();
    common::until("the cross-namespace dependent's deletion", || {
        let other = other.clone();
        async move { other.get_opt("dependent").await.unwrap().is_none() }
    })
    .await;
    let events = events_about(&client, "other", dependent.metadata.uid.as_deref().unwrap()).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].reason.as_deref(),
        Some("OwnerRefInvalidNamespace")
    );
    default.get("owner2").await.unwrap();

    // An ownerReference added by an update is judged too.
    let later: ClusterRole =
        serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "later"}}))
        .unwrap();
    let later = roles.create(&pp, &later).await.unwrap();
    let patch = json!({"metadata": {"ownerReferences": owned_by(&owner)}});
    roles
        .patch("later", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let later_uid = later.metadata.uid.unwrap();
    common::until("the event about the updated ClusterRole", || {
        let client = client.clone();
        let uid = later_uid.clone();
        async move { !events_about(&client, "default", &uid).await.is_empty() }
    })
    .await;
}

/// One raw request through the router: the status code and the Status body's reason and message.
async fn raw(
    server: &ApiServer,
    method: http::Method,
    uri: &str,
    body: &str,
) -> (u16, String, String) {
    use tower::ServiceExt;
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let resp = server.router().oneshot(req).await.unwrap();
    let code = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let text = |field: &str| status[field].as_str().unwrap_or_default().to_string();
    (code, text("reason"), text("message"))
}

#[tokio::test]
async fn paths_no_route_serves_are_404_and_methods_it_does_not_serve_405() {
    use http::Method;
    let server = ApiServer::in_memory();
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#;
    let (code, ..) = raw(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        cm,
    )
    .await;
    assert_eq!(code, 201);
    let no_route = (
        404,
        "NotFound".to_string(),
        "the server could not find the requested resource".to_string(),
    );
    for path in [
        // A namespaced object addressed without its namespace: kube-apiserver has no such route.
        "/api/v1/configmaps/x",
        // A cluster-scoped resource under a namespace.
        "/api/v1/namespaces/default/nodes",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles/admin",
        // Subresources a resource does not have, unknown resources, groups and versions.
        "/api/v1/namespaces/default/configmaps/x/status",
        "/api/v1/namespaces/default/configmaps/x/scale",
        "/api/v1/namespaces/default/widgets",
        "/apis/example.com/v1/widgets",
        "/apis/apps/v9/deployments",
        // Empty segments other than a namespace.
        "/apis//v1/deployments",
        "/api/v1/namespaces/default/configmaps//x",
    ] {
        assert_eq!(
            raw(&server, Method::GET, path, "").await,
            no_route,
            "{path}"
        );
    }
    // The all-namespaces collection of a namespaced resource serves list and watch only.
    for method in [Method::POST, Method::DELETE] {
        let (code, reason, _) = raw(&server, method.clone(), "/api/v1/configmaps", cm).await;
        assert_eq!(
            (code, reason.as_str()),
            (405, "MethodNotAllowed"),
            "{method}"
        );
    }
    let (code, ..) = raw(&server, Method::GET, "/api/v1/configmaps", "").await;
    assert_eq!(code, 200);
    // A named object's existence is a 404 with its kind, not a routing error.
    let (code, reason, message) = raw(
        &server,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/y",
        "",
    )
    .await;
    assert_eq!(
        (code, reason.as_str(), message.as_str()),
        (404, "NotFound", "configmaps \"y\" not found")
    );
}
