//! Bad input: every `err-*` fixture (which `kubectl kustomize` also rejects) fails with an error naming the file
//! and what to fix, snapshotted; hostile inputs fail cleanly rather than panicking.

mod support;

use std::collections::BTreeMap;

use fleet_kustomize::files::from_texts as tree;
use fleet_kustomize::{Error, Options, build};

#[test]
fn error_fixtures_fail_with_clear_messages() {
    let mut seen = 0;
    for f in support::fixtures()
        .into_iter()
        .filter(|f| f.name.starts_with("err-"))
    {
        assert!(
            f.expected_err.is_some(),
            "{}: kubectl accepts this case; it is not an error case",
            f.name
        );
        let err = build(&f.files, &f.build_dir, &Options::default()).expect_err(&f.name);
        insta::assert_snapshot!(f.name.clone(), err.to_string());
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} error fixtures");
}

#[test]
fn cycle_names_the_chain() {
    let t = tree(&[
        ("a/kustomization.yaml", "resources: [../b]\n"),
        ("b/kustomization.yaml", "resources: [../a]\n"),
    ]);
    let err = build(&t, "a", &Options::default()).unwrap_err();
    assert_eq!(
        err,
        Error::Cycle {
            chain: "a -> b -> a".into()
        }
    );
}

#[test]
fn self_reference_is_a_cycle() {
    let t = tree(&[("kustomization.yaml", "resources: [.]\n")]);
    let err = build(&t, "", &Options::default()).unwrap_err();
    assert_eq!(
        err,
        Error::Cycle {
            chain: ". -> .".into()
        }
    );
}

#[test]
fn remote_bases_are_rejected_clearly() {
    let t = tree(&[(
        "kustomization.yaml",
        "resources:\n- https://github.com/example/repo//base?ref=v1\n",
    )]);
    let err = build(&t, "", &Options::default()).unwrap_err().to_string();
    assert!(
        err.starts_with("kustomization.yaml: resources entry"),
        "{err}"
    );
    assert!(err.contains("remote URL"), "{err}");
}

#[test]
fn plugins_are_disabled_as_in_fleet() {
    let t = tree(&[("kustomization.yaml", "transformers:\n- t.yaml\n")]);
    let err = build(&t, "", &Options::default()).unwrap_err().to_string();
    assert_eq!(
        err,
        "kustomization.yaml: `transformers`: transformer plugins are disabled, as in Fleet"
    );
}

#[test]
fn patches_that_match_nothing_warn_and_fail_when_strict() {
    let t = tree(&[
        (
            "kustomization.yaml",
            "resources: [cm.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: '[]'\n",
        ),
        (
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        ),
    ]);
    let built = fleet_kustomize::build_reporting(&t, "", &Options::default()).unwrap();
    assert_eq!(built.objects.len(), 1, "skipped, as kubectl skips it");
    let warnings: Vec<String> = built.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "kustomization.yaml: patches: the target of kustomization.yaml (patches inline patch) (kind=Deployment) \
          matches no resource; fix the target or remove the patch (skipped, as `kubectl kustomize` skips it)"
        ]
    );
    let strict = Options {
        strict_patch_targets: true,
        ..Options::default()
    };
    let err = build(&t, "", &strict).unwrap_err().to_string();
    assert!(err.contains("matches no resource"), "{err}");
    assert!(err.contains("kind=Deployment"), "{err}");
}

