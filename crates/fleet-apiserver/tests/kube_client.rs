//! kube-rs against the server, in-process and over loopback HTTP: typed CRUD and kube-apiserver's errors,
//! status subresource, selectors, pagination, finalizers, namespace deletion, CRDs and dynamic discovery.

mod common;

use common::{TRANSPORTS, client, until};
use fleet_apiserver::ApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::{DynamicObject, GroupVersionKind};
use kube::discovery::Discovery;
use serde_json::json;

fn cm(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}),
    )
    .unwrap()
}

fn api_error(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.reason.clone(), status.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn crud_and_errors_like_kube_apiserver() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let client = client(&server, transport).await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

        let created = cms
            .create(&PostParams::default(), &cm("a", json!({"k": "v"})))
            .await
            .unwrap();
        let meta = &created.metadata;
        assert!(
            meta.uid.as_deref().is_some_and(|u| u.len() == 36),
            "{transport:?}"
        );
        assert!(meta.creation_timestamp.is_some());
        let rv1: u64 = meta.resource_version.as_deref().unwrap().parse().unwrap();

        let (code, reason, message) = api_error(
            cms.create(&PostParams::default(), &cm("a", json!({})))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            (code, reason.as_str(), message.as_str()),
            (409, "AlreadyExists", "configmaps \"a\" already exists")
        );

        let (code, reason, message) = api_error(cms.get("missing").await.unwrap_err());
        assert_eq!(
            (code, reason.as_str(), message.as_str()),
            (404, "NotFound", "configmaps \"missing\" not found")
        );

        // Update with the current resourceVersion works and moves it forward; a stale one is a 409 Conflict.
        let mut next = created.clone();
        next.data = Some([("k".to_string(), "w".to_string())].into());
        let updated = cms
            .replace("a", &PostParams::default(), &next)
            .await
            .unwrap();
        let rv2: u64 = updated
            .metadata
            .resource_version
            .as_deref()
            .unwrap()
            .parse()
            .unwrap();
        assert!(rv2 > rv1);
        let (code, reason, _) = api_error(
            cms.replace("a", &PostParams::default(), &next)
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (409, "Conflict"));

        // generateName.
        let mut generated = cm("", json!({}));
        generated.metadata.name = None;
        generated.metadata.generate_name = Some("gen-".into());
        let g = cms
            .create(&PostParams::default(), &generated)
            .await
            .unwrap();
        assert!(
            g.metadata.name.as_deref().unwrap().starts_with("gen-")
                && g.metadata.name.as_deref().unwrap().len() == 9
        );

        // Missing namespace.
        let other: Api<ConfigMap> = Api::namespaced(client.clone(), "nope");
        let (code, _, message) = api_error(
            other
                .create(&PostParams::default(), &cm("x", json!({})))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            (code, message.as_str()),
            (404, "namespaces \"nope\" not found")
        );

        // Invalid name.
        let (code, reason, _) = api_error(
            cms.create(&PostParams::default(), &cm("Bad_Name", json!({})))
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (422, "Invalid"));

        // dryRun creates nothing.
        let dry = PostParams {
            dry_run: true,
            ..Default::default()
        };
        cms.create(&dry, &cm("dry", json!({}))).await.unwrap();
        assert_eq!(api_error(cms.get("dry").await.unwrap_err()).0, 404);

        // Merge patch, then delete.
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"extra": "1"}})),
        )
        .await
        .unwrap();
        assert_eq!(cms.get("a").await.unwrap().data.unwrap()["extra"], "1");
        cms.delete("a", &DeleteParams::default()).await.unwrap();
        assert_eq!(api_error(cms.get("a").await.unwrap_err()).0, 404);
    }
}

#[tokio::test]
async fn generation_and_status_subresource() {
    let server = ApiServer::in_memory();
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        "status": {"replicas": 99}
    }))
    .unwrap();
    let created = deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.status.is_none(), "status is ignored on create");

    // Label change: no generation bump.
    let p = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(p.metadata.generation, Some(1));
    // Spec change bumps it; status in a main-resource write is ignored.
    let p = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}, "status": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(p.metadata.generation, Some(2));
    assert!(p.status.is_none());
    // /status writes change status only.
    let s = deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 7}, "status": {"readyReplicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(s.status.unwrap().ready_replicas, Some(3));
    assert_eq!(s.spec.unwrap().replicas, Some(3));
    assert_eq!(s.metadata.generation, Some(2));
}

