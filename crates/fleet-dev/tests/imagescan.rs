//! Image scans end to end in dev mode, with real servers: Debian's `docker-registry` (tags pushed into it with
//! the real `helm push`) and a git repository served by the real `git http-backend` over smart HTTP. The
//! GitRepo's fleet.yaml declares an image scan and its Deployment carries a marker: the controller creates the
//! ImageScan, finds the newest tag, commits the new image into the repository and pushes it (the real git sees
//! the commit), reads that commit and the simulated clusters run the new image. A newer tag pushed to the
//! registry leads to another commit and deployment; a commit that drops the scan removes the ImageScan.
//! ImageScans made by hand: a bad policy, a registry that is
//! down and wrong credentials say why on the condition (no password anywhere); a dockerconfigjson `secretRef`
//! with the right ones scans a registry with auth.

mod support;

#[path = "../../fleet-chart-source/tests/servers/mod.rs"]
mod servers;

#[path = "../../fleet-git/tests/support/http.rs"]
#[allow(dead_code)] // the TLS half of the server is not used here
mod git_http;

use std::mem::ManuallyDrop;
use std::path::Path;

use fleet_api::{IMAGESCAN_SCANNED, ImageScan};
use fleet_dev::{Dev, RepoRequest, RepoSource};
use fleet_testing::{GitFixture, run_git};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use serde_json::json;
use servers::{PASSWORD, Registry, USER};
use support::*;

/// The image of the Deployment `app` in namespace `apps` of `cluster`, once it exists.
async fn deployed_image(dev: &Dev, cluster: &str) -> Option<String> {
    let deployment = Api::<Deployment>::namespaced(dev.cluster(cluster).unwrap().client(), "apps")
        .get_opt("app")
        .await
        .ok()??;
    deployment
        .spec?
        .template
        .spec?
        .containers
        .first()?
        .image
        .clone()
}

fn push_tag(registry: &Registry, home: &Path, version: &str) {
    registry.push_versions(home, "app", &[version], "team");
}

