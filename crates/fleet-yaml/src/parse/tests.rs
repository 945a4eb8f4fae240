use serde::Deserialize;
use serde_json::json;

use super::*;

fn one(text: &str) -> Value {
    let mut docs = documents(text, "test.yaml").unwrap();
    assert_eq!(docs.len(), 1, "{docs:?}");
    docs.remove(0)
}

#[test]
fn yaml11_booleans_in_every_case_variant() {
    for word in [
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
    ] {
        assert_eq!(one(&format!("v: {word}")), json!({"v": true}), "{word}");
    }
    for word in [
        "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
    ] {
        assert_eq!(one(&format!("v: {word}")), json!({"v": false}), "{word}");
    }
    for word in ["'yes'", "\"on\"", "yEs", "oN", "TRue"] {
        assert!(one(&format!("v: {word}"))["v"].is_string(), "{word}");
    }
    // Keys too: go-yaml v2 turns the key `y` into the boolean true, so JSON gets "true"; `yEs` stays text.
    assert_eq!(
        one("y: 1
yEs: 2
"),
        json!({"true": 1, "yEs": 2})
    );
}

#[test]
fn nulls() {
    assert_eq!(
        one("a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: 'null'"),
        json!({"a": null, "b": null, "c": null, "d": null, "e": null, "f": "null"})
    );
}

#[test]
fn numbers_keep_ints_and_floats_apart() {
    let v = one(
        "oct: 0755\nhex: 0x1F\nbin: 0b101\nunder: 1_000\nplus: +12\nneg: -7\nexp: 1e3\nfloat: 1.0\nhalf: .5\nbig: 12345678901234567890\nnotoct: 0800\n",
    );
    assert_eq!(v["oct"], json!(493));
    assert_eq!(v["hex"], json!(31));
    assert_eq!(v["bin"], json!(5));
    assert_eq!(v["under"], json!(1000));
    assert_eq!(v["plus"], json!(12));
    assert_eq!(v["neg"], json!(-7));
    assert!(v["exp"].is_f64() && v["exp"] == json!(1000.0));
    assert!(v["float"].is_f64());
    assert_eq!(v["half"], json!(0.5));
    assert!(v["big"].is_u64());
    // go-yaml v2: not octal, but it matches the float pattern.
    assert_eq!(v["notoct"], json!(800.0));
}

#[test]
fn non_finite_spellings_follow_go_yaml() {
    // go-yaml knows `.inf`, `+.Inf`, `-.INF`, `.NaN`…; other spellings serde-saphyr accepts are text for Go.
    let v = one("a: -.NaN\nb: +.nan\nc: '.inf'\nd: !!str .nan\n+.nan: key\n");
    assert_eq!(
        v,
        json!({"a": "-.NaN", "b": "+.nan", "c": ".inf", "d": ".nan", "+.nan": "key"})
    );
    for text in ["a: .Inf\n", "a: [1, -.INF]\n", "a: {b: .NAN}\n"] {
        let err = documents(text, "v.yaml").unwrap_err();
        assert!(
            err.message.starts_with("infinity and NaN are not allowed"),
            "{err}"
        );
        assert_eq!(err.location.map(|l| l.line), Some(1));
    }
}

#[test]
fn infinities_are_errors_like_sigs_yaml() {
    let err = documents("a: .inf\n", "v.yaml").unwrap_err();
    assert_eq!(err.origin, "v.yaml");
    assert_eq!(err.location.map(|l| l.line), Some(1));
}

#[test]
fn non_string_keys_convert_like_sigs_k8s_yaml() {
    let v = one("1: a\n2.5: b\ntrue: c\n0x10: e\nn: f\n3.14159265358979: g\n1_000.5: h\n");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["1", "2.5", "true", "16", "false", "3.1415927", "1000.5"]
    );
    // y, on and true are one key for go-yaml v2: the last wins.
    assert_eq!(one("y: 1\non: 2\ntrue: 3\n"), json!({"true": 3}));
    let err = documents("a: 1\n~: 2\n", "k.yaml").unwrap_err();
    assert_eq!(err.location.map(|l| l.line), Some(2), "{err}");
    assert!(err.message.contains("null mapping key"), "{err}");
}

