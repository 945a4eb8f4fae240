//! Go `fmt` printing of template values: `%v` for every kind (`map[a:1 b:2]`, `[x y]`, floats as `1e+06`), `Sprint`,
//! `Sprintln`, `Sprintf` with Go's verbs, flags, width and precision, `%!verb(type=value)` for mismatches, and
//! `strconv.Quote`.

use minijinja::value::ValueKind;

use crate::gofloat::{format_float_e, format_float_g};
use crate::value::{MAX_DEPTH, Value, as_f64, as_list, as_map, type_name};

/// `fmt.Sprint("%v", v)`.
pub fn to_go_string(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0);
    out
}

/// Largest `printf` width or precision honoured (Go allows up to 10^6).
const MAX_WIDTH: usize = u16::MAX as usize;

/// Longest text one printed value may take. Values that share parts (`$x = list $x $x` thirty times) expand to
/// exponential size when printed; past this the rest is printed as `...` (and `toJson` fails), so a hostile
/// template cannot exhaust memory (found by fuzzing).
pub const MAX_PRINT: usize = 4 << 20;

fn write_value(out: &mut String, v: &Value, depth: usize) {
    if depth > MAX_DEPTH || out.len() > MAX_PRINT {
        out.push_str("...");
        return;
    }
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("<nil>"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if v.is_integer() {
                out.push_str(&v.to_string());
            } else {
                out.push_str(&format_float_g(as_f64(v).unwrap_or(0.0), None));
            }
        }
        ValueKind::String => out.push_str(v.as_str().unwrap_or_default()),
        ValueKind::Bytes => {
            out.push('[');
            let b = v.as_bytes().unwrap_or_default();
            for (i, x) in b.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(&x.to_string());
            }
            out.push(']');
        }
        ValueKind::Seq => {
            out.push('[');
            for (i, x) in as_list(v).unwrap_or_default().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_value(out, x, depth + 1);
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push_str("map[");
            let m = as_map(v).map(|m| m.snapshot()).unwrap_or_default();
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_value(out, x, depth + 1);
            }
            out.push(']');
        }
        _ => out.push_str(&v.to_string()),
    }
}

/// `strconv.Quote`: double-quoted with Go escapes; printable Unicode kept.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `fmt.Sprint`: spaces between operands when neither side is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 && a.kind() != ValueKind::String && args[i - 1].kind() != ValueKind::String {
            out.push(' ');
        }
        write_value(&mut out, a, 0);
    }
    out
}

