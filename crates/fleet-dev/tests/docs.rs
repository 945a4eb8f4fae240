//! Fleet's documentation as a test suite: each folder of `testdata/docs/` is a fixture written from what one
//! page of Fleet's documentation promises (the page is named in its `expect.yaml`). A fixture is an example
//! folder (`gitrepo.yaml` + `repo/`, so `fleet dev --repo testdata/docs/<page>` runs it by hand) and an
//! `expect.yaml` listing what must then be true, on the hub and on the clusters:
//!
//! ```yaml
//! page: quickstart                  # the documentation page the fixture follows
//! objects:                          # objects that must exist, with the given fields
//!   - on: [local]                   # local (the hub's own cluster), cluster-1 … cluster-3, or hub
//!     apiVersion: apps/v1
//!     kind: Deployment
//!     namespace: default            # omitted for cluster-scoped kinds
//!     name: frontend
//!     fields: {/spec/replicas: 3}   # path → value (below)
//!     containing: {/status/conditions[type=Ready]/message: "bundle"}  # path → substring of the string there
//!     columns: {Ready: "1/1"}       # printer columns, as `kubectl get` shows them
//! absent:                           # objects that must not exist once the above hold
//!   - on: [cluster-2]
//!     apiVersion: v1
//!     kind: ConfigMap
//!     namespace: default
//!     name: frontend
//! ```
//!
//! A path is a JSON pointer (`~1` stands for `/` in a key) whose segments may pick a list element by one of its
//! fields: `/status/conditions[type=Ready]/status`.
//!
//! Dev mode runs three clusters labelled `env=dev`, `env=staging` and `env=prod` (`cluster-1` … `cluster-3`).

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fleet_dev::{Dev, DevOptions, RepoRequest, RepoSource};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::pinned_kind;
use serde::Deserialize;
use serde_json::Value;

/// How long one expectation may take to come true.
const WAIT: Duration = Duration::from_secs(90);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expectations {
    page: String,
    #[serde(default)]
    objects: Vec<Expected>,
    #[serde(default)]
    absent: Vec<Expected>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expected {
    on: Vec<String>,
    api_version: String,
    kind: String,
    #[serde(default)]
    namespace: Option<String>,
    name: String,
    #[serde(default)]
    fields: serde_json::Map<String, Value>,
    #[serde(default)]
    containing: serde_json::Map<String, Value>,
    #[serde(default)]
    columns: serde_json::Map<String, Value>,
}

impl Expected {
    fn describe(&self, on: &str) -> String {
        match &self.namespace {
            Some(ns) => format!("{on}: {} {ns}/{}", self.kind, self.name),
            None => format!("{on}: {} {}", self.kind, self.name),
        }
    }
}

fn fixture_dir(page: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/docs")
        .join(page)
}

/// Runs the fixture `page` in dev mode and checks its `expect.yaml`.
async fn run(page: &str) {
    let dir = fixture_dir(page);
    let text = std::fs::read_to_string(dir.join("expect.yaml"))
        .unwrap_or_else(|e| panic!("{page}/expect.yaml: {e}"));
    let expectations: Expectations =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{page}/expect.yaml: {e}"));
    assert_eq!(
        expectations.page, page,
        "{page}/expect.yaml names another page"
    );

    let state = tempfile::tempdir().expect("temp dir");
    let source = RepoSource::parse(dir.to_str().expect("utf-8 path")).expect("an example folder");
    assert!(
        matches!(source, RepoSource::Example(_)),
        "{page} is not an example folder"
    );
    let dev = Dev::start(DevOptions {
        clusters: 3,
        repos: vec![RepoRequest::from(source)],
        data_dir: state.path().join("dev"),
        tuning: support::fast(),
    })
    .await
    .expect("dev mode starts");

    for expected in &expectations.objects {
        for on in &expected.on {
            present(&dev, on, expected).await;
        }
    }
    for expected in &expectations.absent {
        for on in &expected.on {
            absent(&dev, on, expected).await;
        }
    }
    dev.shutdown().await;
}

fn client_for(dev: &Dev, on: &str) -> kube::Client {
    match on {
        "hub" | "local" => dev.hub_client(),
        cluster => dev
            .cluster(cluster)
            .unwrap_or_else(|e| panic!("{e}"))
            .client(),
    }
}

async fn api_for(
    client: &kube::Client,
    expected: &Expected,
) -> Option<(Api<DynamicObject>, ApiResource)> {
    let (group, version) = match expected.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", expected.api_version.as_str()),
    };
    let gvk = GroupVersionKind::gvk(group, version, &expected.kind);
    // The kind may not be served yet (a CRD the bundle itself installs): not found is "not yet".
    let (resource, _) = pinned_kind(client, &gvk).await.ok()?;
    let api = match &expected.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    Some((api, resource))
}