#[tokio::test]
async fn selectors_and_pagination() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let cms: Api<ConfigMap> = Api::namespaced(client(&server, transport).await, "default");
        for i in 0..7 {
            let mut c = cm(&format!("c{i}"), json!({}));
            c.metadata.labels = Some(
                [(
                    "tier".to_string(),
                    if i % 2 == 0 { "even" } else { "odd" }.to_string(),
                )]
                .into(),
            );
            cms.create(&PostParams::default(), &c).await.unwrap();
        }
        let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
            list.items
                .into_iter()
                .map(|c| c.metadata.name.unwrap())
                .collect()
        };
        assert_eq!(
            names(
                cms.list(&ListParams::default().labels("tier=odd"))
                    .await
                    .unwrap()
            ),
            ["c1", "c3", "c5"]
        );
        assert_eq!(
            names(
                cms.list(&ListParams::default().labels("tier in (even),tier!=odd"))
                    .await
                    .unwrap()
            )
            .len(),
            4
        );
        assert_eq!(
            names(
                cms.list(&ListParams::default().fields("metadata.name=c2"))
                    .await
                    .unwrap()
            ),
            ["c2"]
        );

        let mut seen = Vec::new();
        let mut params = ListParams::default().limit(3);
        loop {
            let page = cms.list(&params).await.unwrap();
            let next = page.metadata.continue_.clone();
            seen.extend(names(page));
            match next {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => break,
            }
        }
        assert_eq!(
            seen,
            ["c0", "c1", "c2", "c3", "c4", "c5", "c6"],
            "{transport:?}"
        );
    }
}

#[tokio::test]
async fn finalizers_hold_deletion_and_namespaces_cascade() {
    let server = ApiServer::in_memory();
    let client = server.client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap(),
        )
        .await
        .unwrap();
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
        Api::namespaced(client.clone(), "team");
    assert!(
        accounts.get_opt("default").await.unwrap().is_some(),
        "every namespace gets a default ServiceAccount"
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    let mut held = cm("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &held).await.unwrap();
    cms.create(&PostParams::default(), &cm("plain", json!({})))
        .await
        .unwrap();

    let deleted = namespaces
        .delete("team", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .expect("a namespace is marked, not removed, by its DELETE");
    // The namespace is Terminating at once, with the namespace controller's finalizer.
    assert!(deleted.metadata.deletion_timestamp.is_some());
    assert_eq!(
        deleted.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Terminating")
    );
    assert_eq!(
        deleted.spec.as_ref().and_then(|s| s.finalizers.clone()),
        Some(vec!["kubernetes".to_string()])
    );
    // Its contents go in the background: content without finalizers is removed, the held one is marked.
    until("the deletion of the namespace's plain content", || async {
        cms.get_opt("plain").await.unwrap().is_none()
    })
    .await;
    let marked = cms.get("held").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    let ns = namespaces.get("team").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    let (code, _, message) = api_error(
        cms.create(&PostParams::default(), &cm("late", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 403);
    assert!(message.contains("being terminated"), "{message}");

    let (code, _, message) = api_error(
        namespaces
            .delete("default", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (code, message.as_str()),
        (
            403,
            "namespaces \"default\" is forbidden: this namespace may not be deleted"
        )
    );

    // A namespace whose content has no finalizers goes once the background deletion has emptied it.
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "simple"}})).unwrap(),
        )
        .await
        .unwrap();
    let simple: Api<ConfigMap> = Api::namespaced(client.clone(), "simple");
    simple
        .create(&PostParams::default(), &cm("only", json!({})))
        .await
        .unwrap();
    namespaces
        .delete("simple", &DeleteParams::default())
        .await
        .unwrap();
    until("the removal of namespace simple", || async {
        namespaces.get_opt("simple").await.unwrap().is_none()
    })
    .await;
    assert_eq!(api_error(simple.get("only").await.unwrap_err()).0, 404);

    // Removing the finalizer deletes the object, and then the namespace.
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_error(cms.get("held").await.unwrap_err()).0, 404);
    assert_eq!(api_error(namespaces.get("team").await.unwrap_err()).0, 404);
}

