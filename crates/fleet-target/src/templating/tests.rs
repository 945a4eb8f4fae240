//! `${ }` templating through the preprocessing entry point: Fleet's data, the Sprig functions, the
//! YAML round trip, refused environment access and the error text.

use super::*;
use serde_json::json;

fn cluster() -> ClusterInfo {
    let mut c = ClusterInfo::new(
        "fleet-default",
        "c1",
        [
            ("env", "prod"),
            ("replicas", "3"),
            ("management.cattle.io/cluster-display-name", "one"),
            ("other.cattle.io/hidden", "x"),
            ("kubectl.kubernetes.io/last-applied", "x"),
        ],
    );
    c.annotations.insert("owner".into(), "team-a".into());
    c.template_values.insert("tier".into(), json!("gold"));
    c
}

fn run(options: Value, cluster: &ClusterInfo) -> Result<Value, TargetError> {
    let mut options: BundleDeploymentOptions = serde_json::from_value(options).expect("options");
    preprocess_helm_values(&mut options, cluster)?;
    let Value::Object(mut map) = serde_json::to_value(options).unwrap() else {
        unreachable!("options serialize as an object")
    };
    // Go embeds `ignore` by value; the cases leave it out.
    map.remove("ignore");
    Ok(Value::Object(map))
}

#[test]
fn exported_labels_drop_cattle_but_keep_fleet_and_management() {
    let labels = export_labels(&cluster().labels);
    let keys: Vec<&str> = labels.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "env",
            "management.cattle.io/cluster-display-name",
            "replicas"
        ]
    );
}

#[test]
fn target_test_cases() {
    let c = cluster();
    let cases = [
        (
            "cluster label substitution, nested and in lists",
            json!({"helm": {"values": {
                "a": "global.fleet.clusterLabels.env",
                "b": {"c": "global.fleet.clusterLabels.missing"},
                "l": [{"d": "global.fleet.clusterLabels.env"}, "global.fleet.clusterLabels.env"]
            }}}),
            json!({"helm": {"values": {
                "a": "prod", "b": {"c": ""},
                "l": [{"d": "prod"}, "global.fleet.clusterLabels.env"]
            }}}),
        ),
        (
            "templates see name, namespace, labels, annotations and values",
            json!({"helm": {"values": {
                "name": "${ .ClusterName }.${ .ClusterNamespace }",
                "replicas": "${ .ClusterLabels.replicas }",
                "owner": "${ .ClusterAnnotations.owner }",
                "tier": "${ .ClusterValues.tier }",
                "quoted": "'${ .ClusterLabels.replicas }'",
                "${ .ClusterLabels.env }-key": true
            }}}),
            json!({"helm": {"values": {
                "name": "c1.fleet-default",
                "replicas": 3,
                "owner": "team-a",
                "tier": "gold",
                "quoted": "'3'",
                "prod-key": true
            }}}),
        ),
        (
            "templateValues render, parse and override values",
            json!({"helm": {"values": {"a": 1, "b": 2}, "templateValues": {
                "b": "${ .ClusterLabels.replicas }",
                "m": "{\"k\": \"${ .ClusterName }\"}"
            }}}),
            json!({"helm": {"values": {"a": 1, "b": 3, "m": {"k": "c1"}}, "templateValues": {
                "b": "${ .ClusterLabels.replicas }",
                "m": "{\"k\": \"${ .ClusterName }\"}"
            }}}),
        ),
        (
            "disablePreProcess keeps templates but still substitutes labels",
            json!({"helm": {"disablePreProcess": true, "values": {"t": "${ .ClusterName }", "l": "global.fleet.clusterLabels.env"}}}),
            json!({"helm": {"disablePreProcess": true, "values": {"t": "${ .ClusterName }", "l": "prod"}}}),
        ),
        (
            "no helm becomes an empty helm",
            json!({}),
            json!({"helm": {}}),
        ),
        (
            "helm without values gets empty values",
            json!({"helm": {"chart": "x"}}),
            json!({"helm": {"chart": "x", "values": {}}}),
        ),
    ];
    for (name, input, want) in cases {
        assert_eq!(run(input, &c).unwrap(), want, "{name}");
    }
}

