//! Charts from real servers, read into Bundles and rendered as the real `helm template` renders the same chart
//! reference: an HTTPS Helm repository with basic auth and a private CA, and `docker-registry` with and without
//! htpasswd auth holding charts pushed with `helm push`. Credentials never show in errors, Bundles or `Debug`.

mod servers;

use fleet_api::Bundle;
use fleet_bundle::ReadOptions;
use fleet_bundle::read::read_bundles_with_charts;
use fleet_bundle::remote::ChartRef;
use fleet_bundle::tree::MemoryTree;
use fleet_chart_source::{Auth, ChartSource, Credentials};
use fleet_render::{Style, decode_files, detect_style, helm::render_bundle_chart};
use servers::{
    ChartRepo, PASSWORD, Registry, TagPager, USER, helm, package_chart, run, serve_versions,
};

fn options() -> ReadOptions {
    ReadOptions {
        repo_name: "test".into(),
        ..ReadOptions::default()
    }
}

fn read(
    source: &ChartSource,
    credentials: Credentials,
    fleet_yaml: &str,
) -> Result<Bundle, String> {
    let mut tree = MemoryTree::new();
    tree.add_file("app/fleet.yaml", fleet_yaml);
    read_tree(source, credentials, &tree)
}

/// The one bundle at `app` in `tree`, its charts fetched through a new session of `source`.
fn read_tree(
    source: &ChartSource,
    credentials: Credentials,
    tree: &MemoryTree,
) -> Result<Bundle, String> {
    let session = source.session(credentials);
    let fetcher = session.for_path("app");
    read_bundles_with_charts(tree, &["app".into()], &options(), &fetcher, &mut |_, _| {})
        .map(|mut bundles| bundles.remove(0))
        .map_err(|err| err.to_string())
}

/// Our `helm template` output for the bundle's chart with its own options.
fn render(bundle: &Bundle) -> String {
    let files = decode_files(&bundle.spec.resources).unwrap();
    let Style::Helm { chart_dir } = detect_style(&files, &bundle.spec.options) else {
        panic!("not a Helm bundle: {:?}", files.keys().collect::<Vec<_>>());
    };
    render_bundle_chart(&files, &chart_dir, &bundle.spec.options, "rel").unwrap()
}

fn credentials(auth: Auth, regex: &str) -> Credentials {
    Credentials {
        default: auth,
        url_regex: regex.into(),
        ..Default::default()
    }
}

fn assert_no_password(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "{what} shows the password: {text}"
    );
}