#[test]
fn plain_numbers_serde_saphyr_leaves_as_text_follow_go_yaml() {
    let v = one("a: 1_000.5\nb: 1_000_\nc: '1_000.5'\nd: !!str 1_000\ne: \"1_000\"\n");
    assert_eq!(
        v,
        json!({"a": 1000.5, "b": 1000, "c": "1_000.5", "d": "1_000", "e": "1_000"})
    );
}

#[test]
fn complex_keys_are_errors() {
    let err = documents("? [a, b]\n: c\n", "k.yaml").unwrap_err();
    assert!(err.message.contains("mapping key"), "{err}");
}

#[test]
fn keys_keep_document_order() {
    let v = one("zeta: 1\nalpha: 2\nmid: 3\n");
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["zeta", "alpha", "mid"]);
}

#[test]
fn anchors_aliases_and_merge_keys() {
    let v = one("base: &b {x: 1, z: 2}\nlist: &l [1, 2]\nchild:\n  <<: *b\n  z: 3\ncopy: *l\n");
    assert_eq!(v["child"], json!({"x": 1, "z": 3}));
    assert_eq!(v["copy"], json!([1, 2]));
    let v = one("a: &a {p: 1}\nb: &b {q: 2}\nc:\n  <<: [*a, *b]\n");
    assert_eq!(v["c"], json!({"p": 1, "q": 2}));
}

#[test]
fn duplicate_keys_last_wins_by_default_and_can_be_rejected() {
    assert_eq!(one("a: 1\na: 2\n"), json!({"a": 2}));
    let strict = Options {
        duplicate_keys: DuplicateKeys::Error,
        ..Options::default()
    };
    let err = documents_with(&strict, "a: 1\na: 2\n", "d.yaml").unwrap_err();
    assert_eq!(err.location.map(|l| l.line), Some(2), "{err}");
}

#[test]
fn billion_laughs_is_a_clear_error() {
    let mut text = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let prev = i - 1;
        text.push_str(&format!(
            "l{i}: &l{i} [*l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}]\n"
        ));
    }
    let err = documents(&text, "bomb.yaml").unwrap_err();
    assert_eq!(err.origin, "bomb.yaml");
    assert!(
        err.message.contains("alias") || err.message.contains("budget"),
        "{err}"
    );
}