/// Fleet's `TestProcessTemplateValues` (target_test.go), through the whole preprocessing.
#[test]
fn fleet_process_template_values() {
    let mut c = ClusterInfo::new(
        "dev-clusters",
        "my-cluster",
        [
            ("name", "local"),
            ("envType", "dev"),
            (
                "really-long-label-name-with-many-many-characters-in-it",
                "foobar",
            ),
        ],
    );
    c.annotations.insert("testAnnotation".into(), "test".into());
    c.template_values = json!({
        "topLevel": "foo",
        "nested": {"secondTier": {"thirdTier": "bar"}},
        "items": ["one", "two"],
        "list": ["alpha", "beta", "omega"]
    })
    .as_object()
    .cloned()
    .unwrap();
    let options = json!({"namespace": "default", "helm": {
        "releaseName": "labels",
        "templateValues": {
            "mapData": "${- range $key := .ClusterValues.items }\n\"${ $key }\":\n  nested: \"true\"\n${- end}\n",
            "listData": "${- range $key := .ClusterValues.items }\n- \"${ $key }\":\n  nested: \"true\"\n${- end}\n"
        },
        "values": {
            "clusterName": "${ .ClusterLabels.name }",
            "fromAnnotation": "${ .ClusterAnnotations.testAnnotation }",
            "clusterNamespace": "${ .ClusterNamespace }",
            "fleetClusterName": "${ .ClusterName }",
            "reallyLongClusterName": "kubernets.io/cluster/${ index .ClusterLabels \"really-long-label-name-with-many-many-characters-in-it\" }",
            "missingLabel": "${ if hasKey .ClusterLabels \"missing\" }${ .ClusterLabels.missing }${ else }missing${ end}",
            "list": "${ list 1 2 3 | toJson }",
            "customStruct": [
                {"name": "${ .ClusterValues.topLevel }", "key1": "value1", "key2": "value2"},
                {"element2": "${ .ClusterValues.nested.secondTier.thirdTier }"},
                {"element3_${ .ClusterLabels.envType }": "${ .ClusterLabels.name }"}
            ],
            "funcs": {
                "upper": "${ .ClusterValues.topLevel | upper }_test",
                "join": "${ .ClusterValues.list | join \",\" }"
            }
        }
    }});
    let out = run(options, &c).unwrap();
    let values = &out["helm"]["values"];
    assert_eq!(values["clusterName"], "local");
    assert_eq!(values["fromAnnotation"], "test");
    assert_eq!(values["clusterNamespace"], "dev-clusters");
    assert_eq!(values["fleetClusterName"], "my-cluster");
    assert_eq!(
        values["reallyLongClusterName"],
        "kubernets.io/cluster/foobar"
    );
    assert_eq!(values["missingLabel"], "missing");
    assert_eq!(values["list"], json!([1, 2, 3]));
    assert_eq!(values["customStruct"][0]["name"], "foo");
    assert_eq!(values["customStruct"][1]["element2"], "bar");
    assert_eq!(values["customStruct"][2]["element3_dev"], "local");
    assert_eq!(values["funcs"]["upper"], "FOO_test");
    assert_eq!(values["funcs"]["join"], "alpha,beta,omega");
    assert_eq!(
        values["mapData"],
        json!({"one": {"nested": "true"}, "two": {"nested": "true"}})
    );
    assert_eq!(
        values["listData"],
        json!([{"one": null, "nested": "true"}, {"two": null, "nested": "true"}])
    );
}

