//! Kubernetes resource quantities (`4`, `250m`, `1.5Gi`, `2e3`) parsed to `f64` for the
//! property comparisons and sorters of placement policies. Binary suffixes (Ki, Mi, Gi, Ti, Pi,
//! Ei) are powers of 1024, decimal ones (n, u, m, k, M, G, T, P, E) powers of 1000.

/// Parses a quantity; `None` when the text is not one.
pub fn parse_quantity(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1024.0 * 1024.0),
        ("Gi", 1024.0 * 1024.0 * 1024.0),
        ("Ti", 1024f64 * 1024.0 * 1024.0 * 1024.0),
        ("Pi", 1024f64 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("Ei", 1024f64 * 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(suffix, factor)| t.strip_suffix(suffix).map(|n| (n, *factor)))
        .unwrap_or((t, 1.0));
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
        ];
        for (text, want) in cases {
            assert_eq!(parse_quantity(text), want, "{text:?}");
        }
    }
}
