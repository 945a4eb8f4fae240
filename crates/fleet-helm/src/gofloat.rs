//! Go's float64 formatting (`strconv.FormatFloat` with `g` and `e`): shortest round-trip digits, Go's
//! exponent form (`1e+06`, `2.5e-07`) and precision handling. Used by `fmt` printing and by values shown as text.

/// Splits a finite float into its shortest round-trip decimal digits and the exponent of the first digit.
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits.to_string()
    };
    (digits, exp.parse().unwrap_or(0))
}

fn exp_suffix(exp: i32) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("e{sign}{:02}", exp.abs())
}

/// Go's `%g`/`%v` for float64 (`strconv.FormatFloat(f, 'g', prec, 64)`).
pub fn format_float_g(f: f64, prec: Option<usize>) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let neg = f.is_sign_negative() && f != 0.0;
    let (digits, exp, eprec) = match prec {
        None => {
            let (d, e) = shortest_digits(f);
            (d, e, 6)
        }
        Some(p) => {
            let p = p.max(1);
            let s = format!("{:.*e}", p - 1, f.abs());
            let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
            let d: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
            let d = d.trim_end_matches('0');
            let d = if d.is_empty() {
                "0".to_string()
            } else {
                d.to_string()
            };
            let mut eprec = p as i32;
            if eprec > d.len() as i32 && d.len() as i32 > e.parse::<i32>().unwrap_or(0) {
                eprec = d.len() as i32;
            }
            (d, e.parse().unwrap_or(0), eprec)
        }
    };
    let body = if exp < -4 || exp >= eprec {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        m + &exp_suffix(exp)
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{digits}{}", "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    } else {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    };
    if neg { format!("-{body}") } else { body }
}

/// Go's `%e` with a precision.
pub(crate) fn format_float_e(f: f64, prec: usize) -> String {
    let s = format!("{:.*e}", prec, f);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{mant}{}", exp_suffix(exp.parse().unwrap_or(0)))
}
