//! kube-runtime against the server: watcher and reflector (including resume and 410 handling under churn),
//! a Controller using the finalizer helper, the events Recorder, and server-side apply.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TRANSPORTS, client, until};
use fleet_apiserver::{ApiServer, Config};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::{reflector, watcher};
use kube::{Resource, ResourceExt};
use serde_json::json;

fn cm(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}))
        .unwrap()
}

#[tokio::test]
async fn reflector_follows_changes() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let client = client(&server, transport).await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        cms.create(&PostParams::default(), &cm("before", "1"))
            .await
            .unwrap();
        let (reader, writer) = reflector::store();
        let stream = reflector(writer, watcher(cms.clone(), watcher::Config::default()));
        let task = tokio::spawn(stream.for_each(|_| async {}));
        reader.wait_until_ready().await.unwrap();
        cms.create(&PostParams::default(), &cm("after", "2"))
            .await
            .unwrap();
        cms.patch(
            "before",
            &PatchParams::default(),
            &kube::api::Patch::Merge(json!({"data": {"v": "3"}})),
        )
        .await
        .unwrap();
        cms.delete("after", &DeleteParams::default()).await.unwrap();
        until("the reflector holding only the last object", || {
            let state = reader.state();
            async move { state.len() == 1 && state[0].data.as_ref().unwrap()["v"] == "3" }
        })
        .await;
        task.abort();
    }
}

#[tokio::test]
async fn streaming_list_watcher() {
    let server = ApiServer::in_memory();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    cms.create(&PostParams::default(), &cm("one", "1"))
        .await
        .unwrap();
    let (reader, writer) = reflector::store();
    let config = watcher::Config::default().streaming_lists();
    let task = tokio::spawn(reflector(writer, watcher(cms.clone(), config)).for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 1);
    cms.create(&PostParams::default(), &cm("two", "2"))
        .await
        .unwrap();
    until("the reflector seeing the second object", || {
        let n = reader.state().len();
        async move { n == 2 }
    })
    .await;
    task.abort();
}

#[tokio::test]
async fn watch_resume_bookmarks_timeout_and_expired() {
    let server = ApiServer::new(Config {
        watch_history: 5,
        bookmark_interval: Duration::from_millis(100),
        ..Config::default()
    })
    .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let first = cms
        .create(&PostParams::default(), &cm("a", "0"))
        .await
        .unwrap();
    let start_rv = first.resource_version().unwrap();
    cms.create(&PostParams::default(), &cm("b", "0"))
        .await
        .unwrap();

    // Resume from a resourceVersion: the later change is replayed, then a bookmark, then the stream ends.
    let params = WatchParams {
        bookmarks: true,
        ..WatchParams::default()
    }
    .timeout(1);
    let events: Vec<_> = cms
        .watch(&params, &start_rv)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(
        matches!(&events[0], WatchEvent::Added(o) if o.name_any() == "b"),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, WatchEvent::Bookmark(_))),
        "{events:?}"
    );

    // Churn past the history window: resuming from the old resourceVersion gets an in-stream 410.
    for i in 0..10 {
        cms.patch(
            "b",
            &PatchParams::default(),
            &kube::api::Patch::Merge(json!({"data": {"v": i.to_string()}})),
        )
        .await
        .unwrap();
    }
    let events: Vec<_> = cms
        .watch(&WatchParams::default().timeout(1), &start_rv)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    match &events[..] {
        [WatchEvent::Error(status)] => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected one 410 ERROR event, got {other:?}"),
    }

    // kube's watcher recovers from the 410 by re-listing and sees every later change.
    let (reader, writer) = reflector::store();
    let task = tokio::spawn(
        reflector(writer, watcher(cms.clone(), watcher::Config::default())).for_each(|_| async {}),
    );
    reader.wait_until_ready().await.unwrap();
    for i in 0..20 {
        cms.create(&PostParams::default(), &cm(&format!("n{i}"), "x"))
            .await
            .unwrap();
    }
    until("the reflector seeing all 22 objects", || {
        let n = reader.state().len();
        async move { n == 22 }
    })
    .await;
    task.abort();
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ReconcileError(String);

/// The reconciler's context: the API and the names it cleaned up.
type Context = (Api<ConfigMap>, Arc<std::sync::Mutex<Vec<String>>>);