#[test]
fn size_limit_is_an_option() {
    let small = Options {
        max_bytes: 16,
        ..Options::default()
    };
    let err = documents_with(&small, "key: a value that is too long\n", "big.yaml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.yaml: document is 30 bytes, larger than the limit of 16 bytes"
    );
    assert!(documents_with(&small, "a: 1\n", "ok.yaml").is_ok());
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = "[".repeat(100_000);
    assert!(documents(&text, "deep.yaml").is_err());
    // Block nesting is bounded only by max_depth; run on a small thread stack to prove the parse grows its own.
    let nested = |depth: usize| {
        (0..depth)
            .map(|i| format!("{}k:\n", "  ".repeat(i)))
            .collect::<String>()
    };
    let (ok, too_deep) = (nested(450), nested(600));
    let outcome = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            (
                documents(&ok, "deep.yaml").is_ok(),
                located(&too_deep, "deep.yaml").unwrap_err(),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(outcome.0);
    assert_eq!(outcome.1.message, "nesting is deeper than 500 levels");
}

#[test]
fn errors_carry_origin_line_and_column() {
    let err = documents("a: 1\nb: [1, 2\n", "values.yaml").unwrap_err();
    assert_eq!(err.origin, "values.yaml");
    let loc = err.location.unwrap();
    assert_eq!(loc.line, 2);
    assert!(
        err.to_string()
            .starts_with(&format!("values.yaml:2:{}: ", loc.column)),
        "{err}"
    );
    let err = documents("a: b: c\n", "x.yaml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "x.yaml:1:5: mapping values are not allowed in this context"
    );
}

#[test]
fn multi_document_streams_drop_empty_documents() {
    let docs = documents("---\na: 1\n---\n---\n~\n---\n- x\n...\n", "m.yaml").unwrap();
    assert_eq!(docs, vec![json!({"a": 1}), json!(["x"])]);
    assert!(documents("", "e.yaml").unwrap().is_empty());
    assert!(
        documents("# only a comment\n", "e.yaml")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn typed_from_str_reports_field_errors_with_position() {
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Cfg {
        #[allow(dead_code)]
        name: String,
    }
    let err = from_str::<Cfg>("name: x\nnmae: y\n", "fleet.yaml").unwrap_err();
    assert_eq!(err.location.map(|l| l.line), Some(2), "{err}");
    assert!(err.message.contains("nmae"), "{err}");
    let v: Value = from_str("a: on\n", "v.yaml").unwrap();
    assert_eq!(v, json!({"a": true}));
}

#[test]
fn located_positions_point_at_keys_and_items() {
    let text = "a:\n  b: [1, 2]\n  'c/d~e':\n    - x: 1\n";
    let doc = located(text, "p.yaml").unwrap();
    assert_eq!(doc.value()["a"]["b"], json!([1, 2]));
    let at = |p: &str| doc.location(p).map(|l| (l.line, l.column));
    assert_eq!(at(""), Some((1, 1)));
    assert_eq!(at("/a"), Some((1, 1)));
    assert_eq!(at("/a/b"), Some((2, 3)));
    assert_eq!(at("/a/b/1"), Some((2, 10)));
    assert_eq!(at("/a/c~1d~0e"), Some((3, 3)));
    assert_eq!(at("/a/c~1d~0e/0/x"), Some((4, 7)));
    assert_eq!(at("/a/missing"), None);
    assert_eq!(located("", "e.yaml").unwrap().into_value(), Value::Null);
}

#[test]
fn error_display_without_position() {
    let e = Error::new("f.yaml", None, "boom");
    assert_eq!(e.to_string(), "f.yaml: boom");
    let e = Error::new("f.yaml", Some(Location { line: 3, column: 4 }), "boom");
    assert_eq!(e.to_string(), "f.yaml:3:4: boom");
}

/// Deterministic xorshift so the fuzz-ish tests are reproducible without a dependency.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn random_bytes_and_truncated_documents_never_panic() {
    let sample = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # c\n  labels: {a: \"b\", c: 'd'}\ndata:\n  k: |\n    line\n  l: >-\n    folded\n  m: &m [1, *m2, {x: y}]\n  <<: *base\n---\n- ? complex\n  : key\n- !!binary aGVsbG8=\n- \"\\u263A\\x41\"\n";
    let alphabet: Vec<char> = "ab:-?[]{},&*!|>'\"#%@` \n\t~0.e+<".chars().collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for cut in 0..=sample.len() {
        if sample.is_char_boundary(cut) {
            let _ = documents(&sample[..cut], "cut.yaml");
            let _ = located(&sample[..cut], "cut.yaml");
        }
    }
    for _ in 0..3000 {
        let len = (xorshift(&mut state) % 60) as usize;
        let text: String = (0..len)
            .map(|_| alphabet[(xorshift(&mut state) % alphabet.len() as u64) as usize])
            .collect();
        let _ = documents(&text, "fuzz.yaml");
        let _ = located(&text, "fuzz.yaml");
        let bytes: Vec<u8> = (0..len).map(|_| xorshift(&mut state) as u8).collect();
        let _ = documents(&String::from_utf8_lossy(&bytes), "bytes.yaml");
    }
}

#[test]
fn kustomize_schema_reads_like_go_yaml_v3() {
    let v = documents_with(
        &Options::kustomize(),
        "a: yes\nb: TRUE\nc: 2024-01-01\nd: \"2024-01-01\"\ne: '2024-01-01'\nf: 0755\ng: 2001-12-14 21:59:43.10\ny: n\n",
        "k.yaml",
    )
    .unwrap()
    .remove(0);
    assert_eq!(
        v,
        json!({"a": "yes", "b": true, "c": "2024-01-01T00:00:00Z", "d": "2024-01-01", "e": "2024-01-01", "f": 493, "g": "2001-12-14T21:59:43.1Z", "y": "n"})
    );
    // Inside flow collections kustomize keeps space-separated timestamps as text.
    let v = documents_with(
        &Options::kustomize(),
        "a: [2001-12-14 21:59:43, 2001-12-14]\nb: {c: 2001-12-14 21:59:43}\nd:\n- 2001-12-14 21:59:43\n",
        "k.yaml",
    )
    .unwrap()
    .remove(0);
    assert_eq!(
        v,
        json!({"a": ["2001-12-14 21:59:43", "2001-12-14T00:00:00Z"], "b": {"c": "2001-12-14 21:59:43"}, "d": ["2001-12-14T21:59:43Z"]})
    );
    // kubectl kustomize rejects duplicate keys; Helm keeps the last.
    assert!(documents_with(&Options::kustomize(), "a: 1\na: 2\n", "k.yaml").is_err());
    // The default (Helm) schema keeps dates as written.
    assert_eq!(one("c: 2024-01-01\n"), json!({"c": "2024-01-01"}));
}

#[test]
fn located_documents_count_lines_from_the_stream_start() {
    let docs = located_documents("a: 1\n---\n---\nb:\n  c: 2\n", "m.yaml").unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[1].value(), &json!({"b": {"c": 2}}));
    assert_eq!(
        docs[1].location("/b/c"),
        Some(Location { line: 5, column: 3 })
    );
}

#[test]
fn typed_reading_follows_go_json_and_places_errors() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Spec {
        replicas: u32,
        ports: Vec<u16>,
        #[serde(default)]
        labels: std::collections::BTreeMap<String, String>,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Doc {
        spec: Spec,
    }
    // Integral floats fit integer fields (Go: YAML → JSON prints 1.0 as 1); YAML 1.1 keys convert.
    let doc: Doc = from_str(
        "spec:\n  replicas: 1.0\n  ports: [80, 443]\n  labels: {y: a}\n",
        "d.yaml",
    )
    .unwrap();
    assert_eq!(doc.spec.replicas, 1);
    assert_eq!(doc.spec.labels.get("true").map(String::as_str), Some("a"));

    let err = from_str::<Doc>("spec:\n  replicas: many\n  ports: []\n", "d.yaml").unwrap_err();
    assert_eq!(err.location, Some(Location { line: 2, column: 3 }));
    assert!(
        err.message
            .starts_with("spec.replicas: invalid type: string \"many\""),
        "{err}"
    );

    let err = from_str::<Doc>(
        "spec:\n  replicas: 1\n  ports:\n  - 80\n  - http\n",
        "d.yaml",
    )
    .unwrap_err();
    assert_eq!(err.location, Some(Location { line: 5, column: 5 }));
    assert!(err.message.starts_with("spec.ports[1]: "), "{err}");

    let none: Option<Doc> = from_str("# nothing\n", "e.yaml").unwrap();
    assert_eq!(none, None);
    let located = located("spec: {replicas: 2, ports: [1]}\n", "l.yaml").unwrap();
    assert_eq!(located.origin(), "l.yaml");
    assert_eq!(located.deserialize::<Doc>().unwrap().spec.ports, vec![1]);
}

/// serde loses the path inside a `#[serde(flatten)]` struct; the failing node is still named and placed.
#[test]
fn errors_inside_flattened_fields_name_the_field_and_its_line() {
    // The fields are only read by serde.
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(default)]
        timeout: i64,
        #[serde(default)]
        names: Vec<String>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        #[serde(default)]
        name: String,
        #[serde(flatten)]
        inner: Inner,
    }
    let cases = [
        (
            "name: a\ntimeout: soon\n",
            2,
            1,
            "timeout: invalid type: string \"soon\", expected i64",
        ),
        (
            "name: a\nnames:\n- x\n- [y]\n",
            4,
            3,
            "names[1]: invalid type: sequence, expected a string",
        ),
    ];
    for (text, line, column, want) in cases {
        let err = located(text, "f.yaml")
            .unwrap()
            .deserialize::<Outer>()
            .unwrap_err();
        assert_eq!(err.location, Some(Location { line, column }), "{err}");
        assert_eq!(err.message, want);
    }
}

