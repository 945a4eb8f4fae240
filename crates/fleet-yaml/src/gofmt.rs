//! Go's shortest float formatting (`strconv.FormatFloat(f, 'g'|'e'|'f', -1, 32|64)`), shared by key conversion,
//! the Helm emitter and the Go JSON encoder.

/// Shortest decimal digits of a finite, non-zero float and the position of the decimal point:
/// value = 0.DIGITS × 10^point.
struct Decimal {
    negative: bool,
    digits: String,
    point: i32,
}

fn decimal(text: &str) -> Decimal {
    // `text` is Rust's `{:e}` output, e.g. `-1.2345e-7`: shortest round-trip digits.
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = rest.split_once('e').unwrap_or((rest, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    Decimal {
        negative,
        digits: digits.to_string(),
        point: exponent + 1,
    }
}

fn shortest(f: f64, bits32: bool) -> Decimal {
    if bits32 {
        #[allow(clippy::cast_possible_truncation)]
        decimal(&format!("{:e}", f as f32))
    } else {
        decimal(&format!("{f:e}"))
    }
}

fn fmt_e(d: &Decimal) -> String {
    let mut out = String::new();
    if d.negative {
        out.push('-');
    }
    out.push_str(&d.digits[..1]);
    if d.digits.len() > 1 {
        out.push('.');
        out.push_str(&d.digits[1..]);
    }
    let exp = if d.digits == "0" { 0 } else { d.point - 1 };
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let abs = exp.unsigned_abs();
    if abs < 10 {
        out.push('0');
    }
    out.push_str(&abs.to_string());
    out
}

fn fmt_f(d: &Decimal) -> String {
    let mut out = String::new();
    if d.negative {
        out.push('-');
    }
    let nd = i32::try_from(d.digits.len()).unwrap_or(i32::MAX);
    if d.digits == "0" {
        out.push('0');
    } else if d.point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', d.point.unsigned_abs() as usize));
        out.push_str(&d.digits);
    } else if d.point >= nd {
        out.push_str(&d.digits);
        out.extend(std::iter::repeat_n('0', (d.point - nd) as usize));
    } else {
        let (int, frac) = d.digits.split_at(d.point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
    out
}

fn special(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)` (or 32 with `bits32`): `1e+06`, `0.5`, `1.5e-07`, `100000`.
pub fn format_g(f: f64, bits32: bool) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let d = shortest(f, bits32);
    // Go uses %e when the exponent is below -4 or, at shortest precision, from 6 up.
    let exp = d.point - 1;
    if !(-4..6).contains(&exp) {
        fmt_e(&d)
    } else {
        fmt_f(&d)
    }
}

/// A float mapping key as sigs.k8s.io/yaml writes it into JSON: `%g` at 32-bit precision, `.inf`, `.nan`.
pub fn yaml_key_float(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f == f64::INFINITY {
        ".inf".into()
    } else if f == f64::NEG_INFINITY {
        "-.inf".into()
    } else {
        format_g(f, true)
    }
}

/// A float64 as Go's `encoding/json` writes it: plain decimal, exponent form below 1e-6 or from 1e21.
pub fn json_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let d = shortest(f, false);
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let s = fmt_e(&d);
        // Go trims a leading zero from a negative two-digit exponent: e-07 → e-7.
        match s.split_once("e-0") {
            Some((m, e)) if e.len() == 1 => format!("{m}e-{e}"),
            _ => s,
        }
    } else {
        fmt_f(&d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_go() {
        for (f, want) in [
            (1e6, "1e+06"),
            (100000.0, "100000"),
            (0.5, "0.5"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (123456789.5, "1.234567895e+08"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (3.0, "3"),
        ] {
            assert_eq!(format_g(f, false), want, "{f}");
        }
        assert_eq!(format_g(0.1, true), "0.1");
        assert_eq!(format_g(std::f64::consts::PI, true), "3.1415927");
    }

    #[test]
    fn json_format_matches_go() {
        for (f, want) in [
            (1e6, "1000000"),
            (0.5, "0.5"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (1e21, "1e+21"),
            (1.2345678901234567e19, "12345678901234567000"),
            (-0.25, "-0.25"),
            (1e-10, "1e-10"),
            (5.0, "5"),
        ] {
            assert_eq!(json_float(f), want, "{f}");
        }
    }
}
