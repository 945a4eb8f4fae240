//! Sprig's string functions: trimming, case, quoting, indentation, substrings, splitting and joining, regular
//! expressions, paths and URL helpers.

use minijinja::value::ValueKind;

use super::regexp::{compile, literal_pattern};
use super::{FuncResult, Table, arity, err, str_arg, str_ref, strval, to_i64};
use crate::call::Call;
use crate::gofmt::go_quote;
use crate::value::{Value, as_list, is_nil, list_value, map_value};

pub(super) fn register(t: &mut Table) {
    t.insert("trim", |_, a| {
        s1("trim", a, |s| s.trim_matches(is_go_space).to_string())
    });
    t.insert("hello", |_, a| {
        arity("hello", a, 0)?;
        Ok(Value::from("Hello!"))
    });
    t.insert("abbrevboth", |_, a| {
        arity("abbrevboth", a, 3)?;
        let (left, right, s) = (to_i64(&a[0]), to_i64(&a[1]), str_arg(&a[2]));
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len() as i64;
        if right < 4 || (left > 0 && right < 7) || n <= right {
            return Ok(Value::from(s));
        }
        let mut offset = left.clamp(0, n);
        if n - offset < right - 3 {
            offset = n - (right - 3);
        }
        if offset <= 4 {
            let keep: String = chars.iter().take((right - 3) as usize).collect();
            return Ok(Value::from(keep + "..."));
        }
        if (offset + right - 3) < n {
            let inner: String = chars[offset as usize..].iter().collect();
            let keep: String = inner.chars().take((right - 6) as usize).collect();
            return Ok(Value::from(format!("...{keep}...")));
        }
        let tail: String = chars[(n - (right - 3)) as usize..].iter().collect();
        Ok(Value::from(format!("...{tail}")))
    });
    t.insert("trimall", |_, a| {
        s2("trimall", a, |cut, s| {
            s.trim_matches(|c| cut.contains(c)).to_string()
        })
    });
    t.insert("trimAll", |_, a| {
        s2("trimAll", a, |cut, s| {
            s.trim_matches(|c| cut.contains(c)).to_string()
        })
    });
    t.insert("trimPrefix", |_, a| {
        s2("trimPrefix", a, |p, s| {
            s.strip_prefix(p.as_str()).unwrap_or(&s).to_string()
        })
    });
    t.insert("trimSuffix", |_, a| {
        s2("trimSuffix", a, |p, s| {
            s.strip_suffix(p.as_str()).unwrap_or(&s).to_string()
        })
    });
    t.insert("upper", |_, a| s1("upper", a, |s| s.to_uppercase()));
    t.insert("lower", |_, a| s1("lower", a, |s| s.to_lowercase()));
    t.insert("title", |_, a| s1("title", a, title));
    t.insert("untitle", |_, a| s1("untitle", a, untitle));
    t.insert("swapcase", |_, a| s1("swapcase", a, swapcase));
    t.insert("snakecase", |_, a| {
        s1("snakecase", a, |s| delimited(&s, '_'))
    });
    t.insert("kebabcase", |_, a| {
        s1("kebabcase", a, |s| delimited(&s, '-'))
    });
    t.insert("camelcase", |_, a| s1("camelcase", a, camelcase));
    t.insert("nospace", |_, a| {
        s1("nospace", a, |s| {
            s.chars().filter(|c| !c.is_whitespace()).collect()
        })
    });
    t.insert("initials", |_, a| {
        s1("initials", a, |s| {
            s.split_whitespace()
                .filter_map(|w| w.chars().next())
                .collect()
        })
    });
    t.insert("repeat", repeat);
    t.insert("substr", substr);
    t.insert("trunc", trunc);
    t.insert("abbrev", abbrev);
    t.insert("contains", |_, a| {
        b2("contains", a, |sub, s| s.contains(sub.as_str()))
    });
    t.insert("hasPrefix", |_, a| {
        b2("hasPrefix", a, |p, s| s.starts_with(p.as_str()))
    });
    t.insert("hasSuffix", |_, a| {
        b2("hasSuffix", a, |p, s| s.ends_with(p.as_str()))
    });
    t.insert("quote", |_, a| Ok(Value::from(quote_all(a, false))));
    t.insert("squote", |_, a| Ok(Value::from(quote_all(a, true))));
    t.insert("cat", |_, a| {
        let parts: Vec<String> = a.iter().filter(|v| !is_nil(v)).map(strval).collect();
        Ok(Value::from(parts.join(" ")))
    });
    t.insert("indent", |_, a| {
        arity("indent", a, 2)?;
        Ok(Value::from(indent_after(
            String::new(),
            to_i64(&a[0]),
            &str_ref(&a[1]),
        )))
    });
    t.insert("nindent", |_, a| {
        arity("nindent", a, 2)?;
        Ok(Value::from(indent_after(
            String::from("\n"),
            to_i64(&a[0]),
            &str_ref(&a[1]),
        )))
    });
    t.insert("replace", |_, a| {
        arity("replace", a, 3)?;
        Ok(Value::from(
            str_arg(&a[2]).replace(&str_arg(&a[0]), &str_arg(&a[1])),
        ))
    });
    t.insert("plural", |_, a| {
        arity("plural", a, 3)?;
        Ok(if to_i64(&a[2]) == 1 {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
    t.insert("wrap", |_, a| {
        arity("wrap", a, 2)?;
        Ok(Value::from(wrap(
            &str_arg(&a[1]),
            to_i64(&a[0]).max(1) as usize,
            "\n",
        )))
    });
    t.insert("wrapWith", |_, a| {
        arity("wrapWith", a, 3)?;
        Ok(Value::from(wrap(
            &str_arg(&a[2]),
            to_i64(&a[0]).max(1) as usize,
            &str_arg(&a[1]),
        )))
    });
    t.insert("toString", |_, a| {
        arity("toString", a, 1)?;
        Ok(Value::from(strval(&a[0])))
    });
    t.insert("toStrings", |_, a| {
        arity("toStrings", a, 1)?;
        let items = as_list(&a[0]).unwrap_or_else(|| {
            if is_nil(&a[0]) {
                vec![]
            } else {
                vec![a[0].clone()]
            }
        });
        Ok(list_value(
            items.iter().map(|v| Value::from(strval(v))).collect(),
        ))
    });
    t.insert("split", |_, a| {
        arity("split", a, 2)?;
        let (sep, s) = (str_arg(&a[0]), str_arg(&a[1]));
        Ok(numbered_parts(go_split(&s, &sep, -1)))
    });
    t.insert("splitn", |_, a| {
        arity("splitn", a, 3)?;
        let (sep, n, s) = (str_arg(&a[0]), to_i64(&a[1]), str_arg(&a[2]));
        Ok(numbered_parts(go_split(&s, &sep, n)))
    });
    t.insert("splitList", |_, a| {
        arity("splitList", a, 2)?;
        let (sep, s) = (str_arg(&a[0]), str_arg(&a[1]));
        Ok(list_value(
            go_split(&s, &sep, -1)
                .into_iter()
                .map(Value::from)
                .collect(),
        ))
    });
    t.insert("join", |_, a| {
        arity("join", a, 2)?;
        let sep = str_arg(&a[0]);
        let items = match a[1].kind() {
            ValueKind::Seq => as_list(&a[1]).unwrap_or_default(),
            ValueKind::None | ValueKind::Undefined => vec![],
            _ => vec![a[1].clone()],
        };
        let parts: Vec<String> = items.iter().filter(|v| !is_nil(v)).map(strval).collect();
        Ok(Value::from(parts.join(&sep)))
    });
    t.insert("sortAlpha", |_, a| {
        arity("sortAlpha", a, 1)?;
        let mut items: Vec<String> = match as_list(&a[0]) {
            Some(l) => l.iter().map(strval).collect(),
            None => vec![strval(&a[0])],
        };
        items.sort();
        Ok(list_value(items.into_iter().map(Value::from).collect()))
    });
    t.insert("regexMatch", |_, a| regex_match("regexMatch", a));
    t.insert("mustRegexMatch", |_, a| regex_match("mustRegexMatch", a));
    t.insert("regexFind", |_, a| regex_find("regexFind", a));
    t.insert("mustRegexFind", |_, a| regex_find("mustRegexFind", a));
    t.insert("regexFindAll", |_, a| regex_find_all("regexFindAll", a));
    t.insert("mustRegexFindAll", |_, a| {
        regex_find_all("mustRegexFindAll", a)
    });
    t.insert("regexReplaceAll", |_, a| {
        regex_replace("regexReplaceAll", a, false)
    });
    t.insert("mustRegexReplaceAll", |_, a| {
        regex_replace("mustRegexReplaceAll", a, false)
    });
    t.insert("regexReplaceAllLiteral", |_, a| {
        regex_replace("regexReplaceAllLiteral", a, true)
    });
    t.insert("mustRegexReplaceAllLiteral", |_, a| {
        regex_replace("mustRegexReplaceAllLiteral", a, true)
    });
    for name in ["regexSplit", "mustRegexSplit"] {
        t.insert(name, |_, a| {
            arity("regexSplit", a, 3)?;
            let re = compile(&a[0])?;
            let n = to_i64(&a[2]);
            let s = str_arg(&a[1]);
            let parts = re.split(&s, usize::try_from(n).ok());
            Ok(list_value(parts.into_iter().map(Value::from).collect()))
        });
    }
    t.insert("regexQuoteMeta", |_, a| {
        s1("regexQuoteMeta", a, |s| regex::escape(&s))
    });
    t.insert("base", |_, a| s1("base", a, |s| path_base(&s)));
    t.insert("dir", |_, a| s1("dir", a, |s| path_dir(&s)));
    t.insert("ext", |_, a| s1("ext", a, |s| path_ext(&s)));
    t.insert("clean", |_, a| s1("clean", a, |s| path_clean(&s)));
    t.insert("isAbs", |_, a| b1("isAbs", a, |s| s.starts_with('/')));
    t.insert("osExt", |_, a| s1("osExt", a, |s| path_ext(&s)));
    t.insert("osBase", |_, a| s1("osBase", a, |s| path_base(&s)));
    t.insert("osDir", |_, a| s1("osDir", a, |s| path_dir(&s)));
    t.insert("osClean", |_, a| s1("osClean", a, |s| path_clean(&s)));
    t.insert("osIsAbs", |_, a| b1("osIsAbs", a, |s| s.starts_with('/')));
}

fn is_go_space(c: char) -> bool {
    c.is_whitespace()
}

fn s1(name: &str, a: &[Value], f: impl Fn(String) -> String) -> FuncResult {
    arity(name, a, 1)?;
    Ok(Value::from(f(str_arg(&a[0]))))
}

fn s2(name: &str, a: &[Value], f: impl Fn(String, String) -> String) -> FuncResult {
    arity(name, a, 2)?;
    Ok(Value::from(f(str_arg(&a[0]), str_arg(&a[1]))))
}

fn b1(name: &str, a: &[Value], f: impl Fn(String) -> bool) -> FuncResult {
    arity(name, a, 1)?;
    Ok(Value::from(f(str_arg(&a[0]))))
}

fn b2(name: &str, a: &[Value], f: impl Fn(String, String) -> bool) -> FuncResult {
    arity(name, a, 2)?;
    Ok(Value::from(f(str_arg(&a[0]), str_arg(&a[1]))))
}

/// Sprig's `quote`/`squote`: each non-nil argument quoted, joined by spaces.
fn quote_all(a: &[Value], single: bool) -> String {
    let parts: Vec<String> = a
        .iter()
        .filter(|v| !is_nil(v))
        .map(|v| {
            if single {
                format!("'{}'", strval(v))
            } else {
                go_quote(&strval(v))
            }
        })
        .collect();
    parts.join(" ")
}

/// `prefix` followed by `s` with every line indented by `n` spaces.
fn indent_after(prefix: String, n: i64, s: &str) -> String {
    let pad = " ".repeat(n.clamp(0, 10_000) as usize);
    let lines = 1 + s.bytes().filter(|&b| b == b'\n').count();
    let mut out = prefix;
    out.reserve(s.len() + pad.len() * lines);
    out.push_str(&pad);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(line);
    }
    out
}

fn title(s: String) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        let is_sep = c.is_whitespace() || (c.is_ascii_punctuation() && c != '\'' && c != '_');
        if !prev_letter && !is_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_letter = !is_sep;
    }
    out
}

fn untitle(s: String) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_space = true;
    for c in s.chars() {
        if prev_space && !c.is_whitespace() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
        prev_space = c.is_whitespace();
    }
    out
}