#[test]
fn crlf_line_ends_and_a_byte_order_mark_read_like_lf() {
    let lf = "a: 1_000.5\nb: yEs\nc: -.NaN\nd:\n  - x\n  - 'q'\ne: |\n  line\n";
    let crlf = lf.replace('\n', "\r\n");
    let want = one(lf);
    assert_eq!(want["e"], json!("line\n"));
    assert_eq!(one(&crlf), want);
    assert_eq!(one(&format!("\u{feff}{lf}")), want);
    let doc = located(&crlf, "w.yaml").unwrap();
    assert_eq!(doc.location("/d/1"), Some(Location { line: 6, column: 5 }));
}

#[test]
fn kustomize_keeps_root_annotation_values_as_written() {
    let text = "metadata:\n  annotations: {a: 2024-01-01, b: 1.50, c: ~, e: yes, f: 0x1F, g: 'q', h: \"x\"}\n  labels: {l: 1.50}\nspec:\n  template:\n    metadata:\n      annotations: {b: 1.50}\n";
    let v = documents_with(&Options::kustomize(), text, "k.yaml")
        .unwrap()
        .remove(0);
    assert_eq!(
        v["metadata"]["annotations"],
        json!({"a": "2024-01-01", "b": "1.50", "c": "~", "e": "yes", "f": "0x1F", "g": "q", "h": "x"})
    );
    assert_eq!(v["metadata"]["labels"], json!({"l": 1.5}));
    assert_eq!(
        v["spec"]["template"]["metadata"]["annotations"],
        json!({"b": 1.5})
    );
    // Helm's reading does not do this.
    assert_eq!(one(text)["metadata"]["annotations"]["b"], json!(1.5));
}
#[test]
fn single_document_readers_take_the_first_document_like_go() {
    // go-yaml's Unmarshal (Helm values, fleet.yaml) reads the first document and ignores the rest.
    assert_eq!(
        located("a: 1\n---\n", "m.yaml").unwrap().into_value(),
        json!({"a": 1})
    );
    assert_eq!(
        located("---\na: 1\n---\nb: 2\n", "m.yaml")
            .unwrap()
            .into_value(),
        json!({"a": 1})
    );
    assert_eq!(
        located("a: 1\n...\n", "m.yaml").unwrap().into_value(),
        json!({"a": 1})
    );
    let first: Value = from_str("x: [1]\n---\ny: 2\n", "m.yaml").unwrap();
    assert_eq!(first, json!({"x": [1]}));
    assert_eq!(located("", "e.yaml").unwrap().into_value(), Value::Null);
}

