//! Go text/template semantics, each case checked against what Go's engine (with Helm's functions) prints.

use super::exec::Exec;
use super::{TemplateError, TemplateSet};
use crate::funcs::Funcs;
use crate::value::Value;

fn render_err(src: &str, data: &str) -> Result<String, TemplateError> {
    let mut set = TemplateSet::new();
    set.add_file("t", src)?;
    let data: Value = crate::yaml::parse_value(data).unwrap();
    let mut ex = Exec::new(&set, Funcs::helm());
    ex.execute("t", &data)
}

fn render(src: &str, data: &str) -> String {
    render_err(src, data).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

#[test]
fn text_and_trimming() {
    assert_eq!(render("a {{- \"b\" -}} c", "{}"), "abc");
    assert_eq!(render("a\n  {{- /* comment */}}\nb", "{}"), "a\nb");
    assert_eq!(
        render("{{ \"x\" }} {% raw %} {# y #}", "{}"),
        "x {% raw %} {# y #}"
    );
    assert_eq!(render("{{-3}}", "{}"), "-3");
}

/// Patterns run on `regex-lite` or `regex` (funcs/regexp.rs); either way they match as Go does. Expectations from
/// helm v4.1.4.
#[test]
fn regex_functions_match_as_go_whichever_engine_runs_them() {
    let cases = [
        // Case-insensitive patterns fold Unicode (the Kelvin sign is a `k`), so they go to `regex`.
        (r#"{{ regexMatch "(?i)k" "\u212a" }}"#, "true"),
        (r#"{{ regexReplaceAll "(?i)é" "É" "e" }}"#, "e"),
        (r#"{{ regexMatch "(?i)straße" "STRASSE" }}"#, "false"),
        // Classes match codepoints, not bytes.
        (r#"{{ regexReplaceAll "[^a-z]" "aéb" "-" }}"#, "a-b"),
        (
            r#"{{ regexFindAll "[^a-z]" "aé1b" -1 | toJson }}"#,
            r#"["é","1"]"#,
        ),
        (r#"{{ regexFind "é+" "aééb" }}"#, "éé"),
        // `\b` and `\B` are ASCII word boundaries, whichever engine runs the pattern (nested classes and the `i` flag
        // go to `regex`).
        (r#"{{ regexReplaceAll "\\b" "é a" "|" }}"#, "é |a|"),
        (r#"{{ regexReplaceAll "(?i)\\b" "é a" "|" }}"#, "é |a|"),
        (r#"{{ regexReplaceAll "(?i)\\B" "éa b" "|" }}"#, "|éa b"),
        (r#"{{ regexReplaceAll "[\\D]\\b" "éa b" "|" }}"#, "||||"),
        // Empty matches, expansion and literal replacement, splitting.
        (r#"{{ regexReplaceAll "a*" "baaac" "-" }}"#, "-b-c-"),
        (r#"{{ regexFindAll "" "aé" -1 | toJson }}"#, r#"["","",""]"#),
        (r#"{{ regexReplaceAllLiteral "a" "xay" "$1$$" }}"#, "x$1$$y"),
        (
            r#"{{ regexReplaceAll "(a)(?P<n>b)" "xaby" "[${n}$1$$]" }}"#,
            "x[ba$]y",
        ),
        (
            r#"{{ regexSplit "[,;]" "a,b;c,d" 2 | toJson }}"#,
            r#"["a","b;c,d"]"#,
        ),
    ];
    for (src, want) in cases {
        assert_eq!(render(src, "{}"), want, "{src}");
    }
    // A pattern neither engine reads fails with the same message as before the engine choice.
    let e = render_err(r#"{{ regexMatch "a(" "x" }}"#, "{}").unwrap_err();
    assert!(
        e.to_string()
            .contains("error calling regexMatch: error parsing regexp: regex parse error"),
        "{e}"
    );
}

/// RE2's `\d`, `\w`, `\s` and their negations are ASCII-only: a non-ASCII letter, digit or space is none of them.
#[test]
fn regex_class_escapes_are_ascii_as_in_go() {
    let cases = [
        (r#"{{ regexReplaceAll "\\W" "é-a_1" "." }}"#, "..a_1"),
        (r#"{{ regexMatch "^\\d+$" "١٢" }}"#, "false"),
        (r#"{{ regexMatch "^\\d+$" "12" }}"#, "true"),
        (r#"{{ regexFind "[\\w-]+" "ab-ç" }}"#, "ab-"),
        (
            r#"{{ regexReplaceAll "\\s" "a\u00a0b\tc" "_" }}"#,
            "a\u{a0}b_c",
        ),
        (r#"{{ regexMatch "^[^\\W]+$" "abc" }}"#, "true"),
        (r#"{{ regexMatch "^[^\\W]+$" "é" }}"#, "false"),
        (r#"{{ regexFind "[\\D]+" "ab12" }}"#, "ab"),
        (r#"{{ regexReplaceAll "[^a-z\\d\\-]" "Ab-9é" "" }}"#, "b-9"),
    ];
    for (src, want) in cases {
        assert_eq!(render(src, "{}"), want, "{src}");
    }
}

/// A pattern with no regexp syntax finds its own text (searched without compiling a regexp).
#[test]
fn literal_regex_patterns_match_their_text() {
    let cases = [
        (r#"{{ regexFind "SASL" "SASL_SSL" }}"#, "SASL"),
        (r#"{{ regexFind "SCRAM" "PLAIN" }}"#, ""),
        (r#"{{ regexMatch "SSL" "SASL_SSL" }}"#, "true"),
        (r#"{{ regexMatch "a-b" "xa-by" }}"#, "true"),
        (r#"{{ regexMatch "é b" "é" }}"#, "false"),
        (
            r#"{{ mustRegexFind "SCRAM-SHA-512" "x,SCRAM-SHA-512" }}"#,
            "SCRAM-SHA-512",
        ),
        (r#"{{ regexFind "" "abc" }}"#, ""),
        (r#"{{ regexMatch "" "" }}"#, "true"),
    ];
    for (src, want) in cases {
        assert_eq!(render(src, "{}"), want, "{src}");
    }
}

/// A field read again after its map changed (`set`, `unset`, `merge`) sees the change, in a loop and across
/// includes of the same helper.
#[test]
fn fields_read_again_see_changed_maps() {
    let src = r#"{{ define "h" }}{{ .a }}{{ end -}}
{{ $d := dict "a" 1 }}{{ range until 3 }}{{ $d.a }}{{ include "h" $d }}{{ $_ := set $d "a" (add $d.a 1) }}{{ end }}
{{- $_ := unset $d "a" }} {{ $d.a }} {{ include "h" $d }}
{{- $_ := merge $d (dict "a" 9) }} {{ $d.a }} {{ .m.x }}{{ $_ := set .m "x" "y" }} {{ .m.x }}"#;
    assert_eq!(
        render(src, "m: {x: w}"),
        "112233 <no value> <no value> 9 w y"
    );
}

/// `deepCopy` copies nested maps and lists: changing the copy leaves the original as it was.
#[test]
fn deep_copy_is_independent_of_its_original() {
    let src = r#"{{ $a := dict "m" (dict "x" 1) "l" (list (dict "y" 2)) "s" "t" }}{{ $b := deepCopy $a }}
{{- $_ := set $b.m "x" 9 }}{{ $_ := set (index $b.l 0) "y" 8 -}}
{{ $a.m.x }} {{ (index $a.l 0).y }} {{ $b.m.x }} {{ (index $b.l 0).y }} {{ $b.s }}"#;
    assert_eq!(render(src, "{}"), "1 2 9 8 t");
}

#[test]
fn fields_dot_and_dollar() {
    let data = "a: {b: 1, c: x}\nl: [1, 2]";
    assert_eq!(
        render("{{ .a.c }}{{ with .a }}{{ .c }}{{ $.a.b }}{{ end }}", data),
        "xx1"
    );
    assert_eq!(render("{{ .missing }}", data), "<no value>");
    assert_eq!(render("{{ .a }}", data), "map[b:1 c:x]");
    assert_eq!(render("{{ .l }}", data), "[1 2]");
    assert_eq!(
        render("{{ 1e6 }} {{ 1000000.0 }} {{ 0.5 }}", data),
        "1e+06 1e+06 0.5"
    );
}

#[test]
fn nil_field_error_names_position() {
    let e = render_err("line1\n  {{ .a.b.c }}", "a: {}")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "template: t:2:7: executing \"t\" at <.a.b.c>: nil pointer evaluating interface {}.c"
    );
}

#[test]
fn parse_errors_name_line() {
    let e = render_err("a\n{{ if }}", "{}").unwrap_err().to_string();
    assert_eq!(e, "template: t:2: missing value for if");
    let e = render_err("{{ $x }}", "{}").unwrap_err().to_string();
    assert_eq!(e, "template: t:1: undefined variable \"$x\"");
    let e = render_err("{{ if 1 }}", "{}").unwrap_err().to_string();
    assert!(e.starts_with("template: t:1: unexpected EOF"), "{e}");
}

#[test]
fn variables_and_scopes() {
    assert_eq!(
        render(
            "{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}",
            "{}"
        ),
        "2"
    );
    assert_eq!(
        render(
            "{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}",
            "l: [a, b]"
        ),
        "0=a;1=b;"
    );
    assert_eq!(
        render(
            "{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}",
            "b: 2\na: 1"
        ),
        "a=1;b=2;"
    );
    assert_eq!(render("{{ range 3 }}{{ . }}{{ end }}", "{}"), "012");
    assert_eq!(
        render(
            "{{ range .l }}{{ if eq . 2.0 }}{{ break }}{{ end }}{{ . }}{{ end }}",
            "l: [1, 2, 3]"
        ),
        "1"
    );
    assert_eq!(
        render(
            "{{ range .l }}{{ if eq . 2.0 }}{{ continue }}{{ end }}{{ . }}{{ end }}",
            "l: [1, 2, 3]"
        ),
        "13"
    );
    assert_eq!(
        render("{{ range .none }}x{{ else }}empty{{ end }}", "{}"),
        "empty"
    );
}

#[test]
fn conditionals() {
    let t = "{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}";
    assert_eq!(render(t, "a: 0\nb: ''"), "C");
    assert_eq!(render(t, "b: x"), "B");
    assert_eq!(
        render("{{ with .x }}{{ . }}{{ else }}none{{ end }}", "x: []"),
        "none"
    );
    assert_eq!(render("{{ if and .a (not .b) }}y{{ end }}", "a: 1"), "y");
    assert_eq!(render("{{ or .a .b \"d\" }}", "{}"), "d");
    // `and` stops before evaluating a failing argument.
    assert_eq!(render("{{ and .a .a.b }}", "{}"), "<no value>");
}

#[test]
fn pipelines_pass_last_argument() {
    assert_eq!(render("{{ \"x\" | printf \"%s-%s\" \"a\" }}", "{}"), "a-x");
    assert_eq!(
        render("{{ .v | default \"d\" | upper | quote }}", "{}"),
        "\"D\""
    );
    assert_eq!(render("{{ list 1 2 | len }}", "{}"), "2");
}

#[test]
fn define_template_block_include() {
    let src = "{{ define \"n\" }}[{{ . }}]{{ end }}{{ template \"n\" 1 }}{{ include \"n\" 2 | upper }}{{ block \"b\" 3 }}<{{ . }}>{{ end }}";
    assert_eq!(render(src, "{}"), "[1][2]<3>");
    assert_eq!(render("{{ tpl \"{{ .a }}\" . }}", "a: z"), "z");
}

#[test]
fn comparisons_follow_go() {
    assert_eq!(
        render(
            "{{ eq 1 2 1 }} {{ ne \"a\" \"b\" }} {{ lt 1 2 }} {{ ge 2.5 2.5 }}",
            "{}"
        ),
        "true true true true"
    );
    let e = render_err("{{ eq 1 1.0 }}", "{}").unwrap_err().to_string();
    assert!(e.contains("incompatible types for comparison"), "{e}");
    assert_eq!(render("{{ eq .missing \"x\" }}", "{}"), "false");
}

#[test]
fn builtins() {
    assert_eq!(
        render(
            "{{ index .m \"k\" }} {{ index .l 1 }} {{ slice .l 1 }}",
            "m: {k: v}\nl: [a, b]"
        ),
        "v b [b]"
    );
    assert_eq!(
        render("{{ print 1 2 \"a\" }}|{{ println \"x\" 1 }}", "{}"),
        "1 2a|x 1\n"
    );
    assert_eq!(
        render(
            "{{ html \"<a&>\" }} {{ js \"'\" }} {{ urlquery \"a b&\" }}",
            "{}"
        ),
        "&lt;a&amp;&gt; \\' a+b%26"
    );
    assert_eq!(
        render("{{ printf \"%v %d %s\" .f 3 .s }}", "f: 1.5\ns: x"),
        "1.5 3 x"
    );
}

#[test]
fn sprig_and_helm_functions() {
    assert_eq!(
        render("{{ toYaml .v | nindent 2 }}", "v: {b: [1, x], a: 'yes'}"),
        "\n  a: \"yes\"\n  b:\n  - 1\n  - x"
    );
    assert_eq!(
        render("{{ toJson .v }}", "v: {b: '<', a: 1.5, c: 100}"),
        "{\"a\":1.5,\"b\":\"\\u003c\",\"c\":100}"
    );
    assert_eq!(
        render(
            "{{ $d := dict \"a\" 1 }}{{ $_ := set $d \"b\" 2 }}{{ keys $d | sortAlpha }}",
            "{}"
        ),
        "[a b]"
    );
    assert_eq!(
        render(
            "{{ merge (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) | toJson }}",
            "{}"
        ),
        "{\"a\":1,\"b\":3}"
    );
    assert_eq!(
        render(
            "{{ mergeOverwrite (dict \"a\" 1) (dict \"a\" 2) | toJson }}",
            "{}"
        ),
        "{\"a\":2}"
    );
    assert_eq!(
        render(
            "{{ trunc 3 \"abcdef\" }} {{ trimSuffix \"-\" \"a-\" }} {{ b64enc \"hi\" }}",
            "{}"
        ),
        "abc a aGk="
    );
    assert_eq!(
        render("{{ semverCompare \">=1.21-0\" \"v1.33.0\" }}", "{}"),
        "true"
    );
    assert_eq!(
        render(
            "{{ until 3 }} {{ add 1 2 }} {{ div 7 2 }} {{ int \"42\" }}",
            "{}"
        ),
        "[0 1 2] 3 3 42"
    );
    assert_eq!(
        render("{{ regexReplaceAll \"a(b)\" \"xab\" \"${1}c\" }}", "{}"),
        "xbc"
    );
    assert_eq!(
        render(
            "{{ coalesce .a \"\" \"z\" }} {{ ternary 1 2 false }} {{ empty .x }}",
            "{}"
        ),
        "z 2 true"
    );
    assert_eq!(render("{{ .a | required \"need a\" }}", "a: v"), "v");
    let e = render_err("\n{{ required \"need a\" .a }}", "{}").unwrap_err();
    assert_eq!(e.to_string(), "execution error at (t:2:3): need a");
}

#[test]
fn budget_stops_runaway_templates() {
    let mut set = TemplateSet::new();
    set.add_file(
        "t",
        "{{ range until 1000000 }}{{ range until 1000000 }}x{{ end }}{{ end }}",
    )
    .unwrap();
    let mut ex = Exec::new(&set, Funcs::helm()).with_fuel(100_000);
    assert!(matches!(
        ex.execute("t", &Value::from(())),
        Err(TemplateError::Budget(_))
    ));
    let mut set = TemplateSet::new();
    set.add_file(
        "t",
        "{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}",
    )
    .unwrap();
    let mut ex = Exec::new(&set, Funcs::helm());
    let e = ex.execute("t", &Value::from(())).unwrap_err().to_string();
    assert!(e.contains("exceeded maximum template depth"), "{e}");
}

#[test]
fn hostile_input_is_an_error_not_a_crash() {
    let deep_parens = format!("{{{{ {}1{} }}}}", "(".repeat(5000), ")".repeat(5000));
    let deep_ifs = format!("{}x{}", "{{ if 1 }}".repeat(5000), "{{ end }}".repeat(5000));
    for src in [
        deep_parens.as_str(),
        deep_ifs.as_str(),
        "{{",
        "{{ (",
        "{{ \"\\x",
        "{{/* ",
        "{{ 1 | }}",
        "{{ range $a, $b, $c := . }}{{ end }}",
        // Declarations that reach the end of the action (the parser skips their tokens in one step).
        "{{ range $a, $b := }}{{ end }}",
        "{{ range $a, $b }}{{ end }}",
        "{{ range $a, }}{{ end }}",
        "{{ $x := }}",
        "{{ $a, $b := . }}",
    ] {
        assert!(TemplateSet::new().add_file("t", src).is_err(), "{src:.40}");
    }
    assert!(render_err("{{ index . 99 }}", "[1]").is_err());
    assert!(
        render_err(
            "{{ $x := dict }}{{ $_ := set $x \"self\" $x }}{{ toJson $x }}",
            "{}"
        )
        .is_ok()
    );
}

/// A cheap stand-in for the cargo-fuzz target in CI: thousands of random token soups must parse or fail cleanly
/// and execute within their fuel without panicking.
#[test]
fn random_token_soup_never_panics() {
    const PIECES: &[&str] = &[
        "{{",
        "}}",
        "{{-",
        " -}}",
        " ",
        "\n",
        ".",
        ".a",
        ".b",
        "$",
        "$x",
        ":=",
        "=",
        "|",
        "(",
        ")",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-2",
        "1.5e3",
        "0x1p4",
        "nil",
        "true",
        "and",
        "or",
        "not",
        "eq",
        "len",
        "index",
        "slice",
        "printf",
        "\"%d %s %v\"",
        "include",
        "tpl",
        "toYaml",
        "fromYaml",
        "default",
        "dict",
        "list",
        "set",
        "merge",
        "until",
        "repeat",
        "regexMatch",
        "\"[\"",
        "/*",
        "*/",
        ",",
        "$i",
        "$v",
        "trunc",
        "b64dec",
        "semverCompare",
        "required",
    ];
    let mut rng = crate::funcs::Rng::seeded(7);
    let data = crate::yaml::parse_value("a: {b: [1, x]}\nb: 2").unwrap();
    let (mut parsed, mut total) = (0, 0);
    for i in 0..20000 {
        let n = 1 + (rng.next_u64() % 12) as usize;
        let soup: Vec<&str> = (0..n)
            .map(|_| PIECES[(rng.next_u64() % PIECES.len() as u64) as usize])
            .collect();
        // Half the inputs are single actions, which parse far more often than free soups.
        let src = if i % 2 == 0 {
            format!("{{{{ {} }}}}", soup.join(" "))
        } else {
            soup.join(" ")
        };
        total += 1;
        let mut set = TemplateSet::new();
        if set.add_file("t", &src).is_ok() {
            parsed += 1;
            let mut ex = Exec::new(&set, Funcs::helm()).with_fuel(10_000);
            let _ = ex.execute("t", &data);
        }
    }
    assert!(
        parsed * 20 > total,
        "only {parsed} of {total} inputs parsed; the generator is too weak"
    );
}

#[test]
fn sprig_slice_replaces_the_builtin() {
    let e = render_err("{{ slice \"abc\" 1 }}", "{}")
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("error calling slice: list should be type of slice or array but string"),
        "{e}"
    );
    assert_eq!(render("{{ slice .l 1 2 }}", "l: [a, b, c]"), "[b]");
}

#[test]
fn unknown_functions_fail_at_parse_time_like_go() {
    let e = TemplateSet::new()
        .add_file("c/t.yaml", "a: 1\n{{ nope . }}")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: c/t.yaml:2: function \"nope\" not defined"
    );
    assert_eq!(
        e.helm_message(),
        "parse error at (c/t.yaml:2): function \"nope\" not defined"
    );
}

/// Values that share parts grow exponentially when expanded; printing and conversion stay bounded (a fuzzer
/// finding: it exhausted memory through `dict`'s key printing).
#[test]
fn shared_values_expand_within_bounds() {
    let doubling = "{{ $x := list 1 }}{{ range until 22 }}{{ $x = list $x $x }}{{ end }}";
    let printed = render(&format!("{doubling}{{{{ $x | toString | len }}}}"), "{}");
    let n: usize = printed.parse().unwrap();
    assert!(n <= crate::gofmt::MAX_PRINT + (1 << 20), "{n}");
    let r = render_err(&format!("{doubling}{{{{ $x | mustToJson }}}}"), "{}");
    let e = r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("value too large"), "mustToJson must fail: {e}");
}

/// Huge `printf` widths and precisions are capped instead of panicking (a fuzzer finding).
#[test]
fn printf_with_huge_width_and_precision_does_not_panic() {
    let out = render(
        "{{ printf \"%5.3000000000000000000000g|%q\" 4.13 \"ab\" }}",
        "{}",
    );
    assert!(
        out.ends_with("|\"ab\""),
        "{}",
        &out[out.len().saturating_sub(20)..]
    );
    let out = render("{{ printf \"%*d\" 100000000 7 | len }}", "{}");
    assert_eq!(out, "65535");
}

/// `b64dec` of binary data gives a Go string holding the bytes; each figure is what helm v4.1.4 prints.
#[test]
fn b64dec_keeps_the_bytes_of_binary_data() {
    let t = |expr: &str| render(&format!("{{{{ \"gP8A\" | b64dec | {expr} }}}}"), "{}");
    assert_eq!(t("b64enc"), "gP8A");
    assert_eq!(t("len"), "3");
    assert_eq!(t("typeOf"), "string");
    // Text functions see U+FFFD for the invalid bytes (Go's toJson writes them as `\ufffd` escapes instead).
    assert_eq!(t("toYaml"), "\"\u{fffd}\u{fffd}\\0\"");
    assert_eq!(
        t("sha256sum"),
        "3ccf137976f54d932cfe955bac36a4ad588692683571a185f909267767f98c5d"
    );
    assert_eq!(render("{{ \"aGk=\" | b64dec | typeOf }}", "{}"), "string");
    assert_eq!(render("{{ \"aGk=\" | b64dec }}", "{}"), "hi");
}

#[test]
fn json_encodings_follow_go() {
    let v = "v: {b: ['<x>', {}], a: 1.5}";
    assert_eq!(
        render("{{ toRawJson .v }}", v),
        r#"{"a":1.5,"b":["<x>",{}]}"#
    );
    assert_eq!(
        render("{{ toPrettyJson .v }}", v),
        "{\n  \"a\": 1.5,\n  \"b\": [\n    \"\\u003cx\\u003e\",\n    {}\n  ]\n}"
    );
    // Go cannot encode NaN: toJson prints nothing, mustToJson fails.
    assert_eq!(render("{{ toJson (float64 \"NaN\") }}", "{}"), "");
    let e = render_err("{{ mustToJson (float64 \"NaN\") }}", "{}").unwrap_err();
    assert!(
        e.to_string().contains("json: unsupported value: NaN"),
        "{e}"
    );
}

#[test]
fn the_drop_policy_decides_whether_a_large_set_is_freed() {
    use super::{DropPolicy, set_drop_policy};
    let large_set = || {
        let mut set = TemplateSet::new();
        let files: Vec<(String, String)> = (0..=super::LARGE_SET_TEMPLATES)
            .map(|i| (format!("t{i}"), format!("x{i}")))
            .collect();
        for (name, src) in &files {
            set.add_file(name, src).unwrap();
        }
        let probe = std::sync::Arc::downgrade(&set.get("t0").unwrap());
        (set, probe)
    };
    // Only this test changes the policy; other tests' sets are at most kept while it is `Leak`.
    set_drop_policy(DropPolicy::Leak);
    let (set, kept) = large_set();
    drop(set);
    set_drop_policy(DropPolicy::Inline);
    let (set, freed) = large_set();
    drop(set);
    assert!(kept.upgrade().is_some());
    assert!(freed.upgrade().is_none());
}

#[test]
fn a_library_vendored_twice_is_parsed_once_and_errors_name_each_copy() {
    // The same `_helpers.tpl` in two subcharts: one tree, but each copy's templates report their own file.
    let lib = "{{ define \"common.x\" }}{{ .a.b.c }}{{ end }}\n{{ .d.e.f }}";
    let (first, second) = (
        "web/charts/db/charts/common/_x.tpl",
        "web/charts/common/_x.tpl",
    );
    let mut set = TemplateSet::new();
    let files = [
        (first, lib),
        ("web/templates/main.yaml", "{{ include \"common.x\" . }}"),
        (second, lib),
    ];
    set.add_files(&files).unwrap();
    let (a, b) = (set.get(first).unwrap(), set.get(second).unwrap());
    assert!(std::sync::Arc::ptr_eq(&a.tree, &b.tree));
    assert!(!std::sync::Arc::ptr_eq(&a, &b));
    let data: Value = crate::yaml::parse_value("a: {}\nd: {}").unwrap();
    let mut ex = Exec::new(&set, Funcs::helm());
    let err = |ex: &mut Exec, name: &str| ex.execute(name, &data).unwrap_err().to_string();
    // The later definition wins, as in Go, and its errors name the second copy.
    assert_eq!(
        err(&mut ex, "web/templates/main.yaml"),
        format!(
            "template: {second}:1:28: executing \"common.x\" at <.a.b.c>: nil pointer evaluating interface {{}}.c"
        )
    );
    assert_eq!(
        err(&mut ex, first),
        format!(
            "template: {first}:2:5: executing \"{first}\" at <.d.e.f>: nil pointer evaluating interface {{}}.f"
        )
    );
    assert_eq!(
        err(&mut ex, second),
        format!(
            "template: {second}:2:5: executing \"{second}\" at <.d.e.f>: nil pointer evaluating interface {{}}.f"
        )
    );
    // A copy that fails to parse is reported under the first file that has it.
    let bad = "{{ if }}";
    let files = [("x/a.tpl", "ok"), ("x/b.tpl", bad), ("x/c.tpl", bad)];
    let e = TemplateSet::new()
        .add_files(&files)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "template: x/b.tpl:1: missing value for if");
}

#[test]
fn field_chains_on_variables_and_pipelines_print_as_written_in_errors() {
    // Chains are held as ranges of the template source; errors print them back as written.
    let e = render_err("{{ $x := .a }}{{ $x.b.c }}", "a: {}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: t:1:19: executing \"t\" at <$x.b.c>: nil pointer evaluating interface {}.c"
    );
    let e = render_err("{{ (dict \"k\" 1).k.z }}", "{}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: t:1:15: executing \"t\" at <(dict \"k\" 1).k.z>: can't evaluate field z in type int"
    );
    assert_eq!(
        render("{{ $x := .a }}{{ $x.b }}-{{ .a.b }}", "a: {b: 2}"),
        "2-2"
    );
}

#[test]
fn a_file_that_fails_to_lex_leaves_nothing_behind_for_the_next() {
    // Token vectors are reused between files on a thread: a failed file must not leak tokens into the next.
    for bad in ["{{ \"open", "{{ .a ", "{{ /* x", "{{ $ }}{{ if"] {
        assert!(render_err(bad, "{}").is_err(), "{bad:?}");
        assert_eq!(render("x{{ .a }}y", "a: 1"), "x1y");
    }
}

#[test]
fn a_map_key_given_arguments_is_not_a_method() {
    let e = render_err("{{ .a.b 1 }}", "a: {b: 2}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: t:1:5: executing \"t\" at <.a.b>: b is not a method but has arguments"
    );
    let e = render_err("{{ 1 | .a.b }}", "a: {b: 2}").unwrap_err();
    assert!(
        e.to_string()
            .ends_with("b is not a method but has arguments"),
        "{e}"
    );
    assert_eq!(render("{{ .a.b }}", "a: {b: 2}"), "2");
}

#[test]
fn failing_calls_print_their_command_with_nested_pipelines_as_written() {
    // Commands and arguments live in one store per parsed file; errors print them back as Go does (checked against
    // helm v4.1.4).
    let e = render_err("x: {{ 1 | printf \"%d\" (index (list 1 2) 5) }}", "{}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "template: t:1:23: executing \"t\" at <index (list 1 2) 5>: error calling index: index out of range: 5"
    );
    // The context is printed whole, however long: helm v4 does not cut it at 20 characters as old Go did.
    let e = render_err("x: {{ .a | add 1 | index (list 1 (add 2 3)) }}", "a: 1").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "template: t:1:19: executing \"t\" at <index (list 1 (add 2 3))>: error calling index:"
        ),
        "{e}"
    );
}