/// `fmt.Sprintln`: always spaces, then a newline.
pub fn sprintln(args: &[Value]) -> String {
    let parts: Vec<String> = args.iter().map(to_go_string).collect();
    parts.join(" ") + "\n"
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    zero: bool,
    space: bool,
    sharp: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Pads to the width. Go (1.25) zero-pads strings too; for numbers the zeros go after the sign.
fn pad(spec: &Spec, s: String, _numeric: bool) -> String {
    let Some(w) = spec.width else { return s };
    let len = s.chars().count();
    if len >= w {
        return s;
    }
    let fill = w - len;
    if spec.minus {
        s + &" ".repeat(fill)
    } else if spec.zero {
        let (sign, rest) = if s.starts_with('-') || s.starts_with('+') {
            s.split_at(1)
        } else {
            ("", s.as_str())
        };
        format!("{sign}{}{rest}", "0".repeat(fill))
    } else {
        " ".repeat(fill) + &s
    }
}

fn bad_verb(verb: char, v: &Value) -> String {
    if v.is_none() || v.is_undefined() {
        return format!("%!{verb}(<nil>)");
    }
    format!("%!{verb}({}={})", type_name(v), to_go_string(v))
}

fn sign_prefix(spec: &Spec, negative: bool) -> &'static str {
    if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn format_int(spec: &Spec, verb: char, i: i128) -> String {
    let neg = i < 0;
    let a = i.unsigned_abs();
    let body = match verb {
        'd' | 'v' => a.to_string(),
        'x' => format!("{a:x}"),
        'X' => format!("{a:X}"),
        'o' => format!("{a:o}"),
        'b' => format!("{a:b}"),
        _ => a.to_string(),
    };
    let body = match spec.prec {
        Some(p) if body.len() < p => "0".repeat(p - body.len()) + &body,
        _ => body,
    };
    let prefix = if spec.sharp {
        match verb {
            'x' => "0x",
            'X' => "0X",
            'o' => "0",
            _ => "",
        }
    } else {
        ""
    };
    format!("{}{prefix}{body}", sign_prefix(spec, neg))
}

fn format_one(spec: &Spec, verb: char, v: &Value) -> String {
    let kind = v.kind();
    let is_int = kind == ValueKind::Number && v.is_integer();
    let is_float = kind == ValueKind::Number && !v.is_integer();
    match verb {
        'v' => {
            if is_float {
                let f = as_f64(v).unwrap_or(0.0);
                let s = format_float_g(f, spec.prec);
                let s = if spec.plus && f >= 0.0 {
                    format!("+{s}")
                } else {
                    s
                };
                pad(spec, s, true)
            } else if is_int {
                pad(
                    spec,
                    format_int(spec, 'd', v.as_i64().map(i128::from).unwrap_or(0)),
                    true,
                )
            } else if spec.sharp && kind == ValueKind::String {
                pad(spec, go_quote(v.as_str().unwrap_or_default()), false)
            } else {
                pad(spec, to_go_string(v), false)
            }
        }
        'd' | 'x' | 'X' | 'o' | 'b' if is_int => pad(
            spec,
            format_int(spec, verb, v.as_i64().map(i128::from).unwrap_or(0)),
            true,
        ),
        'x' | 'X' if kind == ValueKind::String || kind == ValueKind::Bytes => {
            let bytes: Vec<u8> = match v.as_str() {
                Some(s) => s.as_bytes().to_vec(),
                None => v.as_bytes().unwrap_or_default().to_vec(),
            };
            let s: String = bytes
                .iter()
                .map(|b| {
                    if verb == 'x' {
                        format!("{b:02x}")
                    } else {
                        format!("{b:02X}")
                    }
                })
                .collect();
            pad(spec, s, false)
        }
        'c' if is_int => pad(
            spec,
            char::from_u32(v.as_i64().unwrap_or(0) as u32)
                .unwrap_or('\u{fffd}')
                .to_string(),
            false,
        ),
        'q' if is_int => pad(
            spec,
            format!(
                "'{}'",
                char::from_u32(v.as_i64().unwrap_or(0) as u32).unwrap_or('\u{fffd}')
            ),
            false,
        ),
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' if is_float || is_int => {
            let f = as_f64(v).unwrap_or(0.0);
            let s = match verb {
                'e' => format_float_e(f, spec.prec.unwrap_or(6)),
                'E' => format_float_e(f, spec.prec.unwrap_or(6)).to_uppercase(),
                'f' | 'F' => format!("{:.*}", spec.prec.unwrap_or(6), f),
                'g' => format_float_g(f, spec.prec),
                _ => format_float_g(f, spec.prec).to_uppercase(),
            };
            if is_int {
                return bad_verb(verb, v);
            }
            let s = if (spec.plus || spec.space) && f >= 0.0 {
                format!("{}{s}", sign_prefix(spec, false))
            } else {
                s
            };
            pad(spec, s, true)
        }
        's' if kind == ValueKind::String || kind == ValueKind::Bytes => {
            let s = match v.as_str() {
                Some(s) => s.to_string(),
                None => String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).into_owned(),
            };
            let s = match spec.prec {
                Some(p) => s.chars().take(p).collect(),
                None => s,
            };
            pad(spec, s, false)
        }
        's' if kind == ValueKind::Seq || kind == ValueKind::Map => {
            pad(spec, to_go_string(v), false)
        }
        'q' if kind == ValueKind::String => {
            pad(spec, go_quote(v.as_str().unwrap_or_default()), false)
        }
        't' if kind == ValueKind::Bool => pad(spec, to_go_string(v), false),
        'T' => pad(spec, type_name(v).to_string(), false),
        _ => bad_verb(verb, v),
    }
}

