//! The messages users see for bad YAML: each names the file, line and column (snapshot of the whole catalogue).

use fleet_yaml::parse::{self, Options};

#[test]
fn error_messages() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (i, prev) in ["b", "c", "d", "e", "f", "g"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f"])
    {
        bomb.push_str(&format!(
            "{i}: &{i} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        ));
    }
    let deep: String = (0..600)
        .map(|i| format!("{}k:\n", "  ".repeat(i)))
        .collect();
    let cases: Vec<(&str, String)> = vec![
        ("unclosed-flow.yaml", "a: [1, 2\nb: 3\n".into()),
        ("nested-mapping.yaml", "a: b: c\n".into()),
        ("bad-indent.yaml", "a:\n  - x\n - y\n".into()),
        ("tab-indent.yaml", "a:\n\tb: 1\n".into()),
        ("unknown-alias.yaml", "a: *nope\n".into()),
        (
            "duplicate-anchor-use.yaml",
            "a: &x 1\nb: *x\nc: *y\n".into(),
        ),
        ("null-key.yaml", "ok: 1\n~: 2\n".into()),
        ("complex-key.yaml", "? [a, b]\n: c\n".into()),
        ("infinity.yaml", "replicas: .inf\n".into()),
        ("unterminated-string.yaml", "a: \"abc\n".into()),
        ("bad-escape.yaml", "a: \"\\q\"\n".into()),
        ("merge-not-map.yaml", "a:\n  <<: 5\n".into()),
        ("alias-bomb.yaml", bomb),
        ("too-deep.yaml", deep),
    ];
    let mut out = String::new();
    for (origin, text) in &cases {
        let err = parse::documents(text, origin).unwrap_err();
        out.push_str(&format!("{err}\n"));
    }
    let small = Options {
        max_bytes: 8,
        ..Options::default()
    };
    out.push_str(&format!(
        "{}\n",
        parse::documents_with(&small, "a: 123456789\n", "big.yaml").unwrap_err()
    ));
    let strict = Options {
        duplicate_keys: parse::DuplicateKeys::Error,
        ..Options::default()
    };
    out.push_str(&format!(
        "{}\n",
        parse::documents_with(&strict, "a: 1\nb: 2\na: 3\n", "dup.yaml").unwrap_err()
    ));
    insta::assert_snapshot!(out);
}