#[test]
fn clusters_without_exportable_labels_are_untouched() {
    let c = ClusterInfo::new("ns", "c", [("fleet.cattle.io/x", "y")]);
    // fleet.cattle.io labels are exported, so this cluster is templated...
    assert_eq!(run(json!({}), &c).unwrap(), json!({"helm": {}}));
    // ...while one with only other cattle.io labels is not.
    let c = ClusterInfo::new("ns", "c", [("provisioning.cattle.io/x", "y")]);
    let input = json!({"helm": {"values": {"t": "${ .ClusterName }"}}});
    assert_eq!(run(input.clone(), &c).unwrap(), input);
}

fn values_of(values: Value) -> Value {
    run(json!({"helm": {"values": values}}), &cluster()).unwrap()["helm"]["values"].clone()
}

fn error_of(helm: Value) -> String {
    run(json!({ "helm": helm }), &cluster())
        .unwrap_err()
        .to_string()
}

/// The Sprig function families the Fleet docs point to, through the whole preprocessing.
#[test]
fn sprig_functions_render_in_values() {
    let values = values_of(json!({
        "get": "${ get .ClusterLabels \"management.cattle.io/cluster-display-name\" }",
        "b64": "${ .ClusterName | b64enc }",
        "b64back": "${ .ClusterName | b64enc | b64dec }",
        "split": "${ (split \"-\" \"a-b\")._1 }",
        "dict": "${ dict \"a\" 1 \"b\" .ClusterName | toJson }",
        "keys": "${ keys .ClusterLabels | sortAlpha | join \",\" }",
        "nindent": "${ dict \"k\" .ClusterName | toJson | nindent 2 }",
        "add": "${ add 1 2 .ClusterLabels.replicas }",
        "atoi": "${ atoi .ClusterLabels.replicas | add1 }",
        "semver": "${ semverCompare \">=1.2.0\" \"1.3.0\" }",
        "uuid": "${ uuidv4 }",
        "regex": "${ regexReplaceAll \"[0-9]\" .ClusterName \"N\" }",
        "ternary": "${ ternary \"big\" \"small\" (gt (atoi .ClusterLabels.replicas) 1) }",
        "with": "${ with .ClusterAnnotations.owner }${ . | upper }${ end }",
        "printf": "${ printf \"%s-%03d\" .ClusterName 7 }",
    }));
    assert_eq!(values["get"], "one");
    assert_eq!(values["b64"], "YzE=");
    assert_eq!(values["b64back"], "c1");
    assert_eq!(values["split"], "b");
    assert_eq!(values["dict"], json!({"a": 1, "b": "c1"}));
    assert_eq!(
        values["keys"],
        "env,management.cattle.io/cluster-display-name,replicas"
    );
    assert_eq!(values["nindent"], json!({"k": "c1"}));
    assert_eq!(values["add"], 6);
    assert_eq!(values["atoi"], 4);
    assert_eq!(values["semver"], true);
    let uuid = values["uuid"].as_str().unwrap();
    assert_eq!((uuid.len(), &uuid[14..15], &uuid[8..9]), (36, "4", "-"));
    assert_eq!(values["regex"], "cN");
    assert_eq!(values["ternary"], "big");
    assert_eq!(values["with"], "TEAM-A");
    assert_eq!(values["printf"], "c1-007");
}

/// `templateValues` entries are templates of their own whose output is YAML: `nindent` and
/// `toJson` build structures there.
#[test]
fn template_values_build_structures() {
    let out = run(
        json!({"helm": {"templateValues": {
            "cfg": "${ dict \"name\" .ClusterName \"n\" (atoi .ClusterLabels.replicas) | toJson | nindent 0 }",
            "list": "${- range $k, $v := .ClusterLabels }\n- ${ $k }${- end }",
            "empty": "${ if false }x${ end }",
        }}}),
        &cluster(),
    )
    .unwrap();
    let values = &out["helm"]["values"];
    assert_eq!(values["cfg"], json!({"name": "c1", "n": 3}));
    assert_eq!(
        values["list"],
        json!([
            "env",
            "management.cattle.io/cluster-display-name",
            "replicas"
        ])
    );
    assert_eq!(values["empty"], Value::Null);
}

