//! Go `text/template`: lexing, parsing into a tree, the named-template set (`define`, `block`, files), and the
//! evaluator with Go's semantics. Errors carry Go's `template: NAME:LINE:COL: …` text.

pub mod ast;
pub mod exec;
pub mod lex;
pub mod parse;

use std::collections::HashMap;
use std::sync::Arc;

use ast::{List, Node};

/// Errors from parsing or executing a template, worded as Go and Helm word them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TemplateError {
    /// A syntax error: `template: NAME:LINE: MESSAGE`.
    #[error("template: {name}:{line}: {message}")]
    Parse {
        name: String,
        line: usize,
        message: String,
    },
    /// A run-time error at a template position, printed like Go's
    /// (`template: FILE:LINE:COL: executing "NAME" at <CONTEXT>: MESSAGE`).
    #[error("template: {}: executing {:?} at <{}>: {}", .0.location, .0.name, .0.context, .0.message)]
    At(Box<ExecAt>),
    /// A run-time error without a position (missing template, nesting limit).
    #[error("{0}")]
    Exec(String),
    /// `fail` or `required`: Helm reports these as `execution error at (FILE:LINE:COL): MESSAGE`.
    #[error("execution error at ({location}): {message}")]
    Fail { location: String, message: String },
    /// The render budget (fuel) ran out.
    #[error("template: {0}: render budget exhausted (the template runs too long)")]
    Budget(String),
}

/// Where a run-time error happened: `FILE:LINE:COL`, the executing template's name, the failing expression
/// (cut at 20 characters as Go does) and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecAt {
    pub location: String,
    pub name: String,
    pub context: String,
    pub message: String,
}

impl TemplateError {
    /// The error as `helm template` (v4) prints it after `Error: `.
    pub fn helm_message(&self) -> String {
        match self {
            TemplateError::Parse {
                name,
                line,
                message,
            } => format!("parse error at ({name}:{line}): {message}"),
            TemplateError::At(at) => {
                format!(
                    "{}\n  executing {:?} at <{}>:\n    {}",
                    at.location, at.name, at.context, at.message
                )
            }
            other => other.to_string(),
        }
    }

    pub(crate) fn parse(name: &str, src: &str, pos: usize, message: String) -> TemplateError {
        let (line, _) = line_col(src, pos);
        TemplateError::Parse {
            name: name.to_string(),
            line,
            message,
        }
    }
}

/// Go's line (1-based) and column (0-based byte offset in the line) of a byte offset.
pub fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(src.len());
    while !src.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &src[..pos];
    let line = 1 + before.matches('\n').count();
    let col = match before.rfind('\n') {
        Some(nl) => pos - nl - 1,
        None => pos,
    };
    (line, col)
}

/// One named template: its body and the file it was parsed from (for error locations).
#[derive(Debug)]
pub struct Tmpl {
    pub name: String,
    pub file: Arc<str>,
    pub src: Arc<str>,
    pub body: List,
}

/// A set of named templates, as Go's `*template.Template` associates them.
#[derive(Debug, Default, Clone)]
pub struct TemplateSet {
    templates: HashMap<String, Arc<Tmpl>>,
}

fn is_empty_tree(list: &List, src: &str) -> bool {
    list.iter()
        .all(|n| matches!(n, Node::Text { start, end } if src[*start..*end].trim().is_empty()))
}

