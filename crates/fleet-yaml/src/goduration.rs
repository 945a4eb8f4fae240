//! Go's `time.ParseDuration`, the one parser of duration strings in the workspace (GitRepo `pollingInterval`,
//! registration token `ttl`, Sprig's `dateModify` and `durationRound`): an optional sign, then one or more
//! decimal numbers each followed by a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`), e.g. `300ms`, `-1.5h`,
//! `2h45m`; `0` alone needs no unit.

/// Parses a Go duration into nanoseconds; `None` when Go would reject it (or it overflows Go's `int64`).
pub fn parse_nanos(text: &str) -> Option<i64> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&len| len > 0)?;
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos_per_unit = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * nanos_per_unit;
        rest = &rest[unit_len..];
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let nanos = total.round() as i64;
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::parse_nanos;

    #[test]
    fn accepts_what_go_accepts() {
        let second = 1_000_000_000;
        assert_eq!(parse_nanos("15s"), Some(15 * second));
        assert_eq!(parse_nanos("1h30m"), Some(5400 * second));
        assert_eq!(parse_nanos("1.5m"), Some(90 * second));
        assert_eq!(parse_nanos("250ms"), Some(250_000_000));
        assert_eq!(parse_nanos("3us"), Some(3_000));
        assert_eq!(parse_nanos("3µs"), Some(3_000));
        assert_eq!(parse_nanos("-1h30m"), Some(-5400 * second));
        assert_eq!(parse_nanos("+2s"), Some(2 * second));
        assert_eq!(parse_nanos("0"), Some(0));
        assert_eq!(parse_nanos("-0"), Some(0));
    }

    #[test]
    fn rejects_what_go_rejects() {
        for bad in [
            "",
            "-",
            "15",
            "s",
            "1d",
            "1h x",
            " 1s",
            "1s ",
            ".s",
            "9999999999h",
        ] {
            assert_eq!(parse_nanos(bad), None, "{bad:?}");
        }
    }
}