/// `${ … | quote }` written unquoted in fleet.yaml (the ref-fleet-yaml example) gives a string
/// without the quotes, and a plain `${ }` is read as YAML 1.1 reads a scalar.
#[test]
fn rendered_text_is_read_as_yaml() {
    let values = values_of(json!({
        "valueFromEnv": {"${ .ClusterLabels.env }": "${ .ClusterValues.tier | upper | quote }"},
        "quotedNumber": "${ .ClusterLabels.replicas | quote }",
        "squoted": "${ .ClusterLabels.replicas | squote }",
        "number": "${ .ClusterLabels.replicas }",
        "negative": "-${ .ClusterLabels.replicas }",
        "float": "1.${ .ClusterLabels.replicas }",
        "yes": "${ \"yes\" }",
        "off": "${ \"off\" }",
        "tilde": "${ \"~\" }",
        "version": "1.2.${ .ClusterLabels.replicas }",
        "templatedLabel": "${ .ClusterLabels.env }-foo",
        "escaped": "foo-bar-${`${PWD}`}",
        "inList": ["${ .ClusterName }", 2, {"k": "${ .ClusterNamespace }"}],
        "untouched": {"s": "yes", "n": 1.5, "z": null, "e": {}},
    }));
    assert_eq!(values["valueFromEnv"], json!({"prod": "GOLD"}));
    assert_eq!(values["quotedNumber"], "3");
    assert_eq!(values["squoted"], "3");
    assert_eq!(values["number"], 3);
    assert_eq!(values["negative"], -3);
    assert_eq!(values["float"], 1.3);
    assert_eq!(values["yes"], true);
    assert_eq!(values["off"], false);
    assert_eq!(values["tilde"], Value::Null);
    assert_eq!(values["version"], "1.2.3");
    assert_eq!(values["templatedLabel"], "prod-foo");
    assert_eq!(values["escaped"], "foo-bar-${PWD}");
    assert_eq!(values["inList"], json!(["c1", 2, {"k": "fleet-default"}]));
    assert_eq!(
        values["untouched"],
        json!({"s": "yes", "n": 1.5, "z": null, "e": {}})
    );
}

/// Fleet's context: numbers in the cluster's templateValues are Go float64s, printed as Go
/// prints them; a nil value prints `<no value>` (Fleet does not remove it, Helm does).
#[test]
fn cluster_values_print_as_go_prints_them() {
    let mut c = cluster();
    c.template_values = json!({"small": 3, "big": 1_000_000, "half": 0.5, "nothing": null})
        .as_object()
        .cloned()
        .unwrap();
    let out = run(
        json!({"helm": {"values": {
            "a": "x${ .ClusterValues.small }",
            "b": "x${ .ClusterValues.big }",
            "c": "x${ .ClusterValues.half }",
            "d": "${ .ClusterValues.nothing }",
            "e": "${ .ClusterValues.big | int64 }",
        }}}),
        &c,
    )
    .unwrap();
    assert_eq!(
        out["helm"]["values"],
        json!({"a": "x3", "b": "x1e+06", "c": "x0.5", "d": "<no value>", "e": 1_000_000})
    );
}

#[test]
fn environment_access_is_refused() {
    for f in ["env \"HOME\"", "expandenv \"$HOME\""] {
        let name = f.split(' ').next().unwrap();
        assert_eq!(
            error_of(json!({"values": {"a": format!("${{ {f} }}")}})),
            format!(
                "cluster fleet-default/c1: helm.values.a: template syntax error at line 1: function \"{name}\" not defined"
            )
        );
        assert_eq!(
            error_of(json!({"templateValues": {"x": format!("${{ {f} }}")}})),
            format!(
                "cluster fleet-default/c1: helm.templateValues.x: template syntax error at line 1: function \"{name}\" not defined"
            )
        );
    }
    // Nor DNS, and none of Helm's own functions: Fleet's map is Sprig's.
    for f in [
        "getHostByName \"example.com\"",
        "toYaml .ClusterLabels",
        "required \"x\" 1",
    ] {
        let err = error_of(json!({"values": {"a": format!("${{ {f} }}")}}));
        assert!(err.ends_with("not defined"), "{err}");
    }
}

