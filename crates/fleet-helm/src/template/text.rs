//! One template text rendered on its own, outside a chart, with the delimiters, function map and `missingkey` rule
//! its user chooses: what Rancher Fleet does with the `${ }` templates of fleet.yaml (`${`/`}`, Sprig's functions,
//! `missingkey=error`). The output is Go's as it is: unlike a chart's, `<no value>` is not removed.

use super::exec::{DEFAULT_FUEL, Exec, MissingKey};
use super::lex::Syntax;
use super::{TemplateError, TemplateSet};
use crate::funcs::Funcs;
use crate::value::Value;

/// How [`render_text`] reads and runs a template.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions<'d> {
    /// Delimiters and function map.
    pub syntax: Syntax<'d>,
    /// What a missing map key gives.
    pub missing_key: MissingKey,
    /// The render budget (see [`DEFAULT_FUEL`]).
    pub fuel: u64,
}

impl TextOptions<'static> {
    /// Helm's syntax, `missingkey=zero`, the default budget.
    pub fn helm() -> Self {
        TextOptions {
            syntax: Syntax::helm(),
            missing_key: MissingKey::Zero,
            fuel: DEFAULT_FUEL,
        }
    }

    /// Rancher Fleet's `${ }` templates in fleet.yaml: `${`/`}`, Sprig's map as Fleet gives it
    /// ([`Funcs::sprig`]), `missingkey=error`, the default budget.
    pub fn fleet() -> Self {
        TextOptions {
            syntax: Syntax {
                left: "${",
                right: "}",
                funcs: Funcs::sprig(),
            },
            missing_key: MissingKey::Error,
            fuel: DEFAULT_FUEL,
        }
    }

    /// Go's `text/template` parsed without a function map: `{{`/`}}`, the builtins ([`Funcs::go`]), a missing
    /// key printed `<no value>`, the default budget.
    pub fn go() -> Self {
        TextOptions {
            syntax: Syntax {
                left: "{{",
                right: "}}",
                funcs: Funcs::go(),
            },
            missing_key: MissingKey::Zero,
            fuel: DEFAULT_FUEL,
        }
    }
}

/// Parses `src` as the template `name` (the name errors give) and executes it with `data` as dot.
pub fn render_text(
    name: &str,
    src: &str,
    data: &Value,
    options: &TextOptions<'_>,
) -> Result<String, TemplateError> {
    let mut set = TemplateSet::new();
    set.add_file_with(name, src, &options.syntax)?;
    let mut exec = Exec::new(&set, options.syntax.funcs)
        .with_fuel(options.fuel)
        .with_missing_key(options.missing_key);
    exec.execute(name, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet() -> TextOptions<'static> {
        TextOptions::fleet()
    }

    fn data() -> Value {
        crate::yaml::parse_value("a: {b: x}\nnothing: null\nlist: [1, 2]\n").unwrap()
    }

    fn render(src: &str, options: &TextOptions<'_>) -> Result<String, String> {
        render_text("t", src, &data(), options).map_err(|e| e.to_string())
    }

    #[test]
    fn other_delimiters_with_trimming_comments_and_strings() {
        let o = fleet();
        assert_eq!(
            render("x-${ .a.b }-{{ .a.b }}", &o).unwrap(),
            "x-x-{{ .a.b }}"
        );
        assert_eq!(render("a  ${- .a.b -}  b", &o).unwrap(), "axb");
        assert_eq!(
            render("a ${/* c */} b ${- /* c */ -} c", &o).unwrap(),
            "a  bc"
        );
        assert_eq!(render("${ \"}\" }${`${PWD}`}", &o).unwrap(), "}${PWD}");
        assert_eq!(
            render("${ range .list }[${ . }]${ end }", &o).unwrap(),
            "[1][2]"
        );
        assert_eq!(
            render("${ dict \"k\" (list 1 2) | toJson }", &o).unwrap(),
            r#"{"k":[1,2]}"#
        );
        // Helm's braces are plain text here, and the default delimiters still work elsewhere.
        assert_eq!(render("{{ .a.b }}", &TextOptions::helm()).unwrap(), "x");
        assert_eq!(
            render("${ .a.b", &o).unwrap_err(),
            "template: t:1: unclosed action"
        );
        assert_eq!(
            render("${ (.a.b }", &o).unwrap_err(),
            "template: t:1: unclosed left paren"
        );
    }

    #[test]
    fn missing_keys_are_errors_when_asked_and_nil_prints_no_value() {
        assert_eq!(
            render("${ .a.nope }", &fleet()).unwrap_err(),
            r#"template: t:1:5: executing "t" at <.a.nope>: map has no entry for key "nope""#
        );
        assert_eq!(
            render("${ $x := .a }${ $x.nope }", &fleet()).unwrap_err(),
            r#"template: t:1:18: executing "t" at <$x.nope>: map has no entry for key "nope""#
        );
        // A key that is there with a nil value is no error; `index` and `get` never fail.
        assert_eq!(
            render(
                "${ .nothing }|${ index .a \"nope\" }|${ get .a \"nope\" }",
                &fleet()
            )
            .unwrap(),
            "<no value>|<no value>|"
        );
        assert_eq!(
            render("{{ .a.nope }}", &TextOptions::helm()).unwrap(),
            "<no value>"
        );
    }

    #[test]
    fn the_sprig_map_has_no_environment_and_no_helm_functions() {
        for f in [
            "env \"HOME\"",
            "expandenv \"$HOME\"",
            "getHostByName \"x\"",
            "toYaml .a",
            "include \"x\" .",
        ] {
            let name = f.split(' ').next().unwrap();
            assert_eq!(
                render(&format!("${{ {f} }}"), &fleet()).unwrap_err(),
                format!("template: t:1: function \"{name}\" not defined"),
            );
        }
        // Sprig's fromJson reads any JSON value; Helm's only objects.
        assert_eq!(
            render("${ fromJson \"[1]\" | len }", &fleet()).unwrap(),
            "1"
        );
        assert_eq!(
            render("${ fromJson \"{\" }", &fleet()).unwrap(),
            "<no value>"
        );
        assert_eq!(
            render("{{ fromJson \"[1]\" }}", &TextOptions::helm()).unwrap(),
            "map[Error:json: cannot unmarshal into Go value of type map[string]interface {}]"
        );
    }
}