#[tokio::test]
async fn crds_are_served_when_created_and_gone_when_deleted() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let client = client(&server, transport).await;
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "color": {"type": "string", "default": "red"}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
        }))
        .unwrap();
        crds.create(&PostParams::default(), &crd).await.unwrap();

        let discovery = Discovery::new(client.clone()).run().await.unwrap();
        let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
        let (ar, caps) = discovery.resolve_gvk(&gvk).expect("Widget discovered");
        assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
        let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
        let w: DynamicObject =
            serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1"}, "spec": {"size": 3, "unknown": true}, "extra": 1}))
            .unwrap();
        widgets.create(&PostParams::default(), &w).await.unwrap();
        // Unknown fields are pruned and schema defaults applied, as with a structural schema.
        let stored = widgets.get("w1").await.unwrap();
        assert_eq!(stored.data["spec"], json!({"size": 3, "color": "red"}));
        assert!(stored.data.get("extra").is_none());

        // Schema validation: a string where an integer belongs is a 422.
        let bad: DynamicObject =
            serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w2"}, "spec": {"size": "big"}}))
            .unwrap();
        let (code, reason, message) = api_error(
            widgets
                .create(&PostParams::default(), &bad)
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (422, "Invalid"), "{message}");
        assert!(message.contains("spec.size"), "{message}");

        crds.delete("widgets.example.com", &DeleteParams::default())
            .await
            .unwrap();
        let (code, _, _) = api_error(widgets.get("w1").await.unwrap_err());
        assert_eq!(code, 404, "{transport:?}");
        let discovery = Discovery::new(client.clone()).run().await.unwrap();
        assert!(discovery.resolve_gvk(&gvk).is_none());
    }
}

