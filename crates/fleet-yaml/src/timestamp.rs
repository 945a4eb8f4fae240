//! go-yaml's timestamp scalars (`2006-1-2`, `2006-1-2 15:4:5.999999999`, `2006-1-2T15:4:5.999999999Z07:00`):
//! recognising them (the emitter quotes such strings) and printing them as Go's `time.Time` JSON does
//! (RFC 3339 with nanoseconds, what kustomize outputs for an unquoted date).

/// Hour, minute, second and the digits of the fraction of a second.
type Clock<'a> = (u32, u32, u32, &'a str);

/// A parsed timestamp, fields as written.
pub(crate) struct Timestamp<'a> {
    year: u32,
    month: u32,
    day: u32,
    time: Option<Clock<'a>>,
    zone: Option<&'a str>,
}

fn number(s: &str, min_len: usize, max_len: usize) -> Option<(u32, &str)> {
    let len = s.bytes().take_while(u8::is_ascii_digit).count();
    if len < min_len || len > max_len {
        return None;
    }
    Some((s[..len].parse().ok()?, &s[len..]))
}

fn days_in_month(year: u32, month: u32) -> Option<u32> {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => Some(31),
        4 | 6 | 9 | 11 => Some(30),
        2 if leap => Some(29),
        2 => Some(28),
        _ => None,
    }
}

/// Hour, minute, second and the fraction digits, then the rest.
fn clock(s: &str) -> Option<(Clock<'_>, &str)> {
    let (hour, rest) = number(s, 1, 2)?;
    let (minute, rest) = number(rest.strip_prefix(':')?, 1, 2)?;
    let (second, mut rest) = number(rest.strip_prefix(':')?, 1, 2)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut fraction = "";
    if let Some(after) = rest.strip_prefix('.') {
        let len = after.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        fraction = &after[..len];
        rest = &after[len..];
    }
    Some(((hour, minute, second, fraction), rest))
}

fn zone(s: &str) -> bool {
    if s == "Z" {
        return true;
    }
    let Some(rest) = s.strip_prefix(['+', '-']) else {
        return false;
    };
    let Some((hours, rest)) = number(rest, 2, 2) else {
        return false;
    };
    let minutes = rest.strip_prefix(':').and_then(|r| number(r, 2, 2));
    hours < 24 && matches!(minutes, Some((m, "")) if m < 60)
}

/// Parses one of go-yaml's timestamp forms.
pub(crate) fn parse(s: &str) -> Option<Timestamp<'_>> {
    let (year, rest) = number(s, 4, 4)?;
    let (month, rest) = number(rest.strip_prefix('-')?, 1, 2)?;
    let (day, rest) = number(rest.strip_prefix('-')?, 1, 2)?;
    if !(1..=days_in_month(year, month)?).contains(&day) {
        return None;
    }
    let date = Timestamp {
        year,
        month,
        day,
        time: None,
        zone: None,
    };
    if rest.is_empty() {
        return Some(date);
    }
    if let Some(t) = rest.strip_prefix(['T', 't']) {
        let (time, zone_text) = clock(t)?;
        return zone(zone_text).then_some(Timestamp {
            time: Some(time),
            zone: Some(zone_text),
            ..date
        });
    }
    let (time, rest) = clock(rest.strip_prefix(' ')?)?;
    rest.is_empty().then_some(Timestamp {
        time: Some(time),
        ..date
    })
}

impl Timestamp<'_> {
    /// Go's `time.Time` JSON text: `2006-01-02T15:04:05.999999999Z07:00` (trailing zeros of the fraction
    /// dropped, `Z` for UTC).
    pub(crate) fn to_rfc3339(&self) -> String {
        let (hour, minute, second, fraction) = self.time.unwrap_or((0, 0, 0, ""));
        let mut fraction = fraction
            .get(..9)
            .unwrap_or(fraction)
            .trim_end_matches('0')
            .to_string();
        if !fraction.is_empty() {
            fraction.insert(0, '.');
        }
        let zone = match self.zone {
            None | Some("Z" | "+00:00" | "-00:00") => "Z",
            Some(z) => z,
        };
        format!(
            "{:04}-{:02}-{:02}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}",
            self.year, self.month, self.day
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_json_text() {
        let json = |s: &str| parse(s).map(|t| t.to_rfc3339());
        assert_eq!(json("2024-01-01").as_deref(), Some("2024-01-01T00:00:00Z"));
        assert_eq!(json("2024-1-2").as_deref(), Some("2024-01-02T00:00:00Z"));
        assert_eq!(
            json("2001-12-14 21:59:43.10").as_deref(),
            Some("2001-12-14T21:59:43.1Z")
        );
        assert_eq!(
            json("2024-01-01T10:00:00+01:00").as_deref(),
            Some("2024-01-01T10:00:00+01:00")
        );
        assert_eq!(
            json("2024-01-01t10:00:00Z").as_deref(),
            Some("2024-01-01T10:00:00Z")
        );
        for bad in [
            "2024-13-01",
            "2024-02-30",
            "20240101",
            "2024-01-01T10:00:00",
            "2024-01-01 25:00:00",
            "24-01-01",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
}
