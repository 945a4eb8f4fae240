//! Go's regular expressions (RE2 syntax) for Sprig's `regex*` functions: the pattern cache, Go's dialect written in
//! the Rust engines' syntax, and the choice of engine per pattern.
//!
//! A pattern is compiled with `regex-lite` where that reads it as Go does, else with `regex`. `regex-lite` compiles
//! a pattern for about ten thousand instructions; `regex` spends 200-300k on building its automata (a negated class
//! such as Bitnami's `[^a-z0-9]` compiles into UTF-8 automata with a 10,000-entry table), which was about 0.9M
//! instructions of every Bitnami chart's render, on strings of a few dozen bytes. `regex-lite` matches codepoint by
//! codepoint with Go's leftmost-first semantics; where it differs from `regex` it refuses the pattern (nested
//! classes, set operations, `\p{..}`), except for case-insensitive matching, which it folds for ASCII only where Go
//! folds Unicode: patterns that set the `i` flag go to `regex`, as does every pattern `regex-lite` refuses (so a bad
//! pattern's error is `regex`'s, as before). Perl classes (`\d`, `\w`, `\s`) are ASCII in Go and in the dialect
//! for both engines, and so are word boundaries (`\b`, `\B`), which the dialect writes as
//! `(?-u:\b)`, `(?-u:\B)`.

use std::rc::Rc;

use super::{FuncError, str_arg};
use crate::value::Value;

/// A compiled pattern, in the engine that reads it as Go does (see the module documentation).
pub(super) enum Pattern {
    Lite(regex_lite::Regex),
    Full(regex::Regex),
}

/// Runs `$body` with `$re` bound to whichever engine's regex `$pattern` holds: the two crates' APIs have the same
/// names and meanings.
macro_rules! with_engine {
    ($pattern:expr, $re:ident => $body:expr) => {
        match $pattern {
            Pattern::Lite($re) => $body,
            Pattern::Full($re) => $body,
        }
    };
}

impl Pattern {
    fn new(go_pattern: &str) -> Result<Pattern, FuncError> {
        let pattern = go_regex_dialect(go_pattern);
        if !sets_case_insensitive(&pattern)
            && let Ok(re) = regex_lite::Regex::new(&pattern)
        {
            return Ok(Pattern::Lite(re));
        }
        regex::Regex::new(&pattern)
            .map(Pattern::Full)
            .map_err(|e| FuncError::Msg(format!("error parsing regexp: {e}")))
    }

    pub(super) fn is_match(&self, s: &str) -> bool {
        with_engine!(self, re => re.is_match(s))
    }

    /// The text of the leftmost match.
    pub(super) fn find<'s>(&self, s: &'s str) -> Option<&'s str> {
        with_engine!(self, re => re.find(s).map(|m| m.as_str()))
    }

    /// The texts of successive matches, at most `limit` of them.
    pub(super) fn find_all<'s>(&self, s: &'s str, limit: Option<usize>) -> Vec<&'s str> {
        let limit = limit.unwrap_or(usize::MAX);
        with_engine!(self, re => re.find_iter(s).take(limit).map(|m| m.as_str()).collect())
    }

    /// Every match replaced by `replacement`, with `$1`/`$name`/`${name}` expanded as Go's `Regexp.Expand` does
    /// (its greedy reading of `$name` is the Rust engines'), or taken literally.
    pub(super) fn replace_all(&self, s: &str, replacement: &str, literal: bool) -> String {
        // `$$` is a literal `$` in the template syntax, so a literal replacement is its text with `$` doubled.
        let template = if literal {
            std::borrow::Cow::Owned(replacement.replace('$', "$$"))
        } else {
            std::borrow::Cow::Borrowed(replacement)
        };
        with_engine!(self, re => re.replace_all(s, template.as_ref()).into_owned())
    }

    /// The texts between matches: all of them, or at most `limit` (the last holding the rest of `s`).
    pub(super) fn split<'s>(&self, s: &'s str, limit: Option<usize>) -> Vec<&'s str> {
        match limit {
            None => with_engine!(self, re => re.split(s).collect()),
            Some(n) => with_engine!(self, re => re.splitn(s, n).collect()),
        }
    }
}

/// Whether a pattern (in the engines' dialect) turns on case-insensitive matching: some `(?flags)` or
/// `(?flags:...)` group names `i`. Over-approximated (a capture group's name may contain an `i`): such a pattern just
/// goes to `regex`, which reads every pattern as Go does apart from the Perl classes the dialect rewrites.
fn sets_case_insensitive(pattern: &str) -> bool {
    pattern.match_indices("(?").any(|(at, _)| {
        pattern[at + 2..]
            .split([':', ')'])
            .next()
            .is_some_and(|flags| flags.contains('i'))
    })
}