impl TemplateSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `src` as the template `file`, adding it and every template it defines. A later non-empty definition
    /// replaces an earlier one of the same name, as in Go.
    pub fn add_file(&mut self, file: &str, src: &str) -> Result<(), TemplateError> {
        let parsed = parse::parse(file, src)?;
        let file_arc: Arc<str> = Arc::from(file);
        let src_arc: Arc<str> = Arc::from(src);
        for (name, body) in parsed.defines {
            self.insert(name, body, &file_arc, &src_arc);
        }
        self.insert(file.to_string(), parsed.root, &file_arc, &src_arc);
        Ok(())
    }

    /// [`add_file`](Self::add_file) for many files, in order, with the parsing spread over a few threads (a chart
    /// with vendored library charts has hundreds of templates). Stops at the first file, in order, that fails.
    pub fn add_files(&mut self, files: &[(&str, &str)]) -> Result<(), TemplateError> {
        let parsed = parse_all(files);
        for ((file, src), parsed) in files.iter().zip(parsed) {
            let parsed = parsed?;
            let file_arc: Arc<str> = Arc::from(*file);
            let src_arc: Arc<str> = Arc::from(*src);
            for (name, body) in parsed.defines {
                self.insert(name, body, &file_arc, &src_arc);
            }
            self.insert(file.to_string(), parsed.root, &file_arc, &src_arc);
        }
        Ok(())
    }

    fn insert(&mut self, name: String, body: List, file: &Arc<str>, src: &Arc<str>) {
        if is_empty_tree(&body, src) && self.templates.contains_key(&name) {
            return;
        }
        let t = Tmpl {
            name: name.clone(),
            file: file.clone(),
            src: src.clone(),
            body,
        };
        self.templates.insert(name, Arc::new(t));
    }

    pub fn get(&self, name: &str) -> Option<Arc<Tmpl>> {
        self.templates.get(name).cloned()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.templates.contains_key(name)
    }
}

/// Parses every file, on up to four threads (the calling one included) that each take the next unparsed file, the
/// largest first, so one thread does not end up with all the big files. Results are in `files` order.
fn parse_all(files: &[(&str, &str)]) -> Vec<Result<parse::Parsed, TemplateError>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(files.len().div_ceil(8));
    if workers <= 1 {
        return files.iter().map(|(f, src)| parse::parse(f, src)).collect();
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].1.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&i) = order.get(k) else { break };
            let (file, src) = files[i];
            done.push((i, parse::parse(file, src)));
        }
        done
    };
    let mut results: Vec<Option<Result<parse::Parsed, TemplateError>>> =
        files.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut all = work();
        for h in helpers {
            // A helper that panicked leaves its files unparsed; they are reported below.
            all.extend(h.join().unwrap_or_default());
        }
        for (i, r) in all {
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(TemplateError::Exec("the template parser failed".into()))))
        .collect()
}

/// What dropping a [`TemplateSet`] does with its templates: a process-wide choice (see [`set_drop_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropPolicy {
    /// Free them at once, on the dropping thread: the default, for long-running processes (the controller and the
    /// agent render bundle after bundle and should not start a thread per render).
    Inline,
    /// Free large sets on a short-lived helper thread (inline if none can be started), so the caller goes on at
    /// once: for a caller that times renders in a loop.
    Background,
    /// Never free them: for a one-shot process such as `fleet helm template`, whose exit reclaims the memory.
    Leak,
}

static DROP_POLICY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Chooses, for the whole process, what dropping a [`TemplateSet`] does. A chart with vendored libraries parses
/// into hundreds of thousands of tree nodes, and freeing them took a sixth of kube-prometheus-stack's render.
pub fn set_drop_policy(policy: DropPolicy) {
    let code = match policy {
        DropPolicy::Inline => 0,
        DropPolicy::Background => 1,
        DropPolicy::Leak => 2,
    };
    DROP_POLICY.store(code, std::sync::atomic::Ordering::Relaxed);
}

/// Sets above this many templates are the ones [`DropPolicy::Background`] and [`DropPolicy::Leak`] treat specially.
const LARGE_SET_TEMPLATES: usize = 64;

impl Drop for TemplateSet {
    fn drop(&mut self) {
        if self.templates.len() <= LARGE_SET_TEMPLATES {
            return;
        }
        match DROP_POLICY.load(std::sync::atomic::Ordering::Relaxed) {
            1 => {
                let templates = std::mem::take(&mut self.templates);
                let _ = std::thread::Builder::new()
                    .name("template-drop".into())
                    .spawn(move || drop(templates));
            }
            2 => std::mem::forget(std::mem::take(&mut self.templates)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
