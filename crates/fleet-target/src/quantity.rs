//! Kubernetes resource quantities (`4`, `250m`, `1.5Gi`, `2e3`) parsed to `f64` for the
//! property comparisons and sorters of placement policies. Binary suffixes (Ki, Mi, Gi, Ti, Pi,
//! Ei) are powers of 1024, decimal ones (n, u, m, k, M, G, T, P, E) powers of 1000.

/// Parses a quantity; `None` when the text is not one.
pub fn parse_quantity(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let (number, factor) = split_suffix(t);
    let valid = !number.is_empty()
        && number
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E'))
        && number.chars().any(|c| c.is_ascii_digit());
    if !valid {
        return None;
    }
    number
        .parse::<f64>()
        .ok()
        .map(|n| n * factor)
        .filter(|v| v.is_finite())
}

/// Splits a binary (`Ki`…`Ei`) or decimal (`n`…`E`) suffix off, with its factor.
fn split_suffix(t: &str) -> (&str, f64) {
    const BINARY: [(u8, i32); 6] = [
        (b'K', 1),
        (b'M', 2),
        (b'G', 3),
        (b'T', 4),
        (b'P', 5),
        (b'E', 6),
    ];
    const DECIMAL: [(u8, i32); 9] = [
        (b'n', -9),
        (b'u', -6),
        (b'm', -3),
        (b'k', 3),
        (b'M', 6),
        (b'G', 9),
        (b'T', 12),
        (b'P', 15),
        (b'E', 18),
    ];
    let bytes = t.as_bytes();
    match bytes {
        [.., unit, b'i'] => match BINARY.iter().find(|(u, _)| u == unit) {
            Some((_, power)) => (&t[..t.len() - 2], 1024f64.powi(*power)),
            None => (t, 1.0),
        },
        [.., last] => match DECIMAL.iter().find(|(u, _)| u == last) {
            Some((_, exp)) => (&t[..t.len() - 1], 10f64.powi(*exp)),
            None => (t, 1.0),
        },
        [] => (t, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantity_table() {
        let cases = [
            ("4", Some(4.0)),
            ("250m", Some(0.25)),
            ("1Ki", Some(1024.0)),
            ("1.5Gi", Some(1.5 * 1024.0 * 1024.0 * 1024.0)),
            ("2k", Some(2000.0)),
            ("2e3", Some(2000.0)),
            ("-1", Some(-1.0)),
            (" 8 ", Some(8.0)),
            ("", None),
            ("abc", None),
            ("1X", None),
            ("Gi", None),
            ("1Xi", None),
            ("2E", Some(2e18)),
            ("1e3m", Some(1.0)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_quantity(text), want, "{text:?}");
        }
    }
}