/// `fmt.Sprintf` with Go's verbs.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut arg_i = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '0' => spec.zero = !spec.minus,
                ' ' => spec.space = true,
                '#' => spec.sharp = true,
                _ => break,
            }
            chars.next();
        }
        let read_num = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
                        arg_i: &mut usize|
         -> Option<usize> {
            if chars.peek() == Some(&'*') {
                chars.next();
                let n = args
                    .get(*arg_i)
                    .and_then(|a| a.as_i64())
                    .map(|n| n.max(0) as usize);
                *arg_i += 1;
                return n;
            }
            let mut n: Option<usize> = None;
            while let Some(&d) = chars.peek() {
                if let Some(x) = d.to_digit(10) {
                    n = Some(
                        n.unwrap_or(0)
                            .saturating_mul(10)
                            .saturating_add(x as usize)
                            .min(1 << 20),
                    );
                    chars.next();
                } else {
                    break;
                }
            }
            n
        };
        // Rust's formatter panics on widths and precisions past `u16::MAX` (a fuzzer finding), so they are capped.
        spec.width = read_num(&mut chars, &mut arg_i).map(|w| w.min(MAX_WIDTH));
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.prec = Some(read_num(&mut chars, &mut arg_i).unwrap_or(0).min(MAX_WIDTH));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        match args.get(arg_i) {
            Some(v) => out.push_str(&format_one(&spec, verb, v)),
            None => out.push_str(&format!("%!{verb}(MISSING)")),
        }
        arg_i += 1;
    }
    if arg_i < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[arg_i..]
            .iter()
            .map(|a| {
                if a.is_none() {
                    "<nil>".to_string()
                } else {
                    format!("{}={}", type_name(a), to_go_string(a))
                }
            })
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go() {
        assert_eq!(format_float_g(1e6, None), "1e+06");
        assert_eq!(format_float_g(123456.0, None), "123456");
        assert_eq!(format_float_g(1.5, None), "1.5");
        assert_eq!(format_float_g(0.0001, None), "0.0001");
        assert_eq!(format_float_g(0.00001, None), "1e-05");
        assert_eq!(format_float_g(-2.5e-7, None), "-2.5e-07");
        assert_eq!(format_float_g(80.0, None), "80");
        assert_eq!(format_float_g(1234567.0, None), "1.234567e+06");
    }

    #[test]
    fn sprintf_verbs() {
        let args = [Value::from("a"), Value::from(3), Value::from(1.5)];
        assert_eq!(sprintf("%s-%d-%v", &args), "a-3-1.5");
        assert_eq!(
            sprintf(
                "%05d|%-4s|%.2f",
                &[Value::from(42), Value::from("x"), Value::from(1.23456)]
            ),
            "00042|x   |1.23"
        );
        assert_eq!(sprintf("%d", &[Value::from("x")]), "%!d(string=x)");
        assert_eq!(sprintf("%s", &[]), "%!s(MISSING)");
        assert_eq!(sprintf("a", &[Value::from(1)]), "a%!(EXTRA int=1)");
        assert_eq!(sprintf("%q", &[Value::from("a\"b\n")]), "\"a\\\"b\\n\"");
        assert_eq!(sprintf("%x", &[Value::from(255)]), "ff");
        assert_eq!(sprintf("%s", &[Value::from(80.0)]), "%!s(float64=80)");
    }

    #[test]
    fn sprint_spacing() {
        assert_eq!(sprint(&[Value::from(1), Value::from(2)]), "1 2");
        assert_eq!(sprint(&[Value::from("a"), Value::from(2)]), "a2");
        assert_eq!(sprintln(&[Value::from("a"), Value::from(2)]), "a 2\n");
    }
}