#[test]
fn kustomize_reads_folded_scalars_like_go_yaml_v3() {
    // Verified with kubectl kustomize 1.34; Helm (go-yaml v2) follows the YAML spec.
    let text = "a: >\n  a\n    b\n  c\nb: >\n  a\n\n  b\nc: >-\n  a\n    b\nd: >+\n  a\n\n\ne: >\n  a\n   b\nf: >2\n   a\n  b\ng: >\n  a\n    b\n\n  c\nh: |+\n  keep\n\ni: x\n";
    let v3 = documents_with(&Options::kustomize(), text, "f.yaml")
        .unwrap()
        .remove(0);
    assert_eq!(
        v3,
        json!({"a": "a\n\n  b\nc\n", "b": "a\nb\n", "c": "a\n\n  b", "d": "a\n\n\n\n", "e": "a\n\n b\n",
               "f": " a\nb\n", "g": "a\n\n  b\n\nc\n", "h": "keep\n\n", "i": "x"})
    );
    let v2 = one(text);
    assert_eq!(
        v2,
        json!({"a": "a\n  b\nc\n", "b": "a\nb\n", "c": "a\n  b", "d": "a\n\n\n", "e": "a\n b\n",
               "f": " a\nb\n", "g": "a\n  b\n\nc\n", "h": "keep\n\n", "i": "x"})
    );
}

#[test]
fn block_scalars_are_text_whatever_they_contain() {
    let text = "a: |-\n  1_000.5\nb: >-\n  .inf\nc: |-\n  2024-01-01\nd: |-\n  yEs\ne: >- # comment\n  0755\n";
    let want = json!({"a": "1_000.5", "b": ".inf", "c": "2024-01-01", "d": "yEs", "e": "0755"});
    assert_eq!(one(text), want);
    assert_eq!(
        documents_with(&Options::kustomize(), text, "b.yaml")
            .unwrap()
            .remove(0),
        want
    );
}

#[test]
fn nested_unknown_fields_point_at_their_own_key() {
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Helm {
        #[allow(dead_code)]
        values_files: Vec<String>,
    }
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Fleet {
        #[allow(dead_code)]
        helm: Helm,
    }
    let err =
        from_str::<Fleet>("helm:\n  valuesFiles: []\n  valuesFile: x\n", "fleet.yaml").unwrap_err();
    assert_eq!(err.location, Some(Location { line: 3, column: 3 }));
    assert_eq!(
        err.to_string(),
        "fleet.yaml:3:3: helm.valuesFile: unknown field `valuesFile`, expected `valuesFiles`"
    );
}

