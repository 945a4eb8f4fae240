//! Sprig's date functions (`now`, `date`, `dateInZone`, `htmlDate`, `htmlDateInZone`, `unixEpoch`, `dateModify`,
//! `ago`, `toDate`, `duration`) with Go's reference-time layouts (`2006-01-02T15:04:05Z07:00`). Times are a
//! minijinja object printing like Go's `time.Time`. Zones other than `UTC`/`Local` are treated as UTC.

use std::sync::Arc;

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};
use minijinja::value::{Object, ObjectRepr};

use super::{Table, arity, err, str_arg, to_i64};
use crate::value::Value;

/// A Go `time.Time`.
#[derive(Debug, Clone)]
pub struct GoTime(pub DateTime<FixedOffset>);

impl Object for GoTime {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_go(
            &self.0,
            "2006-01-02 15:04:05.999999999 -0700 MST",
        ))
    }
}

fn time_arg(v: &Value) -> DateTime<FixedOffset> {
    if let Some(t) = v.downcast_object_ref::<GoTime>() {
        return t.0;
    }
    let secs = to_i64(v);
    Utc.timestamp_opt(secs, 0)
        .single()
        .unwrap_or_default()
        .fixed_offset()
}

/// Formats with a Go layout.
pub fn format_go(t: &DateTime<FixedOffset>, layout: &str) -> String {
    let mut out = String::new();
    let mut rest = layout;
    // Longest tokens first, as Go's `nextStdChunk` recognises them.
    const TOKENS: &[&str] = &[
        "January",
        "Monday",
        "2006",
        "-07:00:00",
        "-07:00",
        "-0700",
        "-07",
        "Z07:00:00",
        "Z07:00",
        "Z0700",
        "Z07",
        ".000000000",
        ".999999999",
        ".000000",
        ".999999",
        ".000",
        ".999",
        "Jan",
        "Mon",
        "MST",
        "01",
        "02",
        "03",
        "04",
        "05",
        "06",
        "15",
        "PM",
        "pm",
        "_2",
        "1",
        "2",
        "3",
        "4",
        "5",
    ];
    'outer: while !rest.is_empty() {
        for tok in TOKENS {
            if let Some(after) = rest.strip_prefix(tok) {
                let off = t.offset().local_minus_utc();
                let sign = if off < 0 { '-' } else { '+' };
                let (oh, om) = (off.abs() / 3600, off.abs() % 3600 / 60);
                let piece = match *tok {
                    "January" => t.format("%B").to_string(),
                    "Monday" => t.format("%A").to_string(),
                    "2006" => t.format("%Y").to_string(),
                    "Jan" => t.format("%b").to_string(),
                    "Mon" => t.format("%a").to_string(),
                    "MST" => {
                        if off == 0 {
                            "UTC".to_string()
                        } else {
                            format!("{sign}{oh:02}{om:02}")
                        }
                    }
                    "01" => t.format("%m").to_string(),
                    "02" => t.format("%d").to_string(),
                    "03" => t.format("%I").to_string(),
                    "04" => t.format("%M").to_string(),
                    "05" => t.format("%S").to_string(),
                    "06" => t.format("%y").to_string(),
                    "15" => t.format("%H").to_string(),
                    "PM" => t.format("%p").to_string(),
                    "pm" => t.format("%P").to_string(),
                    "_2" => t.format("%e").to_string(),
                    "1" => t.format("%-m").to_string(),
                    "2" => t.format("%-d").to_string(),
                    "3" => t.format("%-I").to_string(),
                    "4" => t.format("%-M").to_string(),
                    "5" => t.format("%-S").to_string(),
                    z if z.starts_with('Z') && off == 0 => "Z".to_string(),
                    "-07:00" | "Z07:00" | "-07:00:00" | "Z07:00:00" => {
                        format!("{sign}{oh:02}:{om:02}")
                    }
                    "-0700" | "Z0700" => format!("{sign}{oh:02}{om:02}"),
                    "-07" | "Z07" => format!("{sign}{oh:02}"),
                    frac => {
                        let digits = frac.len() - 1;
                        let nanos = format!("{:09}", t.timestamp_subsec_nanos());
                        let mut d = nanos[..digits].to_string();
                        if frac.as_bytes()[1] == b'9' {
                            d = d.trim_end_matches('0').to_string();
                            if d.is_empty() {
                                rest = after;
                                continue 'outer;
                            }
                        }
                        format!(".{d}")
                    }
                };
                out.push_str(&piece);
                rest = after;
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Parses Go duration strings (`1h30m`, `-5m`, `300ms`).
fn parse_duration(s: &str) -> Option<Duration> {
    fleet_yaml::goduration::parse_nanos(s).map(Duration::nanoseconds)
}

/// Go's `time.Duration.String()` for whole seconds and above (`1h0m0s`, `2m5s`, `0s`).
fn duration_string(secs: i64) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let neg = secs < 0;
    let s = secs.unsigned_abs();
    let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
    let body = if h > 0 {
        format!("{h}h{m}m{sec}s")
    } else if m > 0 {
        format!("{m}m{sec}s")
    } else {
        format!("{sec}s")
    };
    if neg { format!("-{body}") } else { body }
}

/// Sprig's `durationRound`: the largest unit only (`2h`, `3d`, `1y`).
fn duration_round(secs: i64) -> String {
    let s = secs.unsigned_abs();
    let neg = if secs < 0 { "-" } else { "" };
    let (y, mo, d, h, m) = (31_536_000, 2_592_000, 86_400, 3_600, 60);
    let body = if s >= y {
        format!("{}y", s / y)
    } else if s >= mo {
        format!("{}mo", s / mo)
    } else if s >= d {
        format!("{}d", s / d)
    } else if s >= h {
        format!("{}h", s / h)
    } else if s >= m {
        format!("{}m", s / m)
    } else {
        format!("{s}s")
    };
    format!("{neg}{body}")
}

fn go_time(t: DateTime<FixedOffset>) -> Value {
    Value::from_object(GoTime(t))
}

pub(super) fn register(t: &mut Table) {
    t.insert("now", |_, a| {
        arity("now", a, 0)?;
        Ok(go_time(Utc::now().fixed_offset()))
    });
    t.insert("date", |_, a| {
        arity("date", a, 2)?;
        Ok(Value::from(format_go(&time_arg(&a[1]), &str_arg(&a[0]))))
    });
    t.insert("htmlDate", |_, a| {
        arity("htmlDate", a, 1)?;
        Ok(Value::from(format_go(&time_arg(&a[0]), "2006-01-02")))
    });
    for name in ["dateInZone", "date_in_zone"] {
        t.insert(name, |_, a| {
            arity("dateInZone", a, 3)?;
            Ok(Value::from(format_go(
                &time_arg(&a[1]).with_timezone(&Utc).fixed_offset(),
                &str_arg(&a[0]),
            )))
        });
    }
    t.insert("htmlDateInZone", |_, a| {
        arity("htmlDateInZone", a, 2)?;
        Ok(Value::from(format_go(
            &time_arg(&a[0]).with_timezone(&Utc).fixed_offset(),
            "2006-01-02",
        )))
    });
    t.insert("unixEpoch", |_, a| {
        arity("unixEpoch", a, 1)?;
        Ok(Value::from(time_arg(&a[0]).timestamp().to_string()))
    });
    for name in [
        "dateModify",
        "mustDateModify",
        "date_modify",
        "must_date_modify",
    ] {
        t.insert(name, |_, a| {
            arity("dateModify", a, 2)?;
            match parse_duration(&str_arg(&a[0])) {
                Some(d) => Ok(go_time(time_arg(&a[1]) + d)),
                None => err(format!("time: invalid duration {:?}", str_arg(&a[0]))),
            }
        });
    }
    t.insert("ago", |_, a| {
        arity("ago", a, 1)?;
        let secs = (Utc::now().fixed_offset() - time_arg(&a[0])).num_seconds();
        Ok(Value::from(duration_string(secs)))
    });
    t.insert("durationRound", |_, a| {
        arity("durationRound", a, 1)?;
        let secs = match a[0].downcast_object_ref::<GoTime>() {
            Some(t) => (Utc::now().fixed_offset() - t.0).num_seconds(),
            None => match a[0].as_str() {
                Some(s) => parse_duration(s).map(|d| d.num_seconds()).unwrap_or(0),
                None => to_i64(&a[0]),
            },
        };
        Ok(Value::from(duration_round(secs)))
    });
    t.insert("duration", |_, a| {
        arity("duration", a, 1)?;
        Ok(Value::from(duration_string(to_i64(&a[0]))))
    });
    for name in ["toDate", "mustToDate"] {
        t.insert(name, |_, a| {
            arity("toDate", a, 2)?;
            let s = str_arg(&a[1]);
            let parsed = DateTime::parse_from_rfc3339(&s)
                .ok()
                .or_else(|| {
                    NaiveDateTime::parse_from_str(&s, "%Y-%m-%d %H:%M:%S")
                        .ok()
                        .map(|n| n.and_utc().fixed_offset())
                })
                .or_else(|| {
                    NaiveDate::parse_from_str(&s, "%Y-%m-%d")
                        .ok()
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                        .map(|n| n.and_utc().fixed_offset())
                });
            match parsed {
                Some(t) => Ok(go_time(t)),
                None => err(format!("parsing time {s:?}: cannot parse")),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_layouts() {
        let t = DateTime::parse_from_rfc3339("2024-03-05T07:08:09.120Z").unwrap();
        assert_eq!(
            format_go(&t, "2006-01-02T15:04:05Z07:00"),
            "2024-03-05T07:08:09Z"
        );
        assert_eq!(format_go(&t, "Jan _2 3:04PM .000"), "Mar  5 7:08AM .120");
        assert_eq!(duration_string(3600), "1h0m0s");
        assert_eq!(parse_duration("-1h30m"), Some(-Duration::minutes(90)));
    }
}