/// What differs between `expected` and the object as it is now (`None`: it matches).
async fn mismatch(client: &kube::Client, expected: &Expected) -> Option<String> {
    let Some((api, resource)) = api_for(client, expected).await else {
        return Some("kind not served".into());
    };
    let object = match api.get_opt(&expected.name).await {
        Ok(Some(object)) => object,
        Ok(None) => return Some("not found".into()),
        Err(e) => return Some(format!("read failed: {e}")),
    };
    let object = serde_json::to_value(&object).expect("object as JSON");
    let mut differences = Vec::new();
    for (path, want) in &expected.fields {
        let got = lookup(&object, path);
        if got != Some(want) {
            differences.push(format!("{path}: want {want}, got {}", shown(got)));
        }
    }
    for (path, want) in &expected.containing {
        let got = lookup(&object, path);
        let found = got
            .and_then(Value::as_str)
            .is_some_and(|text| text.contains(&cell_text(want)));
        if !found {
            differences.push(format!(
                "{path}: want text containing {want}, got {}",
                shown(got)
            ));
        }
    }
    if !expected.columns.is_empty() {
        match columns(client, &resource, expected).await {
            Ok(row) => {
                for (column, want) in &expected.columns {
                    let got = row.iter().find(|(name, _)| name == column).map(|(_, v)| v);
                    if got.map(cell_text) != Some(cell_text(want)) {
                        differences
                            .push(format!("column {column}: want {want}, got {}", shown(got)));
                    }
                }
            }
            Err(e) => differences.push(format!("printer columns: {e}")),
        }
    }
    (!differences.is_empty()).then(|| differences.join("; "))
}

