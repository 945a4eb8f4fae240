//! The function registry templates call: Go's builtins, Sprig's functions (minus `env`/`expandenv`) and Helm's own.
//! Each function takes the evaluated arguments (the piped value last) and returns a value or an error message that
//! the evaluator wraps as Go does (`error calling NAME: …`). Argument coercion follows Sprig's `cast`-based rules.

mod builtins;
mod collections;
pub mod crypto;
mod dates;
pub(crate) mod encoding;
mod math;
mod primes;
mod random;
mod regexp;
pub mod semver;
mod strings;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

pub use crate::call::{Call, Func, FuncError, FuncResult};
pub use crate::rng::Rng;
pub(crate) use semver::parse_version;

use crate::gofmt::to_go_string;
use crate::value::{Value, as_f64};
use minijinja::value::ValueKind;

/// The table of functions by name, and the names the evaluator binds itself.
pub struct Funcs {
    table: Table,
    late_bound: &'static [&'static str],
}

/// Functions the evaluator binds itself in Helm's map: `and`/`or` evaluate their arguments lazily, `include`/`tpl`
/// need the template set.
pub const HELM_LATE_BOUND: &[&str] = &["and", "or", "include", "tpl"];

/// The evaluator's own functions in a map without Helm's: Go's lazy `and`/`or`.
const GO_LATE_BOUND: &[&str] = &["and", "or"];

impl Funcs {
    /// Go's builtins plus all Sprig and Helm functions.
    pub fn helm() -> &'static Funcs {
        static FUNCS: LazyLock<Funcs> = LazyLock::new(|| Funcs {
            table: helm_table(),
            late_bound: HELM_LATE_BOUND,
        });
        &FUNCS
    }

    /// Go's builtins plus Sprig's `TxtFuncMap` (v3.3.0) without `env`, `expandenv` and `getHostByName`: the map
    /// Rancher Fleet gives `${ }` templates in fleet.yaml (its `tplFuncMap`, which also deletes `include` and `tpl`,
    /// names Sprig never had). Helm's additions (`toYaml`, `fromYaml`, `required`, `lookup`, `include`, `tpl`, …) are
    /// not in it, and `fromJson` is Sprig's (any JSON value, nil when the text is not JSON) rather than Helm's.
    pub fn sprig() -> &'static Funcs {
        static FUNCS: LazyLock<Funcs> = LazyLock::new(|| {
            let helm = helm_table();
            let mut table: Table = helm
                .into_iter()
                .filter(|(name, _)| {
                    (SPRIG.contains(name) || GO_BUILTINS.contains(name))
                        && !SPRIG_REMOVED.contains(name)
                })
                .collect();
            encoding::register_sprig_overrides(&mut table);
            Funcs {
                table,
                late_bound: GO_LATE_BOUND,
            }
        });
        &FUNCS
    }

    /// Go `text/template`'s builtins alone: a template parsed without a function map (Fleet's image-scan commit
    /// message).
    pub fn go() -> &'static Funcs {
        static FUNCS: LazyLock<Funcs> = LazyLock::new(|| Funcs {
            table: helm_table()
                .into_iter()
                .filter(|(name, _)| GO_BUILTINS.contains(name))
                .collect(),
            late_bound: GO_LATE_BOUND,
        });
        &FUNCS
    }

    /// The evaluator's own spelling of `name` when the evaluator binds it itself (lazy `and`/`or`; Helm's
    /// `include`/`tpl`).
    pub fn late_bound(&self, name: &str) -> Option<&'static str> {
        self.late_bound.iter().copied().find(|n| *n == name)
    }

    pub fn get(&self, name: &str) -> Option<Func> {
        self.table.get(name).copied()
    }

    /// The table's own (static) spelling of `name` and the function, if there is one.
    pub fn resolve(&self, name: &str) -> Option<(&'static str, Func)> {
        self.table.get_key_value(name).map(|(n, f)| (*n, *f))
    }

    pub fn contains(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &&'static str> {
        self.table.keys()
    }
}

fn helm_table() -> Table {
    let mut table = Table::default();
    builtins::register(&mut table);
    strings::register(&mut table);
    collections::register(&mut table);
    math::register(&mut table);
    encoding::register(&mut table);
    random::register(&mut table);
    crypto::register(&mut table);
    semver::register(&mut table);
    dates::register(&mut table);
    table
}

/// Go `text/template`'s builtin functions (`and`/`or` are late-bound).
const GO_BUILTINS: &[&str] = &[
    "call", "eq", "ge", "gt", "html", "index", "js", "le", "len", "lt", "ne", "not", "print",
    "printf", "println", "slice", "urlquery",
];

