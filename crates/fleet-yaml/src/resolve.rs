//! go-yaml's resolution of plain scalars, shared by both Go YAML libraries we follow: the boolean, null and
//! non-finite spellings, and numbers (Go's `strconv.ParseInt`/`ParseUint` with base prefixes `0x`, `0o`, `0b` and
//! legacy octal `0755` after dropping underscores, then its float pattern). serde-saphyr reads most numbers itself;
//! the parser uses this for the spellings it leaves as text (`1_000.5`, `1_000_`), the emitter to know which
//! strings need quotes.

use serde_json::Number;

use crate::gofmt;

/// Spellings go-yaml v2 reads as booleans (serde-saphyr also accepts other case mixes, such as `yEs`).
pub(crate) const V2_BOOLEANS: [&str; 22] = [
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no", "No",
    "NO", "false", "False", "FALSE", "off", "Off", "OFF",
];

/// Spellings go-yaml v3 reads as booleans.
pub(crate) const V3_BOOLEANS: [&str; 6] = ["true", "True", "TRUE", "false", "False", "FALSE"];

/// Spellings go-yaml reads as null.
pub(crate) const NULLS: [&str; 5] = ["", "~", "null", "Null", "NULL"];

/// Spellings go-yaml reads as infinities and NaN (which JSON, hence Helm and kubectl, cannot carry).
pub(crate) const NON_FINITE: [&str; 12] = [
    ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN",
    ".NAN",
];

/// Whether `s` starts as every number, sexagesimal and timestamp spelling does: with a digit, a sign or a dot.
pub(crate) fn starts_like_number(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
}

/// A plain scalar as go-yaml reads it, when that is a number.
pub(crate) fn number(s: &str) -> Option<Number> {
    if !starts_like_number(s) {
        return None;
    }
    let plain: std::borrow::Cow<str> = if s.contains('_') {
        s.chars().filter(|&c| c != '_').collect::<String>().into()
    } else {
        s.into()
    };
    int(&plain).or_else(|| float(&plain).and_then(Number::from_f64))
}

/// Go's `strconv.ParseInt(s, 0, 64)`, else `ParseUint(s, 0, 64)`.
pub(crate) fn int(s: &str) -> Option<Number> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (Some(false), &s[1..]),
        Some(b'-') => (Some(true), &s[1..]),
        _ => (None, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    match negative {
        None => Some(i64::try_from(magnitude).map_or(Number::from(magnitude), Number::from)),
        Some(false) => i64::try_from(magnitude).ok().map(Number::from),
        Some(true) if magnitude == 1 << 63 => Some(Number::from(i64::MIN)),
        Some(true) => i64::try_from(magnitude).ok().map(|m| Number::from(-m)),
    }
}

/// A number as Go reads back its own JSON text (`json.Marshal`, then go-yaml or `json.Unmarshal` into an integer
/// field): floats print in plain decimal below 1e21, so integral ones come back as integers (`1.0` → `1`,
/// `-0.0` → `0`, `1e6` → `1000000`); others stay floats.
pub(crate) fn go_json_number(n: &Number) -> Number {
    match n.as_f64().filter(|_| n.is_f64()) {
        // Below 2^53 every integer is a float, so an integral float prints as exactly its integer.
        Some(f) if f.fract() == 0.0 && f.abs() < EXACT_INTEGERS => Number::from(f as i64),
        Some(f) => go_json_float(f).unwrap_or_else(|| n.clone()),
        None => n.clone(),
    }
}

/// 2^53: integers of smaller magnitude are exactly representable as floats.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// A float read back from Go's JSON text as an integer, when it prints as one.
fn go_json_float(f: f64) -> Option<Number> {
    int(&gofmt::json_float(f))
}

/// go-yaml's float pattern `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, with a finite value.
pub(crate) fn float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return None;
        }
    } else {
        if digits(&mut i) == 0 {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    #[test]
    fn integral_floats_read_back_as_their_printed_integers() {
        let mut floats = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            1e6,
            -1e15,
            8080.0,
            2f64.powi(52) + 1.0,
        ];
        floats.extend([
            EXACT_INTEGERS - 1.0,
            -(EXACT_INTEGERS - 1.0),
            EXACT_INTEGERS,
            1e20,
            1e21,
            0.5,
        ]);
        let mut x = 1.0f64;
        while x < 1e22 {
            floats.extend([x.floor(), -x.floor(), x.floor() + 1.0]);
            x *= 1.37;
        }
        for f in floats {
            let n = Number::from_f64(f).unwrap();
            let printed = go_json_float(f).unwrap_or_else(|| n.clone());
            assert_eq!(go_json_number(&n), printed, "{f}");
        }
    }

    use serde_json::json;

    use super::*;

    #[test]
    fn go_yaml_numbers() {
        let n = |s: &str| number(s).map(serde_json::Value::Number);
        assert_eq!(n("0755"), Some(json!(493)));
        assert_eq!(n("0o17"), Some(json!(15)));
        assert_eq!(n("-0x1F"), Some(json!(-31)));
        assert_eq!(n("0b101"), Some(json!(5)));
        assert_eq!(n("1_000"), Some(json!(1000)));
        assert_eq!(n("1_000_"), Some(json!(1000)));
        assert_eq!(n("1_000.5"), Some(json!(1000.5)));
        assert_eq!(n("08"), Some(json!(8.0)));
        assert_eq!(n("-9223372036854775808"), Some(json!(i64::MIN)));
        assert_eq!(n("18446744073709551615"), Some(json!(u64::MAX)));
        assert_eq!(
            n("18446744073709551616"),
            Some(json!(18446744073709551616.0))
        );
        assert_eq!(n(".5"), Some(json!(0.5)));
        for text in [
            "1e", "0x", "1.2.3", "+", ".x", "1e999", "abc", "0b2", "12e", "1:20",
        ] {
            assert_eq!(n(text), None, "{text}");
        }
    }
}