#[test]
fn first_value_reads_like_from_str_into_a_json_value() {
    for text in [
        "a: 1.0\nb: [2.5, 1e3, x]\nc: {d: ~}\n",
        "",
        "# only a comment\n",
        "---\n---\nx: 1\n---\ny: 2\n",
        "- yes\n- '1.0'\n- 0x1F\n",
        "a: 1\na: 2\n",
        "a: [1, 2\n",
        "? [a]\n: b\n",
    ] {
        let typed = from_str::<Option<Value>>(text, "v.yaml").map(|v| v.unwrap_or(Value::Null));
        let plain = first_value(text, "v.yaml");
        match (typed, plain) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text:?}"),
            (a, b) => panic!("{text:?}: {a:?} vs {b:?}"),
        }
    }
    assert_eq!(first_value("a: 1.0\n", "v.yaml").unwrap(), json!({"a": 1}));
}

/// Texts at the edges of what the quick reader takes: each must be read as the full parser reads it, or left to it.
const QUICK_READER_CASES: &[&str] = &[
    "- &a foo\n  bar\n- *a\n",
    "k: &a 1.0\nj: *a\n",
    "k: &a\nj: *a\n",
    "k: &a #c\nj: *a\n",
    "k: &a 'x' # c\nj: *a # d\n",
    "a: 1\n---\n   \n",
    "a: 1\n---",
    "a: |-\n  x\n---",
    "k: &a |\n  x\n",
    "a: 1\ndata:\n  s: |\n    x\n\n    y\n---",
    "a: 1\ndata:\n  s: |-\n    x\n---\n  \n\n",
    "a: 1\n---\nb: 2\n",
    "a: 1\n---\n# c\n",
    "a: |-\n  x\n  y",
    "a: |-\n  x\n\n  y\n  ",
    "a: |\n  x\n  y",
    "- |-\n  x\n- |-\n  y",
    "port: &port http\nsvc:\n  target: *port # c\n  list:\n  - *port\n  - &n 9121\n  - *n\n",
    "a: &x 'q'\nb: &x \"d\"\nc: *x\nd: &y.z-1 1.50 # c\ne: *y.z-1\nf: &t yes\ng: *t\n",
    "a: *undefined\n",
    "a: &x\n  b: 1\nc: *x\n",
    "a: &x [1]\nb: *x\n",
    "a: &x text\n  folded\n",
    "a: &x ~\nb: *x\n",
    "a: 1\nb: -2\nc: 1.50\nd: -0.5\ne: 0\nf: -0\ng: 1.0\nh: 007\ni: 1_000\nj: 0x1F\nk: 1e3\nl: 1:20\n",
    "v: [yes, Yes, YES, yEs, y, Y, on, ON, oN, no, n, N, off, Off, true, tRUE, False]\n",
    "a: yes\nb: yEs\nc: on\nd: N\ne: nULL\nf: ~\ng: null\nh:\ni: Null\n",
    "a: inf\nb: -inf\nc: .inf\nd: nan\ne: infinity\nf: info\ng: -info\nh: nancy\ni: .NaN\n",
    "a: 128Mi\nb: 100m\nc: 10s\nd: 1d\ne: 2h\nf: 1.2.3\ng: 10.0.0.1/8\nh: 2024-01-01\ni: 1-\nj: 0.0.0.0\nk: -1.2.3\n",
    "a: -Xmx512m\nb: /var/lib\nc: $HOME\nd: ^x$\ne: (x)\nf: _x\ng: <<\nh: =\ni: '@x'\nj: \"`x`\"\n",
    "a: \"x\\ny\\t\\\"z\\\\\"\nb: 'it''s'\nc: \"\"\nd: ''\ne: \"1\"\nf: 'true'\ng: \"a\" # c\nh: 'b'#x\n",
    "\"quoted key\": 1\n'single': 2\n\"1\": 3\n8080: http\n0755: x\n1.5: y\ntrue: z\n",
    "a: x # comment\nb: x#y\nc: a b  \nd: a: b\ne: x:\nf: http://x:80/y\n",
    "list:\n- a\n- b: 1\n  c: 2\n- - x\n  - y\n-\n- # c\n  z: 1\nnext: 1\n",
    "a:\n  - 1\n  - 2\nb:\n- 3\nc: []\nd: {}\ne: [1]\nf: {a: 1}\ng: [] # c\n",
    "a: |\n  line1\n\n  line3\n    more\nb: |-\n  x\n  y\n\nc: |+\n  k\n\nd: >\n  folded\ne: |2\n   x\n",
    "a: |\n\n  after blank\nb: |\n      \n    deeper blank first\nc: |\nd: 1\n",
    "a: |\n  # not a comment\n  x: y\n  - z\n\n\n",
    "a: |\n  no newline at the end",
    "a:\n  b:\n    c:\n      d: deep\n  e: 1\nf:\n  multi\n  line\n",
    "a: x\n  continued\n",
    "a: x\n  continued\n  more words  \n    deeper\nb: 1\n",
    "d: Redis(R) is a\n  store. It is\n  fast\n\nhome: x\n# c\n",
    "- item text\n  continued\n- 10\n  20\n- yes\n  no\n",
    "a: x\n\n  after blank\n",
    "a: x\n  # comment\n",
    "a:\n  b: x\n    # deeper comment\n  c: y\n    continued\n    # c\n  d: 1\n",
    "a: x\n  y\n    # c\n  z\n",
    "a:\n- x\n y\n",
    "a:\n  - x\n   y\n",
    "- a: x\n   y\n",
    "- a: x\n  y\n",
    "a:\n  b: x\n   y\n  c: 1\n",
    "- - x\n    y\n  - z\n",
    "{}",
    "{}\n# c\n",
    "  []\n",
    "[a, 1, 'b']\n",
    "{a: 1}\n",
    "[]\nb: 1\n",
    "{}\n  x\n",
    "[\n",
    "a: x\n  b: c\n",
    "a: x\n  - y\n",
    "a: x # c\n  y\n",
    "a: 1\n  2\n",
    "a:\n  x\n  y\nb: 'q'\n  r\n",
    "a: x\n  y:\n",
    "a: x\n  y #z\n",
    "---\na: 1\n",
    "# c\n---\na: 1\n---\nb: 2\n",
    "a: 1\n...\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a: 1\na: 2\n",
    "",
    "\n\n# only comments\n",
    "- 1\n- two\n",
    "  a: 1\n  b: 2\n",
    "a: 1\n b: 2\n",
    "scalar\n",
    "a:\tb\n",
    "a: b\r\n",
    "? a\n: b\n",
    "a: - b\n",
    "key : v\n",
    "a: \"unterminated\n  x\"\n",
    "a: 99999999999999999999\nb: 123456789012345678\nc: 1.23456789012345678\n",
];