/// Server-side apply merges lists as the kind's schema declares: `containers` is a map keyed by name (two
/// managers own one item each), `args` and `tolerations` are atomic (owned whole, so a second manager's
/// different list conflicts).
#[tokio::test]
async fn server_side_apply_follows_the_schema_list_types() {
    let server = ApiServer::in_memory();
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "default");
    let applied = |containers: serde_json::Value, tolerations: serde_json::Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers, "tolerations": tolerations}}}})
    };
    let patch = |manager: &str, force: bool| {
        let params = PatchParams::apply(manager);
        if force { params.force() } else { params }
    };
    let first = applied(
        json!([{"name": "web", "image": "nginx", "args": ["a", "b"]}]),
        json!([{"key": "a", "operator": "Exists"}]),
    );
    deployments
        .patch("web", &patch("alpha", false), &Patch::Apply(&first))
        .await
        .unwrap();
    let second = applied(
        json!([{"name": "side", "image": "busybox"}]),
        json!([{"key": "a", "operator": "Exists"}]),
    );
    let merged = deployments
        .patch("web", &patch("beta", false), &Patch::Apply(&second))
        .await
        .unwrap();
    let spec = merged.spec.unwrap().template.spec.unwrap();
    let mut names: Vec<&str> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["side", "web"]);
    let fields = serde_json::to_string(&merged.metadata.managed_fields).unwrap();
    assert!(fields.contains(r#"k:{\"name\":\"side\"}"#), "{fields}");

    // A different atomic list from another manager is a conflict on the whole list.
    let other = applied(
        json!([{"name": "side", "image": "busybox"}]),
        json!([{"key": "b", "operator": "Exists"}]),
    );
    let err = deployments
        .patch("web", &patch("beta", false), &Patch::Apply(&other))
        .await
        .unwrap_err();
    let (code, _, message) = api_error(err);
    assert_eq!(code, 409);
    assert!(
        message.contains(".spec.template.spec.tolerations"),
        "{message}"
    );

    // An atomic list is replaced, not merged item by item.
    let shorter = applied(
        json!([{"name": "web", "image": "nginx", "args": ["c"]}]),
        json!([{"key": "a", "operator": "Exists"}]),
    );
    let replaced = deployments
        .patch("web", &patch("alpha", false), &Patch::Apply(&shorter))
        .await
        .unwrap();
    let spec = replaced.spec.unwrap().template.spec.unwrap();
    let web = spec.containers.iter().find(|c| c.name == "web").unwrap();
    assert_eq!(web.args, Some(vec!["c".to_string()]));
    assert_eq!(spec.containers.len(), 2);
}

/// Built-in kinds must carry the fields their schema requires: 422 Invalid with kube-apiserver's message and
/// causes, on create (dry run included), update, patch and server-side apply.
#[tokio::test]
async fn required_fields_of_built_in_kinds_are_checked() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let client = client(&server, transport).await;
        let resource = kube::api::ApiResource::erase::<Deployment>(&());
        let deployments: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), "default", &resource);
        let without_selector: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
            "spec": {"template": {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"image": "nginx"}]}}}
        }))
        .unwrap();
        let expected = r#"Deployment.apps "x" is invalid: [spec.selector: Required value, spec.template.spec.containers[0].name: Required value]"#;
        for params in [
            PostParams::default(),
            PostParams {
                dry_run: true,
                ..Default::default()
            },
        ] {
            let err = deployments
                .create(&params, &without_selector)
                .await
                .unwrap_err();
            let kube::Error::Api(status) = err else {
                panic!("expected an API error, got {err:?}")
            };
            assert_eq!(
                (status.code, status.reason.as_str()),
                (422, "Invalid"),
                "{transport:?}"
            );
            assert_eq!(status.message, expected, "{transport:?}");
            let details = status.details.expect("details");
            assert_eq!(
                (details.kind.as_str(), details.group.as_str()),
                ("Deployment", "apps")
            );
            let causes: Vec<(String, String)> = details
                .causes
                .iter()
                .map(|c| (c.reason.clone(), c.field.clone()))
                .collect();
            assert_eq!(
                causes,
                [
                    (
                        "FieldValueRequired".to_string(),
                        "spec.selector".to_string()
                    ),
                    (
                        "FieldValueRequired".to_string(),
                        "spec.template.spec.containers[0].name".to_string()
                    )
                ]
            );
        }
        let err = deployments
            .patch(
                "x",
                &PatchParams::apply("me"),
                &Patch::Apply(&without_selector),
            )
            .await
            .unwrap_err();
        assert_eq!(api_error(err).0, 422, "{transport:?}");

        // A valid Deployment: a merge patch nulling the selector, and an update without it, are refused.
        let typed: Api<Deployment> = Api::namespaced(client.clone(), "default");
        let valid: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
        }))
        .unwrap();
        typed.create(&PostParams::default(), &valid).await.unwrap();
        let (code, _, message) = api_error(
            typed
                .patch(
                    "web",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"selector": null}})),
                )
                .await
                .unwrap_err(),
        );
        assert_eq!(
            (code, message.as_str()),
            (
                422,
                r#"Deployment.apps "web" is invalid: spec.selector: Required value"#
            )
        );
        let mut current = deployments.get("web").await.unwrap();
        current.data["spec"]["template"]["spec"]["containers"][0]
            .as_object_mut()
            .unwrap()
            .remove("name");
        let (code, _, message) = api_error(
            deployments
                .replace("web", &PostParams::default(), &current)
                .await
                .unwrap_err(),
        );
        assert_eq!(code, 422);
        assert!(
            message.ends_with("spec.template.spec.containers[0].name: Required value"),
            "{message}"
        );
    }
}

/// Strategic merge patches through kube-rs: containers merge by name, ports by containerPort, and
/// `$patch: replace` replaces a merged list.
#[tokio::test]
async fn strategic_merge_patch_uses_the_schema_merge_keys() {
    let server = ApiServer::in_memory();
    let deployments: Api<Deployment> = Api::namespaced(server.client(), "default");
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [
                {"name": "a", "image": "a:1", "ports": [{"containerPort": 80}, {"containerPort": 81}]},
                {"name": "b", "image": "b:1"}]}}}
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();
    let patched = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "a", "ports": [{"containerPort": 81, "name": "alt"}]}]}}}})),
        )
        .await
        .unwrap();
    let containers = patched.spec.unwrap().template.spec.unwrap().containers;
    assert_eq!(containers.len(), 2);
    let ports: Vec<(i32, Option<String>)> = containers[0]
        .ports
        .iter()
        .flatten()
        .map(|p| (p.container_port, p.name.clone()))
        .collect();
    assert_eq!(ports, [(80, None), (81, Some("alt".into()))]);
    let replaced = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "c", "image": "c:1"}, {"$patch": "replace"}]}}}})),
        )
        .await
        .unwrap();
    let names: Vec<String> = replaced
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["c"]);
}