/// The value at `path`: JSON pointer segments, each optionally followed by `[field=value]`, which picks the
/// element of a list whose `field` is `value`.
fn lookup<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = object;
    for segment in segments(path).into_iter().skip(1) {
        let (key, pick) = match segment.split_once('[') {
            Some((key, rest)) => (key, Some(rest.strip_suffix(']')?.split_once('=')?)),
            None => (segment, None),
        };
        if !key.is_empty() {
            let key = key.replace("~1", "/").replace("~0", "~");
            current = match current {
                Value::Object(map) => map.get(&key)?,
                Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        if let Some((field, value)) = pick {
            current = current
                .as_array()?
                .iter()
                .find(|item| item.get(field).and_then(Value::as_str) == Some(value))?;
        }
    }
    Some(current)
}

/// `path` split at the slashes outside `[…]`, so that a picked value may hold a slash (`[id=shop/web]`).
fn segments(path: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let (mut start, mut depth) = (0, 0usize);
    for (index, character) in path.char_indices() {
        match character {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                segments.push(&path[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    segments.push(&path[start..]);
    segments
}

#[test]
fn paths_pick_list_elements_by_a_field_that_may_hold_slashes() {
    let status = serde_json::json!({"status": {"resources": [
        {"id": "shop/web", "state": "Ready"},
        {"id": "shop/db", "state": "NotReady"},
    ], "counts": {"a/b": 1}}});
    assert_eq!(
        lookup(&status, "/status/resources[id=shop/db]/state"),
        Some(&serde_json::json!("NotReady"))
    );
    assert_eq!(
        lookup(&status, "/status/counts/a~1b"),
        Some(&serde_json::json!(1))
    );
    assert_eq!(
        lookup(&status, "/status/resources[id=shop/none]/state"),
        None
    );
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_string(), Value::to_string)
}

fn cell_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The object's printer columns, as `kubectl get` asks for them (a `meta.k8s.io/v1` Table).
async fn columns(
    client: &kube::Client,
    resource: &ApiResource,
    expected: &Expected,
) -> Result<Vec<(String, Value)>, String> {
    let prefix = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    let path = match &expected.namespace {
        Some(ns) => format!(
            "{prefix}/namespaces/{ns}/{}/{}",
            resource.plural, expected.name
        ),
        None => format!("{prefix}/{}/{}", resource.plural, expected.name),
    };
    let request = http::Request::get(path)
        .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let table: Value = client.request(request).await.map_err(|e| e.to_string())?;
    let names: Vec<String> = table["columnDefinitions"]
        .as_array()
        .ok_or("no columnDefinitions")?
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    let cells = table["rows"][0]["cells"].as_array().ok_or("no row")?;
    Ok(names.into_iter().zip(cells.iter().cloned()).collect())
}

async fn present(dev: &Dev, on: &str, expected: &Expected) {
    let client = client_for(dev, on);
    let deadline = Instant::now() + WAIT;
    loop {
        let Some(difference) = mismatch(&client, expected).await else {
            return;
        };
        assert!(
            Instant::now() < deadline,
            "{}: {difference} (after {} s)\nhub: {}",
            expected.describe(on),
            WAIT.as_secs(),
            hub_summary(dev).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn absent(dev: &Dev, on: &str, expected: &Expected) {
    let client = client_for(dev, on);
    let (api, _) = api_for(&client, expected)
        .await
        .unwrap_or_else(|| panic!("{}: kind not served", expected.describe(on)));
    let found = api.get_opt(&expected.name).await.expect("read");
    assert!(
        found.is_none(),
        "{}: exists but must not",
        expected.describe(on)
    );
}

/// The GitRepos' status on the hub, for failure messages.
async fn hub_summary(dev: &Dev) -> String {
    match dev.state().await {
        Ok(state) => state
            .gitrepos
            .iter()
            .map(|repo| {
                format!(
                    "{}/{}: {}",
                    repo.metadata.namespace.as_deref().unwrap_or_default(),
                    repo.metadata.name.as_deref().unwrap_or_default(),
                    serde_json::to_string(&repo.status).unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("unreadable: {e}"),
    }
}

/// Every folder of `testdata/docs/` has a test below, so no fixture is silently left out.
#[test]
fn every_fixture_has_a_test() {
    let mut folders: Vec<String> = std::fs::read_dir(fixture_dir(""))
        .expect("testdata/docs")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| fixture_dir(name).is_dir())
        .collect();
    folders.sort();
    let mut tested_sorted: Vec<String> = TESTED.iter().map(|s| s.to_string()).collect();
    tested_sorted.sort();
    assert_eq!(folders, tested_sorted);
}

/// One test per fixture folder: `test_name => "folder"` (the folder is named after the page).
macro_rules! docs_pages {
    ($($test:ident => $page:literal),* $(,)?) => {
        const TESTED: &[&str] = &[$($page),*];
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                run($page).await;
            }
        )*
    };
}

docs_pages! {
    quickstart => "quickstart",
    gitrepo_content => "gitrepo-content",
    gitrepo_targets => "gitrepo-targets",
    namespaces => "namespaces",
    ref_fleet_yaml => "ref-fleet-yaml",
    ref_gitrepo => "ref-gitrepo",
    ref_status_fields => "ref-status-fields",
    troubleshooting => "troubleshooting",
}
