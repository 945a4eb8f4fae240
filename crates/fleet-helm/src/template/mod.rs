//! Go `text/template`: lexing, parsing into a tree, the named-template set (`define`, `block`, files), and the
//! evaluator with Go's semantics. Errors carry Go's `template: NAME:LINE:COL: …` text.

pub mod ast;
pub mod exec;
pub mod lex;
pub mod parse;
pub mod text;

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

/// Where a run-time error happened: `FILE:LINE:COL`, the executing template's name, the failing expression as
/// written (whole, as helm v4 prints it) and the message.
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

/// One named template: the parsed file it comes from, which body of that file it is, and the file it was added as
/// (for error locations). Files with the same content share one parsed tree, whose positions are byte offsets into
/// the source, so the name held here is what errors and `template` calls see.
#[derive(Debug)]
pub struct Tmpl {
    pub name: Arc<str>,
    pub file: Arc<str>,
    tree: Arc<parse::Parsed>,
    /// `None` for the file's own body, else the index of the `define`/`block` in `tree.defines`.
    define: Option<usize>,
}

impl Tmpl {
    /// The template body.
    pub fn body(&self) -> &List {
        match self.define {
            None => &self.tree.root,
            Some(i) => &self.tree.defines[i].1,
        }
    }

    /// The commands and arguments of the file the template was parsed from (its pipelines refer to them).
    pub fn code(&self) -> &ast::Code {
        &self.tree.code
    }

    /// The source of the file the template was parsed from (its positions are byte offsets into it).
    pub fn src(&self) -> &str {
        &self.tree.src
    }

    /// Whether this is a file's own body rather than one of its `define`s.
    pub fn is_file_body(&self) -> bool {
        self.define.is_none()
    }

    /// Every template of the parsed file `file`: its defines in order, then the file's own body, named `file`.
    pub(crate) fn each<'t>(
        file: &'t str,
        tree: &'t Arc<parse::Parsed>,
    ) -> impl Iterator<Item = Tmpl> + 't {
        // The names are shared with the tree's (and the file's with `file`): no copy per template.
        let file_arc: Arc<str> = Arc::from(file);
        let defines = tree.defines.iter().enumerate();
        defines
            .map(|(i, (name, _))| (name.clone(), Some(i)))
            .chain(std::iter::once((file_arc.clone(), None)))
            .map(move |(name, define)| Tmpl {
                name,
                file: file_arc.clone(),
                tree: tree.clone(),
                define,
            })
    }
}

/// A set of named templates, as Go's `*template.Template` associates them.
#[derive(Debug, Default, Clone)]
pub struct TemplateSet {
    templates: HashMap<Arc<str>, Arc<Tmpl>>,
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
        let tree = Arc::new(parse::parse(file, src)?);
        self.add_parsed(file, &tree);
        Ok(())
    }

    /// [`add_file`](Self::add_file) read with other delimiters or another function map. Execute it with an
    /// [`exec::Exec`] on the same function map.
    pub fn add_file_with(
        &mut self,
        file: &str,
        src: &str,
        syntax: &lex::Syntax<'_>,
    ) -> Result<(), TemplateError> {
        let tree = Arc::new(parse::parse_with(file, Arc::from(src), syntax)?);
        self.add_parsed(file, &tree);
        Ok(())
    }

    /// [`add_file`](Self::add_file) for many files, in order. Files with identical content (a library chart that
    /// several subcharts vendor) are parsed once and share the tree. Stops at the first file, in order, that fails,
    /// and then adds none.
    ///
    /// Parsing stays on the calling thread: spreading it over threads (as this did until session 6) made
    /// `fleet helm template` slower in wall time on every heavy chart of the corpus on a 2-core machine, because each
    /// thread's start-up and fresh allocator pages cost more than its share of the parsing saved (e.g. wordpress
    /// 14.9 against 11.1 ms with the subchart and file-reading threads gone too).
    ///
    /// A source given as an `Arc<str>` is kept by its tree as it is, not copied.
    pub fn add_files<S>(&mut self, files: &[(&str, S)]) -> Result<(), TemplateError>
    where
        S: AsRef<str> + Clone + Into<Arc<str>>,
    {
        let first_copy = first_copies(files);
        // Per file, its tree: a copy's is its first copy's.
        let mut trees: Vec<Arc<parse::Parsed>> = Vec::with_capacity(files.len());
        for ((file, src), first) in files.iter().zip(&first_copy) {
            let tree = match first {
                Some(i) => trees[*i].clone(),
                None => Arc::new(parse::parse_shared(file, src.clone().into())?),
            };
            trees.push(tree);
        }
        // Room for every template at once (each file's defines and body), instead of growing the table (and hashing
        // every name again) at each doubling.
        self.templates
            .reserve(trees.iter().map(|t| t.defines.len() + 1).sum());
        for ((file, _), tree) in files.iter().zip(&trees) {
            self.add_parsed(file, tree);
        }
        Ok(())
    }

    fn add_parsed(&mut self, file: &str, tree: &Arc<parse::Parsed>) {
        for t in Tmpl::each(file, tree) {
            if is_empty_tree(t.body(), t.src()) && self.templates.contains_key(&t.name) {
                continue;
            }
            self.templates.insert(t.name.clone(), Arc::new(t));
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<Tmpl>> {
        self.templates.get(name).cloned()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.templates.contains_key(name)
    }
}

/// For each file, the index of the earlier file with the same content, if any. Contents are compared only between
/// files of equal length, so a chart without copies costs no hashing of its sources.
fn first_copies<S: AsRef<str>>(files: &[(&str, S)]) -> Vec<Option<usize>> {
    let mut by_len: HashMap<usize, Vec<usize>> = HashMap::with_capacity(files.len());
    files
        .iter()
        .enumerate()
        .map(|(i, (_, src))| {
            let src = src.as_ref();
            let same_len = by_len.entry(src.len()).or_default();
            let first = same_len
                .iter()
                .copied()
                .find(|&j| files[j].1.as_ref() == src);
            if first.is_none() {
                same_len.push(i);
            }
            first
        })
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
    /// Never free them, nor a chart render's loaded chart, values and outputs: for a one-shot process such as
    /// `fleet helm template`, whose exit reclaims the memory.
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

/// The policy [`set_drop_policy`] chose ([`DropPolicy::Inline`] until it is called).
fn drop_policy() -> DropPolicy {
    match DROP_POLICY.load(std::sync::atomic::Ordering::Relaxed) {
        1 => DropPolicy::Background,
        2 => DropPolicy::Leak,
        _ => DropPolicy::Inline,
    }
}

/// Whether the process chose [`DropPolicy::Leak`].
pub(crate) fn leaking() -> bool {
    drop_policy() == DropPolicy::Leak
}

/// Sets above this many templates are the ones [`DropPolicy::Background`] and [`DropPolicy::Leak`] treat specially.
const LARGE_SET_TEMPLATES: usize = 64;

impl Drop for TemplateSet {
    fn drop(&mut self) {
        if self.templates.len() <= LARGE_SET_TEMPLATES {
            return;
        }
        match drop_policy() {
            DropPolicy::Background => {
                let templates = std::mem::take(&mut self.templates);
                let _ = std::thread::Builder::new()
                    .name("template-drop".into())
                    .spawn(move || drop(templates));
            }
            DropPolicy::Leak => std::mem::forget(std::mem::take(&mut self.templates)),
            DropPolicy::Inline => {}
        }
    }
}

#[cfg(test)]
mod tests;