/// What Fleet deletes from Sprig's map (`env`/`expandenv` read the process environment, `getHostByName` asks DNS).
const SPRIG_REMOVED: &[&str] = &["env", "expandenv", "getHostByName"];

/// The names in Sprig v3.3.0's `TxtFuncMap` (the version Rancher Fleet builds with).
const SPRIG: &[&str] = &[
    "abbrev",
    "abbrevboth",
    "add",
    "add1",
    "add1f",
    "addf",
    "adler32sum",
    "ago",
    "all",
    "any",
    "append",
    "atoi",
    "b32dec",
    "b32enc",
    "b64dec",
    "b64enc",
    "base",
    "bcrypt",
    "biggest",
    "buildCustomCert",
    "camelcase",
    "cat",
    "ceil",
    "chunk",
    "clean",
    "coalesce",
    "compact",
    "concat",
    "contains",
    "date",
    "dateInZone",
    "dateModify",
    "date_in_zone",
    "date_modify",
    "decryptAES",
    "deepCopy",
    "deepEqual",
    "default",
    "derivePassword",
    "dict",
    "dig",
    "dir",
    "div",
    "divf",
    "duration",
    "durationRound",
    "empty",
    "encryptAES",
    "env",
    "expandenv",
    "ext",
    "fail",
    "first",
    "float64",
    "floor",
    "fromJson",
    "genCA",
    "genCAWithKey",
    "genPrivateKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "get",
    "getHostByName",
    "has",
    "hasKey",
    "hasPrefix",
    "hasSuffix",
    "hello",
    "htmlDate",
    "htmlDateInZone",
    "htpasswd",
    "indent",
    "initial",
    "initials",
    "int",
    "int64",
    "isAbs",
    "join",
    "kebabcase",
    "keys",
    "kindIs",
    "kindOf",
    "last",
    "list",
    "lower",
    "max",
    "maxf",
    "merge",
    "mergeOverwrite",
    "min",
    "minf",
    "mod",
    "mul",
    "mulf",
    "mustAppend",
    "mustChunk",
    "mustCompact",
    "mustDateModify",
    "mustDeepCopy",
    "mustFirst",
    "mustFromJson",
    "mustHas",
    "mustInitial",
    "mustLast",
    "mustMerge",
    "mustMergeOverwrite",
    "mustPrepend",
    "mustPush",
    "mustRegexFind",
    "mustRegexFindAll",
    "mustRegexMatch",
    "mustRegexReplaceAll",
    "mustRegexReplaceAllLiteral",
    "mustRegexSplit",
    "mustRest",
    "mustReverse",
    "mustSlice",
    "mustToDate",
    "mustToJson",
    "mustToPrettyJson",
    "mustToRawJson",
    "mustUniq",
    "mustWithout",
    "must_date_modify",
    "nindent",
    "nospace",
    "now",
    "omit",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "pick",
    "pluck",
    "plural",
    "prepend",
    "push",
    "quote",
    "randAlpha",
    "randAlphaNum",
    "randAscii",
    "randBytes",
    "randInt",
    "randNumeric",
    "regexFind",
    "regexFindAll",
    "regexMatch",
    "regexQuoteMeta",
    "regexReplaceAll",
    "regexReplaceAllLiteral",
    "regexSplit",
    "repeat",
    "replace",
    "rest",
    "reverse",
    "round",
    "semver",
    "semverCompare",
    "seq",
    "set",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "shuffle",
    "slice",
    "snakecase",
    "sortAlpha",
    "split",
    "splitList",
    "splitn",
    "squote",
    "sub",
    "subf",
    "substr",
    "swapcase",
    "ternary",
    "title",
    "toDate",
    "toDecimal",
    "toJson",
    "toPrettyJson",
    "toRawJson",
    "toString",
    "toStrings",
    "trim",
    "trimAll",
    "trimPrefix",
    "trimSuffix",
    "trimall",
    "trunc",
    "tuple",
    "typeIs",
    "typeIsLike",
    "typeOf",
    "uniq",
    "unixEpoch",
    "unset",
    "until",
    "untilStep",
    "untitle",
    "upper",
    "urlJoin",
    "urlParse",
    "uuidv4",
    "values",
    "without",
    "wrap",
    "wrapWith",
];

pub(crate) type Table = HashMap<&'static str, Func, BuildHasherDefault<NameHasher>>;

/// FNV-1a, for the function table: the lexer looks up every function name it meets, and SipHash (the default,
/// keyed against chosen collisions) costs several times more on such short keys. The table's keys are fixed, so no
/// input can crowd it.
pub(crate) struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, FuncError> {
    Err(FuncError::Msg(msg.into()))
}

