//! Every acknowledged write survives `kill -9`: the server runs as a separate process with `--data-dir`,
//! writers record what the server acknowledged, the process is SIGKILLed under load, and the restarted
//! server must hold every acknowledged object (and for updated objects, at least the acknowledged value).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn start(data: &Path, kubeconfig: &Path) -> Child {
    let _ = std::fs::remove_file(kubeconfig);
    Command::new(env!("CARGO_BIN_EXE_fleet-apiserver"))
        .args(["--plain-http", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .arg("--kubeconfig-out")
        .arg(kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start fleet-apiserver")
}

async fn connect(kubeconfig: &Path) -> kube::Client {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(kubeconfig)
            && let Ok(kc) = kube::config::Kubeconfig::from_yaml(&text)
        {
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            return kube::Client::try_from(config).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server did not write its kubeconfig");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = start(&data, &kubeconfig);
    let client = connect(&kubeconfig).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");

    // created name -> acknowledged; counter name -> highest acknowledged value.
    let created = Arc::new(Mutex::new(Vec::<String>::new()));
    let counters = Arc::new(Mutex::new(BTreeMap::<String, u64>::new()));
    let mut writers = Vec::new();
    for w in 0..4 {
        let cms = cms.clone();
        let (created, counters) = (created.clone(), counters.clone());
        writers.push(tokio::spawn(async move {
            let counter = format!("counter-{w}");
            let cm: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": counter}, "data": {"v": "0"}}))
                    .unwrap();
            if cms.create(&PostParams::default(), &cm).await.is_err() {
                return;
            }
            for n in 1u64.. {
                let name = format!("w{w}-{n}");
                let cm: ConfigMap = serde_json::from_value(
                    json!({"metadata": {"name": name}, "data": {"n": n.to_string()}}),
                )
                .unwrap();
                if cms.create(&PostParams::default(), &cm).await.is_err() {
                    return;
                }
                created.lock().unwrap().push(name);
                let patch = Patch::Merge(json!({"data": {"v": n.to_string()}}));
                if cms
                    .patch(&counter, &PatchParams::default(), &patch)
                    .await
                    .is_err()
                {
                    return;
                }
                counters.lock().unwrap().insert(counter.clone(), n);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    child.kill().expect("SIGKILL the server");
    child.wait().unwrap();
    for w in writers {
        let _ = w.await;
    }
    let created = created.lock().unwrap().clone();
    let counters = counters.lock().unwrap().clone();
    assert!(
        created.len() > 20,
        "the load produced only {} writes",
        created.len()
    );

    let mut child = start(&data, &kubeconfig);
    let client = connect(&kubeconfig).await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let stored = cms.list(&Default::default()).await.unwrap();
    let names: std::collections::HashSet<String> = stored
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    let missing: Vec<&String> = created.iter().filter(|n| !names.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "acknowledged creates lost after kill -9: {missing:?}"
    );
    for (counter, acknowledged) in &counters {
        let value: u64 = cms.get(counter).await.unwrap().data.unwrap()["v"]
            .parse()
            .unwrap();
        assert!(
            value >= *acknowledged,
            "{counter}: stored {value} < acknowledged {acknowledged}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn watches_deliver_durable_writes_in_order_with_a_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let server = fleet_apiserver::ApiServer::new(fleet_apiserver::Config {
        data_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let rv = common::list_version(&cms).await;
    let mut writers = Vec::new();
    for w in 0..4 {
        let cms = cms.clone();
        writers.push(tokio::spawn(async move {
            for n in 0..10 {
                let cm: ConfigMap =
                    serde_json::from_value(json!({"metadata": {"name": format!("d{w}-{n}")}}))
                        .unwrap();
                cms.create(&PostParams::default(), &cm).await.unwrap();
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    use futures::TryStreamExt;
    let events: Vec<_> = cms
        .watch(&kube::api::WatchParams::default().timeout(1), &rv)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let rvs: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            kube::api::WatchEvent::Added(o) => o.metadata.resource_version.as_ref()?.parse().ok(),
            _ => None,
        })
        .collect();
    assert_eq!(rvs.len(), 40);
    assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");
}