#[test]
fn template_errors_name_cluster_field_and_problem() {
    let cases = [
        (
            json!({"values": {"a": {"b": "${ .ClusterLabels.nope }"}}}),
            "helm.values.a.b: executing <.ClusterLabels.nope>: map has no entry for key \"nope\"",
        ),
        (
            json!({"values": {"ok": "${ .ClusterName }", "l": ["x", {"k": "${ .ClusterValues.x.y }"}]}}),
            "helm.values.l[1].k: executing <.ClusterValues.x.y>: map has no entry for key \"x\"",
        ),
        (
            json!({"values": {"${ .ClusterLabels.gone }": 1}}),
            "helm.values.${ .ClusterLabels.gone }: executing <.ClusterLabels.gone>: map has no entry for key \"gone\"",
        ),
        (
            json!({"values": {"a": "${ .ClusterName"}}),
            "helm.values.a: template syntax error at line 1: unclosed action",
        ),
        (
            json!({"values": {"a": "${ semver \"x.y\" }"}}),
            "helm.values.a: executing <semver \"x.y\">: error calling semver:",
        ),
        (
            json!({"values": {"a": "${ fail \"no way\" }"}}),
            "helm.values.a: error calling fail: no way",
        ),
        // The output breaks the YAML around it.
        (
            json!({"values": {"a": {"b": "${ list 1 | toJson | printf \"%s]\" }"}}}),
            "helm.values.a.b: the rendered template is not valid YAML:",
        ),
        // A block split across two values fails only as a whole: neither half is blamed.
        (
            json!({"values": {"a": "${ if true }", "b": "${ .ClusterLabels.nope }${ end }"}}),
            "helm.values: executing <.ClusterLabels.nope>: map has no entry for key \"nope\"",
        ),
        (
            json!({"templateValues": {"x": "password: [${ .ClusterName }"}}),
            "helm.templateValues.x: the rendered template is not valid YAML:",
        ),
    ];
    for (helm, want) in cases {
        let err = error_of(helm.clone());
        let want = format!("cluster fleet-default/c1: {want}");
        assert!(err.starts_with(&want), "{helm}:\n{err}\nwant {want}");
    }
    // The rendered text is never quoted in the error: it can hold secrets.
    let err = error_of(json!({"templateValues": {"x": "secret: [${ .ClusterName }-s3cr3t"}}));
    assert!(!err.contains("s3cr3t"), "{err}");
}