/// Checks the argument count like Go's reflection-based call does.
pub(crate) fn arity(name: &str, args: &[Value], want: usize) -> Result<(), FuncError> {
    if args.len() != want {
        return err(format!(
            "wrong number of args for {name}: want {want} got {}",
            args.len()
        ));
    }
    Ok(())
}

pub(crate) fn at_least(name: &str, args: &[Value], want: usize) -> Result<(), FuncError> {
    if args.len() < want {
        return err(format!(
            "wrong number of args for {name}: want at least {want} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// Sprig's `strval`: strings as they are, everything else via `%v` (nil is `<nil>`).
pub(crate) fn strval(v: &Value) -> String {
    match v.kind() {
        ValueKind::String => v.as_str().unwrap_or_default().to_string(),
        ValueKind::Bytes => String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).into_owned(),
        _ => to_go_string(v),
    }
}

/// [`str_arg`] without copying when the value already is a string.
pub(crate) fn str_ref(v: &Value) -> std::borrow::Cow<'_, str> {
    match v.as_str() {
        Some(s) if v.kind() == ValueKind::String => std::borrow::Cow::Borrowed(s),
        _ => std::borrow::Cow::Owned(str_arg(v)),
    }
}

/// A string parameter: nil becomes "" (Go passes the zero value), other kinds print with `%v`.
pub fn str_arg(v: &Value) -> String {
    if crate::value::is_nil(v) {
        String::new()
    } else {
        strval(v)
    }
}

/// `cast.ToInt64`: numbers truncate, numeric strings parse, bools are 0/1, anything else is 0.
pub(crate) fn to_i64(v: &Value) -> i64 {
    match v.kind() {
        ValueKind::Number => {
            if v.is_integer() {
                v.as_i64()
                    .unwrap_or_else(|| u64::try_from(v.clone()).map(|u| u as i64).unwrap_or(0))
            } else {
                as_f64(v).map(|f| f as i64).unwrap_or(0)
            }
        }
        ValueKind::Bool => i64::from(v.is_true()),
        ValueKind::String => {
            let s = v.as_str().unwrap_or_default().trim();
            parse_go_int(s).unwrap_or(0)
        }
        _ => 0,
    }
}

/// `strconv.ParseInt(s, 0, 64)` as `cast` uses it: decimal, `0x`, `0o`, `0b`, leading-zero octal.
pub(crate) fn parse_go_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()?
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        lower.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// `cast.ToFloat64`.
pub(crate) fn to_f64(v: &Value) -> f64 {
    match v.kind() {
        ValueKind::Number => as_f64(v).unwrap_or(0.0),
        ValueKind::Bool => f64::from(u8::from(v.is_true())),
        ValueKind::String => v.as_str().unwrap_or_default().trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Sprig's `empty`: Go's zero-value test.
pub(crate) fn is_empty(v: &Value) -> bool {
    !crate::value::truthy(v)
}

#[cfg(test)]
mod tests {
    use super::Funcs;

    /// Every function Helm 4 offers templates (Sprig's `TxtFuncMap` minus `env`/`expandenv`, Go's builtins and
    /// Helm's own) is registered.
    #[test]
    fn helm_function_map_is_complete() {
        const HELM: &[&str] = &[
            "and",
            "or",
            "not",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "len",
            "index",
            "slice",
            "print",
            "printf",
            "println",
            "html",
            "js",
            "urlquery",
            "call",
            "include",
            "tpl",
            "required",
            "fail",
            "toYaml",
            "mustToYaml",
            "toYamlPretty",
            "fromYaml",
            "fromYamlArray",
            "toJson",
            "mustToJson",
            "fromJson",
            "fromJsonArray",
            "toToml",
            "lookup",
            "hello",
            "ago",
            "date",
            "date_in_zone",
            "date_modify",
            "dateInZone",
            "dateModify",
            "duration",
            "durationRound",
            "htmlDate",
            "htmlDateInZone",
            "must_date_modify",
            "mustDateModify",
            "mustToDate",
            "now",
            "toDate",
            "unixEpoch",
            "abbrev",
            "abbrevboth",
            "trunc",
            "trim",
            "upper",
            "lower",
            "title",
            "untitle",
            "substr",
            "repeat",
            "trimall",
            "trimAll",
            "trimSuffix",
            "trimPrefix",
            "nospace",
            "initials",
            "randAlphaNum",
            "randAlpha",
            "randAscii",
            "randNumeric",
            "swapcase",
            "shuffle",
            "snakecase",
            "camelcase",
            "kebabcase",
            "wrap",
            "wrapWith",
            "contains",
            "hasPrefix",
            "hasSuffix",
            "quote",
            "squote",
            "cat",
            "indent",
            "nindent",
            "replace",
            "plural",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "adler32sum",
            "toString",
            "atoi",
            "int64",
            "int",
            "float64",
            "seq",
            "toDecimal",
            "split",
            "splitList",
            "splitn",
            "toStrings",
            "until",
            "untilStep",
            "add1",
            "add",
            "sub",
            "div",
            "mod",
            "mul",
            "randInt",
            "add1f",
            "addf",
            "subf",
            "divf",
            "mulf",
            "biggest",
            "max",
            "min",
            "maxf",
            "minf",
            "ceil",
            "floor",
            "round",
            "join",
            "sortAlpha",
            "default",
            "empty",
            "coalesce",
            "all",
            "any",
            "compact",
            "mustCompact",
            "toPrettyJson",
            "toRawJson",
            "mustFromJson",
            "mustToPrettyJson",
            "mustToRawJson",
            "ternary",
            "deepCopy",
            "mustDeepCopy",
            "typeOf",
            "typeIs",
            "typeIsLike",
            "kindOf",
            "kindIs",
            "deepEqual",
            "getHostByName",
            "base",
            "dir",
            "clean",
            "ext",
            "isAbs",
            "osBase",
            "osClean",
            "osDir",
            "osExt",
            "osIsAbs",
            "b64enc",
            "b64dec",
            "b32enc",
            "b32dec",
            "tuple",
            "list",
            "dict",
            "get",
            "set",
            "unset",
            "hasKey",
            "pluck",
            "keys",
            "pick",
            "omit",
            "merge",
            "mergeOverwrite",
            "mustMerge",
            "mustMergeOverwrite",
            "values",
            "append",
            "push",
            "mustAppend",
            "mustPush",
            "prepend",
            "mustPrepend",
            "first",
            "mustFirst",
            "rest",
            "mustRest",
            "last",
            "mustLast",
            "initial",
            "mustInitial",
            "reverse",
            "mustReverse",
            "uniq",
            "mustUniq",
            "without",
            "mustWithout",
            "has",
            "mustHas",
            "mustSlice",
            "concat",
            "dig",
            "chunk",
            "mustChunk",
            "bcrypt",
            "htpasswd",
            "genPrivateKey",
            "derivePassword",
            "buildCustomCert",
            "genCA",
            "genCAWithKey",
            "genSelfSignedCert",
            "genSelfSignedCertWithKey",
            "genSignedCert",
            "genSignedCertWithKey",
            "encryptAES",
            "decryptAES",
            "randBytes",
            "uuidv4",
            "semver",
            "semverCompare",
            "regexMatch",
            "mustRegexMatch",
            "regexFindAll",
            "mustRegexFindAll",
            "regexFind",
            "mustRegexFind",
            "regexReplaceAll",
            "mustRegexReplaceAll",
            "regexReplaceAllLiteral",
            "mustRegexReplaceAllLiteral",
            "regexSplit",
            "mustRegexSplit",
            "regexQuoteMeta",
            "urlParse",
            "urlJoin",
        ];
        let late_bound = super::HELM_LATE_BOUND;
        let missing: Vec<&&str> = HELM
            .iter()
            .filter(|n| !late_bound.contains(n) && !Funcs::helm().contains(n))
            .collect();
        assert!(missing.is_empty(), "missing functions: {missing:?}");
        assert!(!Funcs::helm().contains("env") && !Funcs::helm().contains("expandenv"));
    }

    /// Go's map: the builtins and nothing else.
    #[test]
    fn go_function_map_is_the_builtins() {
        let go = Funcs::go();
        let mut names: Vec<&&str> = go.names().collect();
        names.sort();
        let mut builtins: Vec<&&str> = super::GO_BUILTINS.iter().collect();
        builtins.sort();
        assert_eq!(names, builtins);
        assert_eq!(go.late_bound("and"), Some("and"));
        assert!(!go.contains("upper") && !go.contains("include"));
    }

    /// Fleet's map: every Sprig v3.3.0 function and Go builtin but the three Fleet deletes, none of Helm's
    /// additions.
    #[test]
    fn sprig_function_map_is_fleets() {
        let sprig = Funcs::sprig();
        let missing: Vec<&&str> = super::SPRIG
            .iter()
            .chain(super::GO_BUILTINS)
            .filter(|n| !super::SPRIG_REMOVED.contains(n) && !sprig.contains(n))
            .collect();
        assert!(missing.is_empty(), "missing functions: {missing:?}");
        for name in [
            "env",
            "expandenv",
            "getHostByName",
            "toYaml",
            "fromYaml",
            "required",
            "lookup",
            "include",
            "tpl",
        ] {
            assert!(
                !sprig.contains(name) && sprig.late_bound(name).is_none(),
                "{name}"
            );
        }
        assert_eq!(sprig.late_bound("and"), Some("and"));
        assert_eq!(Funcs::helm().late_bound("tpl"), Some("tpl"));
    }
}