fn scan_condition(scan: &ImageScan) -> Option<(String, String)> {
    scan.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == IMAGESCAN_SCANNED)
        .map(|c| (c.status.clone(), c.message.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_newer_tag_is_committed_pushed_and_deployed() {
    let home = tempfile::tempdir().unwrap();
    let registry = Registry::start(false);
    push_tag(&registry, home.path(), "1.0.0");
    let image = format!("{}/team/app", registry.host());

    // The repository: a bare `app.git` served over smart HTTP, filled from a work tree.
    let root = tempfile::tempdir().unwrap();
    run_git(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", "app.git"],
    );
    let bare = root.path().join("app.git");
    run_git(&bare, &["config", "http.receivepack", "true"]);
    let work = GitFixture::new();
    work.write(
        "fleet.yaml",
        &format!(
            "defaultNamespace: apps\nimageScans:\n- tagName: app\n  image: {image}\n  interval: 1s\n  policy:\n    semver:\n      range: \">=1.0.0\"\n"
        ),
    )
    .write(
        "deployment.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    matchLabels: {{app: app}}\n  template:\n    metadata:\n      labels: {{app: app}}\n    spec:\n      containers:\n      - name: app\n        image: {image}:0.1.0 # {{\"$imagescan\": \"app\"}}\n"
        ),
    );
    work.commit("first");
    work.git(&["push", "-q", bare.to_str().unwrap(), "HEAD:main"]);
    // The server owns a runtime of its own: started (and never dropped) outside the test's runtime.
    let project_root = root.path().to_path_buf();
    let server = ManuallyDrop::new(
        std::thread::spawn(move || git_http::GitHttpServer::start(project_root, None))
            .join()
            .unwrap(),
    );

    let state = tempfile::tempdir().unwrap();
    let dev = dev_mode(
        3,
        vec![RepoRequest {
            source: RepoSource::Url(server.url("app")),
            name: Some(REPO.to_string()),
            spec: json!({
                "branch": "main",
                "targets": [{"clusterSelector": {}}],
                "imageScanInterval": "1s",
                "imageScanCommit": {
                    "authorName": "Fleet Bot",
                    "authorEmail": "bot@fleet.example",
                    "messageTemplate": "update image",
                },
            })
            .as_object()
            .cloned()
            .unwrap(),
        }],
        state.path(),
    )
    .await;

    // The ImageScan from fleet.yaml, scanned.
    let scans: Api<ImageScan> = Api::namespaced(dev.hub_client(), WORKSPACE);
    let scan = eventually("the ImageScan scanned", || async {
        let scan = scans.get_opt("imagescan-app-0").await.ok()??;
        (scan.status.as_ref()?.latest_tag == "1.0.0").then_some(scan)
    })
    .await;
    assert_eq!(scan.spec.gitrepo_name, REPO);
    let status = scan.status.clone().unwrap();
    assert_eq!(status.latest_image, format!("{image}:1.0.0"));
    assert_eq!(status.canonical_image_name, image);
    assert!(status.latest_digest.starts_with("sha256:"), "{status:?}");
    assert!(status.last_scan_time.is_some());
    assert_eq!(scan_condition(&scan), Some(("True".into(), String::new())));

    // Committed and pushed: the real git sees it, with the GitRepo's author and message.
    let show = |rev: &str| run_git(&bare, &["show", rev]);
    eventually("the 1.0.0 commit in the repository", || async {
        show("main:deployment.yaml")
            .contains(&format!(
                "image: {image}:1.0.0 # {{\"$imagescan\": \"app\"}}"
            ))
            .then_some(())
    })
    .await;
    assert_eq!(
        run_git(&bare, &["log", "-1", "--format=%an <%ae>|%s", "main"]).trim(),
        "Fleet Bot <bot@fleet.example>|update image"
    );
    assert_eq!(show("main:fleet.yaml"), show("main~1:fleet.yaml"));
    for cluster in ["cluster-1", "cluster-2", "cluster-3"] {
        eventually(&format!("1.0.0 on {cluster}"), || async {
            (deployed_image(&dev, cluster).await? == format!("{image}:1.0.0")).then_some(())
        })
        .await;
    }

    // A newer tag in the registry: another commit, read and deployed.
    push_tag(&registry, home.path(), "1.1.0");
    eventually("the 1.1.0 commit in the repository", || async {
        show("main:deployment.yaml")
            .contains(&format!("{image}:1.1.0"))
            .then_some(())
    })
    .await;
    let head = run_git(&bare, &["rev-parse", "main"]).trim().to_string();
    assert_eq!(run_git(&bare, &["rev-list", "--count", "main"]).trim(), "3");
    eventually("the GitRepo at the pushed commit", || async {
        (gitrepo(&dev).await.status?.commit == head).then_some(())
    })
    .await;
    for cluster in ["cluster-1", "cluster-2", "cluster-3"] {
        eventually(&format!("1.1.0 on {cluster}"), || async {
            (deployed_image(&dev, cluster).await? == format!("{image}:1.1.0")).then_some(())
        })
        .await;
    }
    eventually("ImageSynced on the GitRepo", || async {
        let status = gitrepo(&dev).await.status?;
        status.last_synced_image_scan_time.as_ref()?;
        status
            .base
            .conditions
            .iter()
            .any(|c| c.type_ == fleet_api::IMAGESCAN_SYNCED && c.status == "True")
            .then_some(())
    })
    .await;

    // A commit whose fleet.yaml drops the scan removes its ImageScan (and nothing is committed any more).
    work.git(&["pull", "-q", bare.to_str().unwrap(), "main"]);
    work.write("fleet.yaml", "defaultNamespace: apps\n");
    work.commit("no more scans");
    work.git(&["push", "-q", bare.to_str().unwrap(), "HEAD:main"]);
    let dropped = run_git(&bare, &["rev-parse", "main"]).trim().to_string();
    let repos: Api<fleet_api::GitRepo> = Api::namespaced(dev.hub_client(), WORKSPACE);
    repos
        .patch(
            REPO,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"forceSyncGeneration": 1}})),
        )
        .await
        .unwrap();
    eventually(
        "the ImageScan removed with its fleet.yaml entry",
        || async {
            let read = gitrepo(&dev).await.status?.commit == dropped;
            (read && scans.get_opt("imagescan-app-0").await.ok()?.is_none()).then_some(())
        },
    )
    .await;
    assert_eq!(run_git(&bare, &["rev-parse", "main"]).trim(), dropped);

    // Errors go to the ImageScan's condition: a bad policy, a registry that is down, wrong credentials (never
    // echoed); right credentials from a dockerconfigjson Secret find the tag.
    let private = Registry::start(true);
    let private_home = tempfile::tempdir().unwrap();
    push_tag(&private, private_home.path(), "2.0.0");
    for (name, password) in [("right", PASSWORD), ("wrong", "not-the-password-42")] {
        let config = json!({"auths": {private.host(): {"username": USER, "password": password}}});
        create_secret(
            &dev,
            name,
            Some("kubernetes.io/dockerconfigjson"),
            json!({".dockerconfigjson": config.to_string()}),
        )
        .await;
    }
    let private_image = format!("{}/team/app", private.host());
    for (name, image, policy, secret) in [
        (
            "bad-range",
            image.as_str(),
            json!({"semver": {"range": "not a range"}}),
            None,
        ),
        ("down", "127.0.0.1:1/team/app", json!({}), None),
        (
            "wrong-password",
            private_image.as_str(),
            json!({}),
            Some("wrong"),
        ),
        (
            "right-password",
            private_image.as_str(),
            json!({}),
            Some("right"),
        ),
    ] {
        let mut spec = json!({"tagName": name, "image": image, "interval": "1s",
                              "gitrepoName": "other", "policy": policy});
        if let Some(secret) = secret {
            spec["secretRef"] = json!({"name": secret});
        }
        let scan: ImageScan = serde_json::from_value(json!({
            "apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ImageScan",
            "metadata": {"name": name, "namespace": WORKSPACE}, "spec": spec,
        }))
        .unwrap();
        scans.create(&PostParams::default(), &scan).await.unwrap();
    }
    let failure = |name: &'static str| {
        let scans = scans.clone();
        async move {
            eventually(&format!("{name} reported"), || async {
                let scan = scans.get(name).await.ok()?;
                match scan_condition(&scan)? {
                    (status, message) if status == "False" => Some(message),
                    _ => None,
                }
            })
            .await
        }
    };
    let message = failure("bad-range").await;
    assert!(message.contains("policy.semver.range"), "{message}");
    let message = failure("down").await;
    assert!(message.contains("127.0.0.1:1"), "{message}");
    let message = failure("wrong-password").await;
    assert!(message.contains("401"), "{message}");
    let right = eventually("the private registry scanned", || async {
        let scan = scans.get("right-password").await.ok()?;
        (scan.status.as_ref()?.latest_tag == "2.0.0").then_some(scan)
    })
    .await;
    assert_eq!(scan_condition(&right), Some(("True".into(), String::new())));
    for scan in scans.list(&Default::default()).await.unwrap() {
        let text = serde_json::to_string(&scan).unwrap();
        assert!(
            !text.contains(PASSWORD) && !text.contains("not-the-password-42"),
            "{text}"
        );
    }
}