/// Wherever the quick reader answers, its answer is the full parser's: on the cases above and on every YAML file
/// under `testdata/` (and under `$FLEET_YAML_CORPUS`, e.g. the Helm chart corpus, when set).
#[test]
fn quick_reader_agrees_with_the_full_parser() {
    let mut texts: Vec<(String, String)> = QUICK_READER_CASES
        .iter()
        .map(|t| (format!("{t:?}"), t.to_string()))
        .collect();
    texts.extend(crate::testing::yaml_corpus());
    let mut quick_count = 0;
    for (name, text) in &texts {
        let full = first_value_full(&Options::default(), text, "t");
        let Some(quick) = fast::first_value(text) else {
            if std::env::var("FLEET_YAML_SHOW_SLOW").is_ok() && name.contains("values") {
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                let mut culprit = String::new();
                for n in 1..=lines.len() {
                    if fast::first_value(&lines[..n].concat()).is_none() {
                        culprit = lines[n.saturating_sub(2)..n].concat();
                        break;
                    }
                }
                eprintln!("full parser: {name}: {culprit:?}");
            }
            continue;
        };
        match full {
            Ok(full) => assert_eq!(quick, full, "{name}"),
            Err(e) => panic!("{name}: the quick reader read a text the parser rejects: {e}"),
        }
        quick_count += 1;
    }
    assert!(quick_count > 20, "{quick_count} of {}", texts.len());
}