fn swapcase(s: String) -> String {
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                c.to_lowercase().collect::<String>()
            } else {
                c.to_uppercase().collect()
            }
        })
        .collect()
}

fn delimited(s: &str, delim: char) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' || c == '-' || c == '_' {
            if !out.ends_with(delim) && !out.is_empty() {
                out.push(delim);
            }
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if (prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower))
                && !out.ends_with(delim)
            {
                out.push(delim);
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn camelcase(s: String) -> String {
    s.split(['_', ' ', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn repeat(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("repeat", a, 2)?;
    let n = to_i64(&a[0]);
    let s = str_arg(&a[1]);
    if n < 0 {
        return err("strings: negative Repeat count");
    }
    if (n as u128) * (s.len() as u128) > (64 << 20) {
        return err("repeat: result too large");
    }
    Ok(Value::from(s.repeat(n as usize)))
}

fn substr(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("substr", a, 3)?;
    let (start, end, s) = (to_i64(&a[0]), to_i64(&a[1]), str_arg(&a[2]));
    let bytes = s.as_bytes();
    let len = bytes.len() as i64;
    let out = if start < 0 {
        let end = if end < 0 || end > len { len } else { end };
        &bytes[..end as usize]
    } else if end < 0 || end > len {
        if start > len {
            &bytes[0..0]
        } else {
            &bytes[start as usize..]
        }
    } else if start > end {
        &bytes[0..0]
    } else {
        &bytes[start as usize..end as usize]
    };
    Ok(Value::from(String::from_utf8_lossy(out).into_owned()))
}

fn trunc(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("trunc", a, 2)?;
    let (c, s) = (to_i64(&a[0]), str_arg(&a[1]));
    let len = s.len() as i64;
    let out = if c < 0 && len + c > 0 {
        &s.as_bytes()[(len + c) as usize..]
    } else if c >= 0 && len > c {
        &s.as_bytes()[..c as usize]
    } else {
        s.as_bytes()
    };
    Ok(Value::from(String::from_utf8_lossy(out).into_owned()))
}

fn abbrev(_: &mut Call<'_>, a: &[Value]) -> FuncResult {
    arity("abbrev", a, 2)?;
    let (w, s) = (to_i64(&a[0]), str_arg(&a[1]));
    if w < 4 || s.chars().count() as i64 <= w {
        return Ok(Value::from(s));
    }
    let keep: String = s.chars().take((w - 3) as usize).collect();
    Ok(Value::from(keep + "..."))
}

fn wrap(s: &str, width: usize, newline: &str) -> String {
    let mut out = String::new();
    for (li, line) in s.split('\n').enumerate() {
        if li > 0 {
            out.push('\n');
        }
        let mut cur = 0usize;
        for (wi, word) in line.split(' ').enumerate() {
            if wi > 0 {
                if cur + 1 + word.len() > width {
                    out.push_str(newline);
                    cur = 0;
                } else {
                    out.push(' ');
                    cur += 1;
                }
            }
            out.push_str(word);
            cur += word.len();
        }
    }
    out
}

/// The map `split` and `splitn` return: each part under the key `_<index>`.
fn numbered_parts(parts: Vec<String>) -> Value {
    map_value(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (format!("_{i}"), Value::from(p)))
            .collect(),
    )
}

/// Go's `strings.SplitN` (n < 0: all).
fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return vec![];
    }
    if sep.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        if n > 0 && chars.len() > n as usize {
            let mut head: Vec<String> = chars[..n as usize - 1].to_vec();
            head.push(chars[n as usize - 1..].concat());
            return head;
        }
        return chars;
    }
    if n < 0 {
        s.split(sep).map(String::from).collect()
    } else {
        s.splitn(n as usize, sep).map(String::from).collect()
    }
}