#[test]
fn helm_repository_over_https_with_basic_auth_and_a_private_ca() {
    let home = tempfile::tempdir().unwrap();
    let served = home.path().join("served");
    serve_versions(
        home.path(),
        "app",
        &["1.2.0", "1.2.5", "2.0.0", "2.1.0-rc.1", "104.1.0+up57.0.3"],
        &served,
    );
    let repo = ChartRepo::start(&served);
    let url = repo.url();
    let ca_file = home.path().join("ca.pem");
    std::fs::write(&ca_file, &repo.pki.ca).unwrap();
    let auth = repo.auth();
    let source = ChartSource::new();
    let regex = "https://127\\.0\\.0\\.1";

    for (version, expected) in [
        ("~1.2", "1.2.5"),
        (">=2.0.0 <3", "2.0.0"),
        ("", "104.1.0+up57.0.3"),
        ("1.2.0", "1.2.0"),
        ("104.1.0+up57.0.3", "104.1.0+up57.0.3"),
    ] {
        let fleet_yaml = format!("helm:\n  repo: {url}\n  chart: app\n  version: \"{version}\"\n");
        let bundle = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
        let ours = render(&bundle);
        let mut golden = helm(home.path());
        golden
            .args(["template", "rel", "app", "--repo", &url])
            .args(["--username", USER, "--password", PASSWORD])
            .arg("--ca-file")
            .arg(&ca_file);
        if !version.is_empty() {
            golden.args(["--version", version]);
        }
        let golden = run(&mut golden);
        assert_eq!(ours, golden, "version {version:?}");
        assert!(
            ours.contains(&format!("chart: app-{}", expected.replace('+', "_"))),
            "{ours}"
        );
        assert_no_password("the Bundle", &serde_json::to_string(&bundle).unwrap());
    }

    // Same commit, same chart version: the same Bundle, and the archive came from the cache.
    let fleet_yaml = format!("helm:\n  repo: {url}\n  chart: app\n  version: 1.2.0\n");
    let downloads = source.stats().downloads;
    let first = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
    let second = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&second).unwrap()
    );
    assert_eq!(source.stats().downloads, downloads, "cached by digest");

    // Credentials go only where helmRepoURLRegex matches; an empty regex sends none (Fleet's rule).
    for regex in ["", "https://charts\\.example\\.com"] {
        let err = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap_err();
        assert!(err.contains("401"), "{err}");
        assert_no_password("the error", &err);
    }
    // A wrong password, or a CA that is not trusted, fail clearly; insecureSkipVerify skips the CA.
    let wrong = Auth {
        password: format!("{PASSWORD}-wrong"),
        ..auth.clone()
    };
    let err = read(&source, credentials(wrong, regex), &fleet_yaml).unwrap_err();
    assert!(
        err.contains("401") && err.contains("app/fleet.yaml"),
        "{err}"
    );
    assert_no_password("the error", &err);
    let untrusted = Auth {
        ca_bundle: Vec::new(),
        ..auth.clone()
    };
    let err = read(&source, credentials(untrusted.clone(), regex), &fleet_yaml).unwrap_err();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let insecure = Auth {
        insecure_skip_verify: true,
        ..untrusted
    };
    read(&source, credentials(insecure, regex), &fleet_yaml).unwrap();
    assert_no_password("Debug", &format!("{auth:?}"));

    // A version that does not exist names what does.
    let err = read(
        &source,
        credentials(auth.clone(), regex),
        &format!("helm:\n  repo: {url}\n  chart: app\n  version: \">=500\"\n"),
    )
    .unwrap_err();
    assert!(
        err.contains("no version of chart \"app\" matches \">=500\""),
        "{err}"
    );
}