/// The shapes values files are written in stay on the quick path (the full parser would give the same answer,
/// only slower): comments indented deeper than the next key, plain text folded over lines, a lone `{}`.
#[test]
fn quick_reader_takes_common_values_shapes() {
    for text in [
        "a:\n  port: 26379\n    ## @param a.b deeper comment\n  next: 1\n",
        "description: Redis(R) is an open source store. It is often referred\n  to as a data structure server.\nhome: x\n",
        "- item text\n  continued\n# c\n- b\n",
        "{}",
        "{}\n",
        "[]\n",
        "\n# c\n[a, b]\n",
        "a: 1\ndata:\n  s: |\n    x\n\n    y\n---",
        "data:\n  run.sh: |-\n    x {\n      y\n    }",
        "port: &port http\nsvc:\n  target: *port # c\n  list:\n  - *port\n  - &n 9121\n  - *n\n",
        "a: &x 'q'\nb: &x \"d\"\nc: *x\nd: &y.z-1 1.50 # c\ne: *y.z-1\nf: &t yes\ng: *t\n",
    ] {
        assert!(fast::first_value(text).is_some(), "{text:?}");
    }
}

/// A builder that writes the tree it is given as text, to see what `build_first_value` hands a caller's builder.
struct Shape;

impl Build for Shape {
    type Node = String;
    type Map = Vec<(String, String)>;
    fn scalar(&mut self, value: Value) -> String {
        value.to_string()
    }
    fn sequence(&mut self, items: Vec<String>) -> String {
        format!("[{}]", items.join(","))
    }
    fn new_map(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn insert(&mut self, map: &mut Vec<(String, String)>, key: String, value: String) -> bool {
        let new = map.iter().all(|(k, _)| *k != key);
        map.push((key, value));
        new
    }
    fn mapping(&mut self, map: Vec<(String, String)>) -> String {
        let entries: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{{{}}}", entries.join(","))
    }
}

/// A caller's builder gets the tree `first_value` returns, Go's JSON numbers included, from the quick reader (block
/// text) and from the full parser (anchors, a repeated key, flow mappings) alike; errors are the same too.
#[test]
fn a_callers_builder_gets_what_first_value_returns() {
    for text in [
        "a: 1\nb: 1.0\nc: [x, -2.50, 7]\nd:\n  - e: ~\n    f: 'yes'\n  - |\n    text\n",
        "a: &x {b: 1.0, c: [1e3]}\nd: *x\n",
        "a: 1\na: 2\n",
        "{a: {b: [1, 2.0]}}\n",
        "",
    ] {
        let expected = Shape.json(first_value(text, "t").unwrap());
        assert_eq!(
            build_first_value(text, "t", &mut Shape).unwrap(),
            expected,
            "{text:?}"
        );
    }
    assert_eq!(
        build_first_value("a: [\n", "t", &mut Shape)
            .unwrap_err()
            .to_string(),
        first_value("a: [\n", "t").unwrap_err().to_string()
    );
    assert_eq!(
        build_first_value("b: 1.0\n", "t", &mut Shape).unwrap(),
        "{b=1}"
    );
}

/// Many anchors and aliases: each alias repeats the latest anchor of its name, and the quick reader answers what
/// the full parser answers (the anchors are looked up by name, so such a text costs one lookup per alias).
#[test]
fn quick_reader_resolves_aliases_among_many_anchors() {
    let anchors = 5_000;
    let mut text = String::new();
    for i in 0..anchors {
        text.push_str(&format!("a{i}: &n{i} v{i}\n"));
    }
    text.push_str("again: &n97 ninety-seven\n");
    for i in (0..anchors).step_by(97) {
        text.push_str(&format!("b{i}: *n{i}\n"));
    }
    let quick = fast::first_value(&text).expect("the quick reader takes anchors and aliases");
    assert_eq!(quick["b0"], json!("v0"));
    assert_eq!(quick["b4947"], json!("v4947"));
    assert_eq!(quick["b97"], json!("ninety-seven"));
    // A name anchored twice: its aliases repeat the later value.
    let redefined = fast::first_value("first: &n one\nsecond: &n two\nthird: *n\n").unwrap();
    assert_eq!(redefined["third"], json!("two"));
    assert_eq!(quick, one(&text));
}

/// The quick reader's line split is `str::split('\n')`: empty lines, a last line without a break, an empty text.
#[test]
fn quick_reader_lines_are_the_texts_lines() {
    for text in [
        "",
        "\n",
        "a",
        "a\n",
        "a\n\nb",
        "\n\na: 1\n  # c\n",
        "x\n---\n",
    ] {
        let lines: Vec<&str> = fast::split_lines(text).collect();
        assert_eq!(lines, text.split('\n').collect::<Vec<_>>(), "{text:?}");
    }
}
