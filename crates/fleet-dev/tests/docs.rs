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
//! `steps` then change something and say what must follow, in order. Each step runs its `actions`, then
//! checks its own `objects` and `absent` as above:
//!
//! ```yaml
//! steps:
//!   - actions:
//!       - patch: {on: cluster-1, apiVersion: v1, kind: ConfigMap, namespace: default, name: web,
//!                 merge: {data: {mode: changed}}}     # a JSON merge patch, as someone editing the object
//!       - delete: {on: cluster-1, apiVersion: batch/v1, kind: Job, namespace: default, name: init}
//!       - create: {on: hub, object: {apiVersion: v1, kind: Secret, metadata: {…}, stringData: {…}}}
//!       - commit: {branch: main, write: {app/cm.yaml: "…"}, remove: [app/old.yaml]}
//!         # a commit to the GitRepos' repository (on `branch`, default main) that nobody announces (dev
//!         # mode's folder watch does not see it), so that only polling or a webhook can make a GitRepo read it
//!       - webhook: {branch: main, secret: s3cret, status: 200, response: "1 GitRepo(s) triggered"}
//!         # a GitHub push event for the newest commit of `branch` of that repository POSTed to the
//!         # controller's webhook receiver (signed when `secret` is given), the HTTP status it must get and
//!         # text its answer must contain
//!     objects: [...]
//!     absent: [...]
//! ```
//!
//! In `fields`, `null` wants the field absent. `count: {path: n}` beside `fields` says that the list or map at `path` has `n` elements.
//!
//! A path is a JSON pointer (`~1` stands for `/` in a key) whose segments may pick a list element by one of its
//! fields: `/status/conditions[type=Ready]/status`.
//!
//! Dev mode runs three clusters labelled `env=dev`, `env=staging` and `env=prod` (`cluster-1` … `cluster-3`).

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fleet_dev::{Dev, RepoRequest, RepoSource};
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
    #[serde(default)]
    steps: Vec<Step>,
}

/// Actions, then what must hold after them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    actions: Vec<Action>,
    #[serde(default)]
    objects: Vec<Expected>,
    #[serde(default)]
    absent: Vec<Expected>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Action {
    Patch {
        #[serde(flatten)]
        target: Target,
        merge: Value,
    },
    Delete(Target),
    Create {
        on: String,
        object: Value,
    },
    Commit {
        #[serde(default)]
        branch: Option<String>,
        #[serde(default)]
        write: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        remove: Vec<String>,
    },
    Webhook {
        #[serde(default)]
        branch: Option<String>,
        #[serde(default)]
        secret: Option<String>,
        status: u16,
        response: String,
    },
}

/// One object on the hub or a cluster.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Target {
    on: String,
    api_version: String,
    kind: String,
    #[serde(default)]
    namespace: Option<String>,
    name: String,
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
    #[serde(default)]
    count: serde_json::Map<String, Value>,
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
    let dev = support::dev_mode(3, vec![RepoRequest::from(source)], state.path()).await;

    check(&dev, &expectations.objects, &expectations.absent).await;
    let mut work = None;
    for (index, step) in expectations.steps.iter().enumerate() {
        for action in &step.actions {
            act(&dev, &dir, &mut work, action)
                .await
                .unwrap_or_else(|e| panic!("{page}: step {}: {e}", index + 1));
        }
        check(&dev, &step.objects, &step.absent).await;
    }
    dev.shutdown().await;
}

async fn check(dev: &Dev, objects: &[Expected], absent_objects: &[Expected]) {
    for expected in objects {
        for on in &expected.on {
            present(dev, on, expected).await;
        }
    }
    for expected in absent_objects {
        for on in &expected.on {
            absent(dev, on, expected).await;
        }
    }
}

/// The dynamic API of one object's kind on `on`.
async fn target_api(dev: &Dev, target: &Target) -> Result<Api<DynamicObject>, String> {
    let expected = Expected {
        on: vec![target.on.clone()],
        api_version: target.api_version.clone(),
        kind: target.kind.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        fields: Default::default(),
        containing: Default::default(),
        columns: Default::default(),
        count: Default::default(),
    };
    let client = client_for(dev, &target.on);
    api_for(&client, &expected)
        .await
        .map(|(api, _)| api)
        .ok_or_else(|| format!("{}: kind not served", expected.describe(&target.on)))
}