#[test]
fn hostile_inputs_never_panic() {
    let cases: &[&[(&str, &str)]] = &[
        &[("kustomization.yaml", "- a\n- b\n")],
        &[("kustomization.yaml", "resources: 3\n")],
        &[
            ("kustomization.yaml", "resources: [x.yaml]\n"),
            ("x.yaml", "just a string\n"),
        ],
        &[
            ("kustomization.yaml", "resources: [x.yaml]\n"),
            ("x.yaml", "kind: List\nitems: [1, 2]\n"),
        ],
        &[
            ("kustomization.yaml", "resources: [x.yaml]\n"),
            ("x.yaml", "a: &a [*a]\n"),
        ],
        &[("kustomization.yaml", "namePrefix: [1]\n")],
        &[("kustomization.yaml", "patches:\n- patch: '{{{'\n")],
        &[
            (
                "kustomization.yaml",
                "resources: [x.yaml]\npatches:\n- patch: '[1]'\n  target: {kind: A}\n",
            ),
            ("x.yaml", "kind: A\nmetadata: {name: a}\n"),
        ],
        &[(
            "kustomization.yaml",
            "configMapGenerator:\n- name: c\n  literals: ['=x', 'novalue']\n",
        )],
        &[(
            "kustomization.yaml",
            "configMapGenerator:\n- name: c\n  files: [../../etc/passwd]\n",
        )],
        &[(
            "kustomization.yaml",
            "replacements:\n- source: {kind: X}\n  targets: []\n",
        )],
        &[("kustomization.yaml", "sortOptions: {order: random}\n")],
        &[
            (
                "kustomization.yaml",
                "resources: [x.yaml]\npatches:\n- target: {name: '('}\n  patch: '[]'\n",
            ),
            ("x.yaml", "kind: A\nmetadata: {name: a}\n"),
        ],
        &[
            ("kustomization.yaml", "components: [c]\n"),
            ("c/kustomization.yaml", "kind: Kustomization\n"),
        ],
        &[("kustomization.yaml", "\u{feff}\u{0}\u{1}")],
    ];
    for files in cases {
        let t = tree(files);
        let result = std::panic::catch_unwind(|| build(&t, "", &Options::default()));
        let result = result.unwrap_or_else(|_| panic!("panicked on {files:?}"));
        assert!(result.is_err(), "accepted {files:?}");
    }
    let mut non_utf8 = tree(&[("kustomization.yaml", "resources: [x.yaml]\n")]);
    non_utf8.insert("x.yaml".into(), vec![0xff, 0xfe, 0x00]);
    let err = build(&non_utf8, "", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("x.yaml: not valid UTF-8"), "{err}");
}

#[cfg(not(feature = "helm"))]
#[test]
fn helm_charts_without_the_engine_fail_clearly() {
    let t = tree(&[("kustomization.yaml", "helmCharts:\n- name: demo\n")]);
    let err = build(&t, "", &Options::default()).unwrap_err().to_string();
    assert!(err.contains("cargo feature `helm` is off"), "{err}");
}

#[cfg(feature = "helm")]
#[test]
fn remote_helm_charts_need_vendoring() {
    let t = tree(&[(
        "kustomization.yaml",
        "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n  version: 1.0.0\n",
    )]);
    let err = build(&t, "", &Options::default()).unwrap_err().to_string();
    assert_eq!(
        err,
        "kustomization.yaml: helmCharts \"redis\": the chart is not in charts/redis-1.0.0 and pulling it from \
         \"https://charts.example.com\" needs the network; vendor the chart into the repository under \
         charts/redis-1.0.0/redis"
    );
    let t = tree(&[("kustomization.yaml", "helmCharts:\n- name: missing\n")]);
    let err = build(&t, "", &Options::default()).unwrap_err().to_string();
    assert!(err.contains("charts/missing"), "{err}");
}

#[test]
fn truncated_and_corrupted_fixtures_never_panic() {
    let mut runs = 0;
    for f in support::fixtures() {
        let targets: Vec<String> = f
            .files
            .keys()
            .filter(|p| p.ends_with(".yaml") || p.ends_with(".yml"))
            .cloned()
            .collect();
        for path in targets {
            let original = f.files[&path].clone();
            let cuts = [
                original.len() / 3,
                original.len() / 2,
                original.len().saturating_sub(7),
            ];
            for (i, cut) in cuts.into_iter().enumerate() {
                let mut files = f.files.clone();
                let mut bytes = original[..cut].to_vec();
                if i == 1 {
                    bytes.extend_from_slice(b"\n  : [}\n");
                }
                files.insert(path.clone(), bytes);
                let outcome =
                    std::panic::catch_unwind(|| build(&files, &f.build_dir, &Options::default()));
                assert!(
                    outcome.is_ok(),
                    "{}: panicked with {path} cut at {cut}",
                    f.name
                );
                runs += 1;
            }
        }
    }
    assert!(runs > 300, "only {runs} corrupted builds");
}

#[test]
fn nesting_depth_is_bounded() {
    let mut files = Vec::new();
    for i in 0..100 {
        files.push((
            format!("k{i}/kustomization.yaml"),
            format!("resources: [../k{}]\n", i + 1),
        ));
    }
    files.push(("k100/kustomization.yaml".into(), "resources: []\n".into()));
    let t: BTreeMap<String, Vec<u8>> = files
        .into_iter()
        .map(|(p, c)| (p, c.into_bytes()))
        .collect();
    let err = build(&t, "k0", &Options::default())
        .unwrap_err()
        .to_string();
    assert_eq!(err, "k64: kustomizations nest more than 64 levels deep");
}