#[test]
fn oci_registry_without_and_with_basic_auth() {
    let home = tempfile::tempdir().unwrap();
    let source = ChartSource::new();

    let open = Registry::start(false);
    let archives = open.push_versions(
        home.path(),
        "oci-app",
        &["1.0.0", "1.1.0", "2.0.0-beta.1"],
        "charts",
    );
    let plain = Auth {
        basic_http: true,
        ..Default::default()
    };
    let reference = format!("oci://{}/charts/oci-app", open.host());
    for (version, expected) in [("", "1.1.0"), ("~1.0", "1.0.0"), ("1.1.0", "1.1.0")] {
        let fleet_yaml = format!("helm:\n  repo: {reference}\n  version: \"{version}\"\n");
        let bundle = read(&source, credentials(plain.clone(), ""), &fleet_yaml).unwrap();
        let ours = render(&bundle);
        let mut golden = helm(home.path());
        golden.args(["template", "rel", &reference, "--plain-http"]);
        if !version.is_empty() {
            golden.args(["--version", version]);
        }
        assert_eq!(ours, run(&mut golden), "version {version:?}");
        assert!(
            ours.contains(&format!("chart: oci-app-{expected}")),
            "{ours}"
        );
    }
    // The deprecated helm.chart form and a pinned digest give the same chart.
    let by_chart = read(
        &source,
        credentials(plain.clone(), ""),
        &format!("helm:\n  chart: {reference}\n  version: 1.0.0\n"),
    )
    .unwrap();
    assert!(render(&by_chart).contains("chart: oci-app-1.0.0"));
    std::fs::create_dir_all(home.path().join("pulled")).unwrap();
    let output = helm(home.path())
        .args([
            "pull",
            &reference,
            "--version",
            "1.0.0",
            "--plain-http",
            "-d",
        ])
        .arg(home.path().join("pulled"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let manifest = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let digest = manifest
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("helm pull printed no digest: {manifest}"))
        .to_string();
    let pinned = read(
        &source,
        credentials(plain.clone(), ""),
        &format!("helm:\n  repo: {reference}@{digest}\n"),
    )
    .unwrap();
    assert!(render(&pinned).contains("chart: oci-app-1.0.0"));

    let locked = Registry::start(true);
    locked.push(home.path(), &archives[0], "private");
    let reference = format!("oci://{}/private/oci-app", locked.host());
    let fleet_yaml = format!("helm:\n  repo: {reference}\n  version: 1.0.0\n");
    let err = read(&source, credentials(plain.clone(), ""), &fleet_yaml).unwrap_err();
    assert!(
        err.contains("asks for credentials") || err.contains("401"),
        "{err}"
    );
    let with_credentials = Auth {
        username: USER.into(),
        password: PASSWORD.into(),
        ..plain.clone()
    };
    let regex = format!("oci://{}", locked.host().replace('.', "\\."));
    let bundle = read(
        &source,
        credentials(with_credentials.clone(), &regex),
        &fleet_yaml,
    )
    .unwrap();
    assert!(render(&bundle).contains("chart: oci-app-1.0.0"));
    assert_no_password("the Bundle", &serde_json::to_string(&bundle).unwrap());
    let wrong = Auth {
        password: "nope".into(),
        ..with_credentials
    };
    let err = read(&source, credentials(wrong, &regex), &fleet_yaml).unwrap_err();
    assert!(err.contains("401") || err.contains("refused"), "{err}");
}

#[test]
fn repository_dependencies_are_downloaded_with_chart_lock_honoured() {
    let home = tempfile::tempdir().unwrap();
    let served = home.path().join("served");
    serve_versions(home.path(), "dep", &["1.0.0", "1.1.0"], &served);
    let repo = ChartRepo::start(&served);
    let url = repo.url();
    let auth = repo.auth();
    let source = ChartSource::new();
    let chart_yaml = format!(
        "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: dep\n  version: \">=1.0.0\"\n  repository: {url}\n"
    );
    let read_app = |lock: Option<&str>, fleet_yaml: &str| {
        let mut tree = MemoryTree::new();
        tree.add_file("app/fleet.yaml", fleet_yaml)
            .add_file("app/Chart.yaml", chart_yaml.as_str())
            .add_file(
                "app/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parent\n",
            );
        if let Some(lock) = lock {
            tree.add_file("app/Chart.lock", lock);
        }
        read_tree(
            &source,
            credentials(auth.clone(), "https://127\\.0\\.0\\.1:"),
            &tree,
        )
    };
    let names = |bundle: &Bundle| -> Vec<String> {
        bundle
            .spec
            .resources
            .iter()
            .map(|r| r.name.clone())
            .collect()
    };

    let latest = read_app(None, "helm: {}\n").unwrap();
    assert!(
        names(&latest).contains(&"charts/dep-1.1.0.tgz".to_string()),
        "{:?}",
        names(&latest)
    );
    let lock = format!("dependencies:\n- name: dep\n  repository: {url}\n  version: 1.0.0\n");
    let locked = read_app(Some(&lock), "helm: {}\n").unwrap();
    assert!(
        names(&locked).contains(&"charts/dep-1.0.0.tgz".to_string()),
        "{:?}",
        names(&locked)
    );
    let objects =
        fleet_render::render_bundle(&locked.spec.resources, &locked.spec.options, "rel").unwrap();
    assert!(
        objects
            .iter()
            .any(|o| o["metadata"]["labels"]["chart"] == "dep-1.0.0"),
        "the subchart renders: {objects:?}"
    );
    let disabled = read_app(None, "helm:\n  disableDependencyUpdate: true\n").unwrap();
    assert!(
        !names(&disabled).iter().any(|n| n.starts_with("charts/")),
        "{:?}",
        names(&disabled)
    );
    // A dependency that cannot be had names the Chart.yaml, the dependency and the repository.
    let wrong = Auth {
        password: "wrong".into(),
        ..auth.clone()
    };
    let mut tree = MemoryTree::new();
    tree.add_file("app/Chart.yaml", chart_yaml.as_str())
        .add_file("app/templates/cm.yaml", "kind: ConfigMap\n");
    let err = read_tree(
        &source,
        credentials(wrong, "https://127\\.0\\.0\\.1:"),
        &tree,
    )
    .unwrap_err();
    assert!(
        err.contains("app/fleet.yaml: helm chart dependency \"dep\" of Chart.yaml from")
            && err.contains("401"),
        "{err}"
    );
    assert_no_password("the error", &err);
}

/// The single-reference API a HelmOp uses: its constraint resolved afresh on every call (a version published
/// since the last call is seen, as polling needs), from a Helm repository's index and from an OCI registry's
/// tags (Helm's `_` for `+` turned back); the chart's files fetched once per digest.
#[test]
fn single_references_resolve_afresh_and_download_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = home.path().join("served");
    serve_versions(home.path(), "app", &["1.2.0"], &served);
    let repo = ChartRepo::start(&served);
    let auth = repo.auth();
    let source = ChartSource::new();
    let chart = ChartRef::Repo {
        repo: repo.url(),
        chart: "app".into(),
        version: "^1.2".into(),
    };
    let resolved = runtime.block_on(source.resolve_version(&chart, &auth));
    assert_eq!(resolved.as_deref(), Ok("1.2.0"));
    serve_versions(home.path(), "app", &["1.3.1", "2.0.0"], &served);
    let resolved = runtime.block_on(source.resolve_version(&chart, &auth));
    assert_eq!(resolved.as_deref(), Ok("1.3.1"), "a new version is seen");
    let exact = ChartRef::Repo {
        repo: repo.url(),
        chart: "app".into(),
        version: "1.3.1".into(),
    };
    let files = runtime.block_on(source.fetch_chart(&exact, &auth)).unwrap();
    let chart_yaml = files
        .iter()
        .find(|(name, _)| name == "app/Chart.yaml")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap();
    assert!(chart_yaml.contains("version: 1.3.1"), "{chart_yaml}");
    let downloads = source.stats().downloads;
    runtime.block_on(source.fetch_chart(&exact, &auth)).unwrap();
    assert_eq!(source.stats().downloads, downloads, "cached by digest");
    let wrong = Auth {
        password: "not-it".into(),
        ..auth.clone()
    };
    let err = runtime
        .block_on(source.resolve_version(&chart, &wrong))
        .unwrap_err()
        .to_string();
    assert!(err.contains("401") && !err.contains("not-it"), "{err}");

    let registry = Registry::start(false);
    registry.push_versions(home.path(), "app", &["0.9.0", "1.0.0+build.7"], "charts");
    let plain = Auth {
        basic_http: true,
        ..Auth::default()
    };
    let oci = ChartRef::Oci {
        reference: format!("oci://{}/charts/app", registry.host()),
        version: ">=0.5".into(),
    };
    let resolved = runtime.block_on(source.resolve_version(&oci, &plain));
    assert_eq!(resolved.as_deref(), Ok("1.0.0+build.7"));
    let pinned = ChartRef::Oci {
        reference: format!("oci://{}/charts/app", registry.host()),
        version: "1.0.0+build.7".into(),
    };
    let files = runtime
        .block_on(source.fetch_chart(&pinned, &plain))
        .unwrap();
    assert!(files.iter().any(|(name, _)| name == "app/Chart.yaml"));
    let url = ChartRef::Url {
        url: "https://example.invalid/app-1.0.0.tgz".into(),
    };
    assert_eq!(
        runtime
            .block_on(source.resolve_version(&url, &plain))
            .as_deref(),
        Ok("")
    );
}