fn regex_find(name: &str, a: &[Value]) -> FuncResult {
    arity(name, a, 2)?;
    if let Some(text) = literal_pattern(&str_ref(&a[0])) {
        let found = str_ref(&a[1]).contains(text);
        return Ok(Value::from(if found { text } else { "" }));
    }
    let re = compile(&a[0])?;
    Ok(Value::from(re.find(&str_arg(&a[1])).unwrap_or_default()))
}

fn regex_match(name: &str, a: &[Value]) -> FuncResult {
    arity(name, a, 2)?;
    if let Some(text) = literal_pattern(&str_ref(&a[0])) {
        return Ok(Value::from(str_ref(&a[1]).contains(text)));
    }
    let re = compile(&a[0])?;
    Ok(Value::from(re.is_match(&str_arg(&a[1]))))
}

fn regex_find_all(name: &str, a: &[Value]) -> FuncResult {
    arity(name, a, 3)?;
    let re = compile(&a[0])?;
    let n = to_i64(&a[2]);
    let s = str_arg(&a[1]);
    let found = re.find_all(&s, usize::try_from(n).ok());
    Ok(list_value(found.into_iter().map(Value::from).collect()))
}

fn regex_replace(name: &str, a: &[Value], literal: bool) -> FuncResult {
    arity(name, a, 3)?;
    let re = compile(&a[0])?;
    let s = str_arg(&a[1]);
    let repl = str_arg(&a[2]);
    Ok(Value::from(re.replace_all(&s, &repl, literal)))
}

fn path_base(s: &str) -> String {
    if s.is_empty() {
        return ".".into();
    }
    let t = s.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn path_ext(s: &str) -> String {
    let b = path_base(s);
    b.rfind('.').map(|i| b[i..].to_string()).unwrap_or_default()
}

fn path_dir(s: &str) -> String {
    let dir = match s.rfind('/') {
        Some(i) => &s[..=i],
        None => "",
    };
    path_clean(dir)
}

/// Go's `path.Clean`.
pub(crate) fn path_clean(s: &str) -> String {
    if s.is_empty() {
        return ".".into();
    }
    let rooted = s.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in s.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}