/// Runs one action; `work` is the working copy of the repository that `commit` changes (made from the
/// fixture's `repo/` at the first commit).
async fn act(
    dev: &Dev,
    dir: &Path,
    work: &mut Option<tempfile::TempDir>,
    action: &Action,
) -> Result<(), String> {
    match action {
        Action::Patch { target, merge } => {
            let api = target_api(dev, target).await?;
            api.patch(
                &target.name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(merge),
            )
            .await
            .map_err(|e| format!("patch {}: {e}", target.name))?;
        }
        Action::Delete(target) => {
            let api = target_api(dev, target).await?;
            api.delete(&target.name, &Default::default())
                .await
                .map_err(|e| format!("delete {}: {e}", target.name))?;
        }
        Action::Create { on, object } => {
            let object: DynamicObject =
                serde_json::from_value(object.clone()).map_err(|e| format!("create: {e}"))?;
            let types = object.types.clone().ok_or("create: no apiVersion/kind")?;
            let target = Target {
                on: on.clone(),
                api_version: types.api_version,
                kind: types.kind,
                namespace: object.metadata.namespace.clone(),
                name: object.metadata.name.clone().unwrap_or_default(),
            };
            target_api(dev, &target)
                .await?
                .create(&Default::default(), &object)
                .await
                .map_err(|e| format!("create {}: {e}", target.name))?;
        }
        Action::Commit {
            branch,
            write,
            remove,
        } => {
            let snapshot = snapshot(dev)?;
            if work.is_none() {
                let copy = tempfile::tempdir().map_err(|e| e.to_string())?;
                copy_dir(&dir.join("repo"), copy.path())?;
                *work = Some(copy);
            }
            let root = work.as_ref().expect("working copy").path().to_path_buf();
            for (path, content) in write {
                let file = root.join(path);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                std::fs::write(&file, content).map_err(|e| format!("{path}: {e}"))?;
            }
            for path in remove {
                std::fs::remove_file(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
            }
            let committed = snapshot
                .commit_dir(
                    &root,
                    &[branch.as_deref().unwrap_or(BRANCH).to_string()],
                    "docs suite: a new commit",
                )
                .map_err(|e| e.to_string())?;
            committed.ok_or("commit: nothing changed")?;
        }
        Action::Webhook {
            branch,
            secret,
            status,
            response,
        } => {
            let snapshot = snapshot(dev)?;
            let branch = branch.as_deref().unwrap_or(BRANCH);
            let commit = head(snapshot.git_dir(), branch)?;
            let push = Push {
                repo_url: snapshot.url(),
                branch: branch.to_string(),
                commit,
            };
            let (got_status, got_body) =
                post_push(&dev.webhook_url(), &push, secret.as_deref()).await?;
            if got_status != *status || !got_body.contains(response.as_str()) {
                return Err(format!(
                    "webhook: want {status} {response:?}, got {got_status} {got_body:?}"
                ));
            }
        }
    }
    Ok(())
}

/// The branch fixtures' GitRepos follow (dev mode's default).
const BRANCH: &str = "main";

/// The repository dev mode made of the fixture's `repo/`.
fn snapshot(dev: &Dev) -> Result<&fleet_dev::snapshot::SnapshotRepo, String> {
    dev.repos()
        .iter()
        .find_map(|repo| repo.snapshot.as_ref())
        .ok_or_else(|| "no repository made from an example folder".to_string())
}

/// The commit `branch` points at.
fn head(git_dir: &Path, branch: &str) -> Result<String, String> {
    let repo = gix::open(git_dir).map_err(|e| e.to_string())?;
    let mut reference = repo
        .find_reference(format!("refs/heads/{branch}").as_str())
        .map_err(|e| e.to_string())?;
    Ok(reference
        .peel_to_id()
        .map_err(|e| e.to_string())?
        .to_string())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// What a push event announces.
struct Push {
    repo_url: String,
    branch: String,
    commit: String,
}

/// POSTs a GitHub push event (`X-GitHub-Event: push`, signed with `X-Hub-Signature-256` when a secret is
/// given) to the webhook receiver at `url`; returns the HTTP status and body of the answer.
async fn post_push(url: &str, push: &Push, secret: Option<&str>) -> Result<(u16, String), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let body = serde_json::json!({
        "ref": format!("refs/heads/{}", push.branch),
        "after": push.commit,
        "repository": {"clone_url": push.repo_url, "html_url": push.repo_url},
    })
    .to_string();
    let signature = match secret {
        Some(secret) => format!(
            "X-Hub-Signature-256: {}\r\n",
            fleet_testing::github_signature(secret.as_bytes(), body.as_bytes())
        ),
        None => String::new(),
    };
    let rest = url.strip_prefix("http://").ok_or("an http URL")?;
    let (host, path) = rest.split_once('/').ok_or("a path")?;
    let mut stream = tokio::net::TcpStream::connect(host)
        .await
        .map_err(|e| e.to_string())?;
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nX-GitHub-Event: push\r\n{signature}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {answer}"))?;
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    Ok((status, body))
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
        // `null` wants the field absent (Fleet leaves some fields empty, and empty fields are omitted).
        let matches = if want.is_null() {
            got.is_none_or(Value::is_null)
        } else {
            got == Some(want)
        };
        if !matches {
            differences.push(format!("{path}: want {want}, got {}", shown(got)));
        }
    }
    for (path, want) in &expected.count {
        let got = lookup(&object, path).map(|value| match value {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 1,
        });
        if got.map(|n| n as u64) != want.as_u64() {
            differences.push(format!(
                "{path}: want {want} elements, got {}",
                got.map_or_else(|| "nothing".to_string(), |n| n.to_string())
            ));
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
    gitrepo_add => "gitrepo-add",
    bundle_diffs => "bundle-diffs",
    rollout => "rollout",
    webhook => "webhook",
}