/// Compiles a Go RE2 pattern ([`Pattern`]). Charts call the same few patterns thousands of times (Bitnami's common
/// library runs `regexReplaceAll` per image and label), so compiled patterns are kept per thread; the cache is
/// emptied when it reaches [`REGEX_CACHE_SIZE`] patterns. A pattern is shared, not cloned: a cloned `Regex` starts
/// with an empty pool of match caches, which it would then build again on every call.
pub(super) fn compile(pattern: &Value) -> Result<Rc<Pattern>, FuncError> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Rc<Pattern>>> = Default::default();
    }
    let pattern = str_arg(pattern);
    if let Some(re) = CACHE.with(|c| c.borrow().get(&pattern).cloned()) {
        return Ok(re);
    }
    let re = Rc::new(Pattern::new(&pattern)?);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= REGEX_CACHE_SIZE {
            c.clear();
        }
        c.insert(pattern, re.clone());
    });
    Ok(re)
}

/// Most compiled patterns kept per thread.
const REGEX_CACHE_SIZE: usize = 256;

/// A pattern without any regexp syntax (kafka's `regexFind "SASL"`), which matches exactly its own text: such
/// patterns are searched as text, without compiling a regexp.
pub(super) fn literal_pattern(pattern: &str) -> Option<&str> {
    let plain = !pattern.is_empty() && !pattern.bytes().any(|b| b"\\.+*?()|[]{}^$".contains(&b));
    plain.then_some(pattern)
}

/// The ASCII sets Go's class escapes stand for: RE2's `\d`, `\w` and `\s` are ASCII-only, the `regex` crate's are
/// Unicode-aware (and their large Unicode tables made compiling Bitnami's `\W` and `\d` patterns cost about 1.5M
/// instructions per render).
fn ascii_class(escape: char) -> Option<&'static str> {
    Some(match escape {
        'd' | 'D' => "0-9",
        'w' | 'W' => "0-9A-Za-z_",
        's' | 'S' => "\\t\\n\\f\\r ",
        _ => return None,
    })
}

/// Go's regexp dialect in the `regex` crate's: the class escapes `\d`, `\w`, `\s` and their negations become the
/// ASCII classes RE2 means ([`ascii_class`]), word boundaries the ASCII ones, and a `-` next to a class escape
/// inside brackets (`[\w-\.]`), which RE2 takes as a literal, is escaped.
fn go_regex_dialect(p: &str) -> String {
    const CLASS_ESCAPES: &str = "wWdDsS";
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len());
    let mut in_class = false;
    let mut prev_was_class_escape = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let n = chars[i + 1];
            match ascii_class(n) {
                // Inside brackets a set is written inline, a negated one as a nested class.
                Some(set) if in_class && n.is_ascii_lowercase() => out.push_str(set),
                Some(set) => {
                    out.push('[');
                    if n.is_ascii_uppercase() {
                        out.push('^');
                    }
                    out.push_str(set);
                    out.push(']');
                }
                // Go's word boundaries are ASCII; `regex`'s plain `\b` is Unicode (`regex-lite` reads the flag as
                // a no-op: its `\b` is ASCII already).
                None if !in_class && (n == 'b' || n == 'B') => {
                    out.push_str("(?-u:\\");
                    out.push(n);
                    out.push(')');
                }
                None => {
                    out.push(c);
                    out.push(n);
                }
            }
            prev_was_class_escape = in_class && CLASS_ESCAPES.contains(n);
            i += 2;
            continue;
        }
        if in_class {
            if c == ']' {
                in_class = false;
            } else if c == '-' {
                let next_is_class_escape = chars.get(i + 1) == Some(&'\\')
                    && chars.get(i + 2).is_some_and(|n| CLASS_ESCAPES.contains(*n));
                if prev_was_class_escape || next_is_class_escape {
                    out.push_str("\\-");
                    prev_was_class_escape = false;
                    i += 1;
                    continue;
                }
            }
        } else if c == '[' {
            in_class = true;
            out.push(c);
            i += 1;
            if chars.get(i) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            if chars.get(i) == Some(&']') {
                out.push(']');
                i += 1;
            }
            prev_was_class_escape = false;
            continue;
        }
        prev_was_class_escape = false;
        out.push(c);
        i += 1;
    }
    out
}