#[tokio::test]
async fn controller_with_finalizer_helper() {
    let server = ApiServer::in_memory();
    let client = server.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cleaned = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let ctx = Arc::new((cms.clone(), cleaned.clone()));
    let controller = Controller::new(cms.clone(), watcher::Config::default())
        .run(
            |obj: Arc<ConfigMap>, ctx: Arc<Context>| async move {
                let (api, cleaned) = (&ctx.0, ctx.1.clone());
                finalizer(api, "example.com/cleanup", obj, |event| async move {
                    match event {
                        Finalizer::Apply(_) => Ok::<_, ReconcileError>(Action::await_change()),
                        Finalizer::Cleanup(o) => {
                            cleaned.lock().unwrap().push(o.name_any());
                            Ok(Action::await_change())
                        }
                    }
                })
                .await
                .map_err(|e| ReconcileError(e.to_string()))
            },
            |_, _, _| Action::requeue(Duration::from_millis(50)),
            ctx,
        )
        .for_each(|_| async {});
    let task = tokio::spawn(controller);
    cms.create(&PostParams::default(), &cm("guarded", "1"))
        .await
        .unwrap();
    until("the controller adding its finalizer", || {
        let cms = cms.clone();
        async move {
            cms.get("guarded")
                .await
                .unwrap()
                .finalizers()
                .contains(&"example.com/cleanup".to_string())
        }
    })
    .await;
    cms.delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    until("the finalizer cleaning up before deletion", || {
        let cms = cms.clone();
        async move { cms.get_opt("guarded").await.unwrap().is_none() }
    })
    .await;
    assert_eq!(*cleaned.lock().unwrap(), ["guarded"]);
    task.abort();
}

#[tokio::test]
async fn recorder_publishes_events() {
    let server = ApiServer::in_memory();
    let client = server.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let obj = cms
        .create(&PostParams::default(), &cm("subject", "1"))
        .await
        .unwrap();
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "fleet-test".into(),
            instance: None,
        },
    );
    let event = Event {
        type_: EventType::Normal,
        reason: "Tested".into(),
        note: Some("it works".into()),
        action: "Test".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &obj.object_ref(&()))
        .await
        .unwrap();
    recorder
        .publish(&event, &obj.object_ref(&()))
        .await
        .unwrap();
    let events: Api<K8sEvent> = Api::namespaced(client, "default");
    let list = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1, "the repeat is folded into a series");
    let e = &list.items[0];
    assert_eq!(e.reason.as_deref(), Some("Tested"));
    assert_eq!(
        e.regarding.as_ref().unwrap().name.as_deref(),
        Some("subject")
    );
    assert!(e.series.is_some());
}

#[tokio::test]
async fn server_side_apply_owns_removes_and_conflicts() {
    for transport in TRANSPORTS {
        let server = ApiServer::in_memory();
        let cms: Api<ConfigMap> = Api::namespaced(client(&server, transport).await, "default");
        let apply = |data: serde_json::Value| {
            Patch::Apply(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": data}),
            )
        };
        let a = PatchParams::apply("manager-a");
        let created = cms
            .patch("ssa", &a, &apply(json!({"x": "1", "y": "2"})))
            .await
            .unwrap();
        let managed = created.metadata.managed_fields.clone().unwrap();
        assert_eq!(managed.len(), 1);
        assert_eq!(managed[0].manager.as_deref(), Some("manager-a"));
        assert_eq!(managed[0].operation.as_deref(), Some("Apply"));

        // Dropping a field removes it.
        let next = cms
            .patch("ssa", &a, &apply(json!({"x": "1"})))
            .await
            .unwrap();
        assert_eq!(next.data.unwrap().keys().collect::<Vec<_>>(), ["x"]);

        // Another manager changing an owned field conflicts, unless forced.
        let b = PatchParams::apply("manager-b");
        let err = cms
            .patch("ssa", &b, &apply(json!({"x": "2"})))
            .await
            .unwrap_err();
        match err {
            kube::Error::Api(status) => {
                assert_eq!(status.code, 409);
                assert!(
                    status.message.contains("conflict with \"manager-a\""),
                    "{}",
                    status.message
                );
            }
            other => panic!("{other:?}"),
        }
        let forced = cms
            .patch("ssa", &b.clone().force(), &apply(json!({"x": "2"})))
            .await
            .unwrap();
        assert_eq!(forced.data.unwrap()["x"], "2", "{transport:?}");
    }
}

#[tokio::test]
async fn selector_watches_see_objects_enter_and_leave() {
    let server = ApiServer::in_memory();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let rv = common::list_version(&cms).await;
    cms.create(&PostParams::default(), &cm("moving", "1"))
        .await
        .unwrap();
    let label =
        |value: serde_json::Value| Patch::Merge(json!({"metadata": {"labels": {"team": value}}}));
    cms.patch("moving", &PatchParams::default(), &label(json!("blue")))
        .await
        .unwrap();
    cms.patch("moving", &PatchParams::default(), &label(json!("blue-2")))
        .await
        .unwrap();
    cms.patch("moving", &PatchParams::default(), &label(json!(null)))
        .await
        .unwrap();
    let params = WatchParams::default().labels("team").timeout(1);
    let events: Vec<_> = cms
        .watch(&params, &rv)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Added(_) => Some("ADDED"),
            WatchEvent::Modified(_) => Some("MODIFIED"),
            WatchEvent::Deleted(_) => Some("DELETED"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED"]);
}