/// The expectations of the former built-in interpreter that still hold, now on fleet-helm's
/// engine (`with` is supported there now).
#[test]
fn go_template_constructs() {
    let context = json!({
        "ClusterName": "c1",
        "ClusterNamespace": "fleet-default",
        "ClusterLabels": {"env": "prod", "region": "east", "replicas": "3"},
        "ClusterAnnotations": {},
        "ClusterValues": {"size": 2, "nested": {"k": "v"}, "list": ["a", "b"], "none": []}
    });
    let data = fleet_helm::values_from_json(&context);
    let render = |t: &str| {
        render_text("t", t, &data, &TextOptions::fleet()).map_err(|e| problem(e).to_string())
    };
    let cases = [
        ("plain text", "plain text"),
        ("${ .ClusterName }", "c1"),
        (
            "name-${ .ClusterLabels.env }-${.ClusterNamespace}",
            "name-prod-fleet-default",
        ),
        ("${ index .ClusterLabels \"region\" }", "east"),
        (
            "${ index .ClusterLabels \"absent\" | default \"none\" }",
            "none",
        ),
        ("${ .ClusterValues.nested.k | upper | quote }", "\"V\""),
        ("${ .ClusterValues.size }", "2"),
        (
            "${ if eq .ClusterLabels.env \"prod\" }3${ else }1${ end }",
            "3",
        ),
        (
            "${ if eq .ClusterLabels.env \"dev\" }a${ else if eq .ClusterLabels.region \"east\" }b${ else }c${ end }",
            "b",
        ),
        (
            "${ printf \"%s-%s\" .ClusterName .ClusterLabels.env }",
            "c1-prod",
        ),
        ("${ replace \"-\" \"_\" \"a-b\" }", "a_b"),
        (
            "${ ternary \"big\" \"small\" (gt .ClusterValues.size 1.0) }",
            "big",
        ),
        ("a  ${- .ClusterName -}  b", "ac1b"),
        ("${ hasKey .ClusterLabels \"env\" }", "true"),
        (
            "${ range $k, $v := .ClusterLabels }${ $k }=${ $v };${ end }",
            "env=prod;region=east;replicas=3;",
        ),
        (
            "${ range .ClusterValues.list }[${ . }|${ $.ClusterName }]${ end }",
            "[a|c1][b|c1]",
        ),
        (
            "${ range $i, $e := .ClusterValues.list }${ $i }${ $e }${ end }",
            "0a1b",
        ),
        (
            "${ range .ClusterValues.none }x${ else }empty${ end }",
            "empty",
        ),
        ("${ list 1 2 3 | toJson }", "[1,2,3]"),
        ("${ .ClusterValues.list | join \",\" }", "a,b"),
        ("${ int \"42\" }", "42"),
        (
            "${ printf \"[%5s|%-3s|%03d|%%]\" \"ab\" \"c\" 7 }",
            "[   ab|c  |007|%]",
        ),
        ("${ printf \"%s %s\" \"x\" }", "x %!s(MISSING)"),
        ("${ with .ClusterLabels }${ .env }${ end }", "prod"),
    ];
    for (template, want) in cases {
        assert_eq!(render(template).as_deref(), Ok(want), "{template}");
    }
    let errors = [
        (
            "${ .ClusterAnnotations.missing | default \"x\" }",
            "map has no entry for key \"missing\"",
        ),
        ("${ if .ClusterName }x", "unexpected EOF"),
        ("${ $nope }", "undefined variable \"$nope\""),
        (
            "${ range $a, $b, $c := .ClusterLabels }${ end }",
            "too many declarations in range",
        ),
        ("${ \"abc }", "unterminated quoted string"),
        ("${ .ClusterName | }", "missing command"),
    ];
    for (template, want) in errors {
        let err = render(template).unwrap_err();
        assert!(err.contains(want), "{template}: {err}");
    }
}

/// Random template-like input with Fleet's delimiters never panics the lexer, parser or
/// evaluator: it renders or returns an error.
#[test]
fn arbitrary_input_never_panics() {
    const TOKENS: &[&str] = &[
        "${",
        "${-",
        "}",
        "-}",
        " ",
        ".",
        "a",
        "$",
        "$x",
        "\"",
        "`",
        "(",
        ")",
        "|",
        "if ",
        "else",
        "end",
        "range ",
        ":=",
        ",",
        "é",
        "0",
        "-1",
        "index",
        "printf \"%5",
        "%",
        "ClusterLabels",
        "\\",
        "/*",
        "*/",
        "eq",
        "default",
        "\n",
        "${/*",
        "*/}",
        " -}",
    ];
    let data = fleet_helm::values_from_json(&template_context(&cluster()));
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let len = (next() % 12) as usize;
        let template: String = (0..len)
            .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
            .collect();
        let _ = render_text("t", &template, &data, &TextOptions::fleet());
    }
}