/// A tag list longer than one page: every `Link: <…>; rel="next"` page is read, so the newest matching
/// version is found wherever the (lexically sorted) pages put it, for a bundle and for a HelmOp; whether the
/// registry pages on its own (the default: no `n` asked) or because a page size was asked. Debian's registry
/// lists every tag at once (and ignores `n`), so the paging is done by `scripts/oci-tag-pager.py` in front of it.
#[test]
fn oci_tag_list_pages_are_all_read() {
    let home = tempfile::tempdir().unwrap();
    let registry = Registry::start(false);
    // Lexical tag order: 1.0.0, 1.1.0, 1.10.0, 1.2.0, 1.9.0, 2.0.0, 3.0.0-rc.1 — four pages of two.
    registry.push_versions(
        home.path(),
        "paged",
        &[
            "1.0.0",
            "1.1.0",
            "1.2.0",
            "1.9.0",
            "1.10.0",
            "2.0.0",
            "3.0.0-rc.1",
        ],
        "charts",
    );
    let plain = Auth {
        basic_http: true,
        ..Default::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let capped = TagPager::start(&registry, Some(2));
    let asked = TagPager::start(&registry, None);
    for (host, source) in [
        (capped.host(), ChartSource::new()),
        (asked.host(), ChartSource::with_tag_page_size(2)),
        // Debian's registry itself: `n` is ignored and the one page holds every tag.
        (registry.host(), ChartSource::with_tag_page_size(2)),
    ] {
        let reference = format!("oci://{host}/charts/paged");
        for (version, expected) in [("<2", "1.10.0"), ("", "2.0.0"), ("~1.9", "1.9.0")] {
            let fleet_yaml = format!("helm:\n  repo: {reference}\n  version: \"{version}\"\n");
            let bundle = read(&source, credentials(plain.clone(), ""), &fleet_yaml).unwrap();
            assert!(
                render(&bundle).contains(&format!("chart: paged-{expected}")),
                "{host}: version {version:?}"
            );
        }
        let chart = ChartRef::Oci {
            reference: reference.clone(),
            version: ">=1.2 <2".into(),
        };
        let resolved = runtime.block_on(source.resolve_version(&chart, &plain));
        assert_eq!(resolved.as_deref(), Ok("1.10.0"), "{host}");
        let pre = ChartRef::Oci {
            reference,
            version: ">=3.0.0-0".into(),
        };
        let resolved = runtime.block_on(source.resolve_version(&pre, &plain));
        assert_eq!(
            resolved.as_deref(),
            Ok("3.0.0-rc.1"),
            "{host}: the last page"
        );
    }
}

/// A chart URL is asked again in every read session (its content may change under the same URL, and Fleet
/// downloads it at every read), but an unchanged archive is not downloaded again: the server's strong entity
/// tag is sent back in `If-None-Match`, and `304 Not Modified` takes the archive from the cache. A changed
/// archive at the same URL is downloaded and read.
#[test]
fn chart_urls_are_revalidated_in_every_read_session() {
    let home = tempfile::tempdir().unwrap();
    let served = home.path().join("served");
    let archive = package_chart(
        home.path(),
        &home.path().join("src"),
        "app",
        "1.0.0",
        &served,
    );
    let repo = ChartRepo::start(&served);
    let auth = repo.auth();
    let regex = "https://127\\.0\\.0\\.1";
    let fleet_yaml = format!("helm:\n  chart: {}/app-1.0.0.tgz\n", repo.url());
    let source = ChartSource::new();
    let first = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
    assert_eq!(source.stats().downloads, 1);
    let second = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
    assert_eq!(source.stats().downloads, 1, "not modified: from the cache");
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&second).unwrap()
    );

    // The same URL now serves another archive: the next read session downloads and uses it.
    let changed = package_chart(
        home.path(),
        &home.path().join("src"),
        "app",
        "1.0.1",
        &home.path().join("other"),
    );
    std::fs::copy(&changed, &archive).unwrap();
    let third = read(&source, credentials(auth.clone(), regex), &fleet_yaml).unwrap();
    assert_eq!(source.stats().downloads, 2);
    assert!(
        render(&third).contains("chart: app-1.0.1"),
        "{}",
        render(&third)
    );
    // Without the credentials the server's answer is still 401, not a cached archive.
    let err = read(&source, credentials(auth.clone(), ""), &fleet_yaml).unwrap_err();
    assert!(err.contains("401"), "{err}");
}
