//! The evaluator: walks a parsed template with Go `text/template` semantics — dot and `$`, variable scopes that end
//! with their control structure, the piped value passed as the last argument, lazy `and`/`or`, Go truthiness,
//! `range` over lists, sorted maps and integers with `break`/`continue`, `missingkey=zero`, and `<no value>` for
//! printed nils. Calls go through [`crate::funcs::Funcs`]; `include` and `tpl` are bound here because they need the
//! template set. A fuel counter bounds the work a template can do and a depth limit bounds recursion.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use minijinja::value::ValueKind;

use super::ast::{Arg, Branch, Code, Command, FieldPath, List, Node, Number, Pipeline};
use super::parse::DOLLAR;
use super::{TemplateError, TemplateSet, Tmpl, line_col, parse};
use crate::call::{Call, Func, FuncError};
use crate::funcs::Funcs;
use crate::gofmt::to_go_string;
use crate::value::{Value, as_map, is_nil, nil, truthy};

/// Default fuel: enough for the largest real charts many times over, small enough to stop a hostile loop quickly.
pub const DEFAULT_FUEL: u64 = 50_000_000;
/// Maximum nesting of `template`/`include`/`tpl` calls.
pub const MAX_TEMPLATE_DEPTH: usize = 200;
/// Maximum size of one template's output.
pub const MAX_OUTPUT: usize = 256 << 20;

/// Most `tpl` strings kept parsed (a bound on memory for charts that make endless distinct strings).
const TPL_CACHE_ENTRIES: usize = 4096;

static METHOD_ENV: LazyLock<minijinja::Environment<'static>> =
    LazyLock::new(minijinja::Environment::new);

/// Execution limits and state shared by all templates rendered in one chart render.
pub struct Exec<'a> {
    set: &'a TemplateSet,
    funcs: &'a Funcs,
    /// Templates defined by strings passed to `tpl`, innermost last.
    overlays: Vec<Arc<TplOverlay>>,
    /// Strings `tpl` has parsed, by template name and text: charts pass the same strings for every resource.
    tpl_cache: HashMap<String, HashMap<String, TplParsed>>,
    /// Entries in `tpl_cache`.
    tpl_cached: usize,
    /// Buffers and variable stacks of finished `include`/`tpl` calls and template runs, kept for the next: charts
    /// make thousands of small calls, and each would otherwise grow new ones from empty.
    spare: Spare,
    fuel: u64,
    depth: usize,
    /// Seedable randomness for `rand*`, `uuidv4` and key generators.
    pub rng: crate::rng::Rng,
    /// Set when a string that is not UTF-8 was printed: what Helm's YAML parser will say about the output.
    pub invalid_utf8: Option<&'static str>,
    missing_key: MissingKey,
}

/// What a field of a map that has no such key gives: Go's `missingkey` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// Nil (`missingkey=zero`, and the default for maps of interfaces): printed as `<no value>`. Helm's choice.
    #[default]
    Zero,
    /// An error, `map has no entry for key "NAME"` (`missingkey=error`).
    Error,
}

/// The templates a `tpl` string defines, by name.
type TplOverlay = HashMap<Arc<str>, Arc<Tmpl>>;
/// A parsed `tpl` string: its body and the templates it defines.
type TplParsed = (Arc<Tmpl>, Arc<TplOverlay>);

/// Most spare buffers kept, and the largest capacity kept (a rare huge output is not held on to).
const SPARE_KEPT: usize = 32;
const SPARE_MAX_CAPACITY: usize = 64 << 10;

type Vars = Vec<(Arc<str>, Value)>;

#[derive(Default)]
struct Spare {
    buffers: Vec<String>,
    vars: Vec<Vars>,
    /// Argument vectors of finished function calls: a chart makes thousands of calls.
    args: Vec<Vec<Value>>,
}

impl Spare {
    fn buffer(&mut self) -> String {
        self.buffers.pop().unwrap_or_default()
    }

    fn keep_buffer(&mut self, mut b: String) {
        if self.buffers.len() < SPARE_KEPT && b.capacity() <= SPARE_MAX_CAPACITY {
            b.clear();
            self.buffers.push(b);
        }
    }

    fn vars(&mut self) -> Vars {
        self.vars.pop().unwrap_or_default()
    }

    fn keep_vars(&mut self, mut v: Vars) {
        if self.vars.len() < SPARE_KEPT {
            v.clear();
            self.vars.push(v);
        }
    }

    fn args(&mut self) -> Vec<Value> {
        self.args.pop().unwrap_or_default()
    }

    fn keep_args(&mut self, mut v: Vec<Value>) {
        if self.args.len() < SPARE_KEPT {
            v.clear();
            self.args.push(v);
        }
    }
}

enum Flow {
    Normal,
    Break,
    Continue,
}

type R<T> = Result<T, TemplateError>;

/// The state of one template execution: the template (for error positions), the commands and arguments its
/// pipelines refer to, and the variable stack.
struct Scope<'t> {
    tmpl: &'t Tmpl,
    code: &'t Code,
    vars: Vars,
}

impl<'a> Exec<'a> {
    pub fn new(set: &'a TemplateSet, funcs: &'a Funcs) -> Self {
        Exec {
            set,
            funcs,
            overlays: Vec::new(),
            tpl_cache: HashMap::new(),
            tpl_cached: 0,
            spare: Spare::default(),
            fuel: DEFAULT_FUEL,
            depth: 0,
            rng: crate::rng::Rng::default(),
            invalid_utf8: None,
            missing_key: MissingKey::Zero,
        }
    }

    pub fn with_missing_key(mut self, missing_key: MissingKey) -> Self {
        self.missing_key = missing_key;
        self
    }

    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = fuel;
        self
    }

    fn lookup(&self, name: &str) -> Option<Arc<Tmpl>> {
        for o in self.overlays.iter().rev() {
            if let Some(t) = o.get(name) {
                return Some(t.clone());
            }
        }
        self.set.get(name)
    }

    /// Executes the named template with `data` as dot and `$`.
    pub fn execute(&mut self, name: &str, data: &Value) -> R<String> {
        let Some(tmpl) = self.lookup(name) else {
            return Err(TemplateError::Exec(format!(
                "template: no template {name:?} associated with template {name:?}"
            )));
        };
        let mut out = String::new();
        self.run(tmpl, data, &mut out)?;
        Ok(out)
    }

    fn run(&mut self, tmpl: Arc<Tmpl>, data: &Value, out: &mut String) -> R<()> {
        if self.depth >= MAX_TEMPLATE_DEPTH {
            return Err(TemplateError::Exec(format!(
                "template: {}: exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})",
                tmpl.name
            )));
        }
        self.depth += 1;
        let mut vars = self.spare.vars();
        vars.push((DOLLAR.clone(), data.clone()));
        let mut scope = Scope {
            tmpl: &tmpl,
            code: tmpl.code(),
            vars,
        };
        let r = self.walk_list(&mut scope, data, tmpl.body(), out);
        self.spare.keep_vars(scope.vars);
        self.depth -= 1;
        r.map(|_| ())
    }

    fn error(
        &self,
        scope: &Scope<'_>,
        pos: usize,
        context: &str,
        msg: impl std::fmt::Display,
    ) -> TemplateError {
        let (line, col) = line_col(scope.tmpl.src(), pos);
        TemplateError::At(Box::new(super::ExecAt {
            location: format!("{}:{line}:{col}", scope.tmpl.file),
            name: scope.tmpl.name.to_string(),
            // Whole: Go's `ErrorContext` cut it at 20 characters once, but helm v4's Go does not.
            context: context.to_string(),
            message: msg.to_string(),
        }))
    }

    fn location(&self, scope: &Scope<'_>, pos: usize) -> String {
        let (line, col) = line_col(scope.tmpl.src(), pos);
        format!("{}:{line}:{col}", scope.tmpl.file)
    }

    fn burn(&mut self, scope: &Scope<'_>, amount: u64) -> R<()> {
        if self.fuel < amount {
            self.fuel = 0;
            return Err(TemplateError::Budget(scope.tmpl.file.to_string()));
        }
        self.fuel -= amount;
        Ok(())
    }

    fn walk_list(
        &mut self,
        scope: &mut Scope<'_>,
        dot: &Value,
        list: &List,
        out: &mut String,
    ) -> R<Flow> {
        for node in list {
            self.burn(scope, 1)?;
            if out.len() > MAX_OUTPUT {
                return Err(TemplateError::Budget(scope.tmpl.file.to_string()));
            }
            match node {
                Node::Text { start, end } => out.push_str(&scope.tmpl.src()[*start..*end]),
                Node::Action(pipe) => {
                    let v = self.eval_pipeline(scope, dot, pipe)?;
                    if pipe.decl.is_empty() {
                        if let Some(b) = v.downcast_object_ref::<crate::value::GoByteString>() {
                            self.invalid_utf8.get_or_insert(b.yaml_error());
                        }
                        print_value(out, &v);
                    }
                }
                Node::If(b) | Node::With(b) => {
                    let is_with = matches!(node, Node::With(_));
                    let mark = scope.vars.len();
                    let v = self.eval_pipeline(scope, dot, &b.pipe)?;
                    let flow = if truthy(&v) {
                        let new_dot = if is_with { v } else { dot.clone() };
                        self.walk_list(scope, &new_dot, &b.list, out)?
                    } else if let Some(e) = &b.else_list {
                        self.walk_list(scope, dot, e, out)?
                    } else {
                        Flow::Normal
                    };
                    scope.vars.truncate(mark);
                    if !matches!(flow, Flow::Normal) {
                        return Ok(flow);
                    }
                }
                Node::Range(b) => self.walk_range(scope, dot, b, out)?,
                Node::Template { pos, name, pipe } => {
                    let data = match pipe {
                        Some(p) => self.eval_pipeline(scope, dot, p)?,
                        None => nil(),
                    };
                    let Some(t) = self.lookup(name) else {
                        let ctx = format!("{{{{template {name:?}}}}}");
                        return Err(self.error(
                            scope,
                            *pos,
                            &ctx,
                            format!("template {name:?} not defined"),
                        ));
                    };
                    self.run(t, &data, out)?;
                }
                Node::Break(_) => return Ok(Flow::Break),
                Node::Continue(_) => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk_range(
        &mut self,
        scope: &mut Scope<'_>,
        dot: &Value,
        b: &Branch,
        out: &mut String,
    ) -> R<()> {
        let mark = scope.vars.len();
        let coll = self.eval_cmds(scope, dot, &b.pipe)?;
        let items: Vec<(Value, Value)> = match coll.kind() {
            ValueKind::Seq => match coll.try_iter() {
                Ok(elems) => elems
                    .enumerate()
                    .map(|(i, v)| (Value::from(i as i64), v))
                    .collect(),
                Err(_) => Vec::new(),
            },
            ValueKind::Map => as_map(&coll)
                .map(|m| {
                    // The entries as they are now (the body may change the map), without copying the map itself.
                    m.lock()
                        .iter()
                        .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            ValueKind::Number if coll.is_integer() => {
                let n = coll.as_i64().unwrap_or(0).max(0);
                self.burn(scope, n as u64)?;
                (0..n).map(|i| (Value::from(i), Value::from(i))).collect()
            }
            ValueKind::None | ValueKind::Undefined => Vec::new(),
            _ => {
                let ctx = scope.code.show(&b.pipe).to_string();
                return Err(self.error(
                    scope,
                    b.pipe.pos,
                    &ctx,
                    format!("range can't iterate over {}", to_go_string(&coll)),
                ));
            }
        };
        if items.is_empty() {
            if let Some(e) = &b.else_list {
                self.walk_list(scope, dot, e, out)?;
            }
            scope.vars.truncate(mark);
            return Ok(());
        }
        for (key, elem) in items {
            match b.pipe.decl.len() {
                0 => {}
                1 => self.bind(scope, &b.pipe, 0, elem.clone()),
                _ => {
                    self.bind(scope, &b.pipe, 0, key);
                    self.bind(scope, &b.pipe, 1, elem.clone());
                }
            }
            let inner_mark = scope.vars.len();
            let flow = self.walk_list(scope, &elem, &b.list, out)?;
            scope.vars.truncate(inner_mark);
            if matches!(flow, Flow::Break) {
                break;
            }
        }
        scope.vars.truncate(mark);
        Ok(())
    }

    /// Binds the `i`th declared variable of a range pipeline for one iteration.
    fn bind(&self, scope: &mut Scope<'_>, pipe: &Pipeline, i: usize, value: Value) {
        let name = &pipe.decl[i];
        if pipe.is_assign {
            set_var(scope, name, value);
        } else if let Some(slot) = scope.vars.iter_mut().rev().find(|(n, _)| n == name) {
            slot.1 = value;
        } else {
            scope.vars.push((name.clone(), value));
        }
    }

    fn eval_cmds(&mut self, scope: &mut Scope<'_>, dot: &Value, pipe: &Pipeline) -> R<Value> {
        let mut value: Option<Value> = None;
        let code = scope.code;
        for cmd in code.cmds(pipe) {
            value = Some(self.eval_command(scope, dot, cmd, value)?);
        }
        Ok(value.unwrap_or_default())
    }

    fn eval_pipeline(&mut self, scope: &mut Scope<'_>, dot: &Value, pipe: &Pipeline) -> R<Value> {
        let value = self.eval_cmds(scope, dot, pipe)?;
        for name in &pipe.decl {
            if pipe.is_assign {
                set_var(scope, name, value.clone());
            } else {
                scope.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn eval_command(
        &mut self,
        scope: &mut Scope<'_>,
        dot: &Value,
        cmd: &Command,
        fin: Option<Value>,
    ) -> R<Value> {
        self.burn(scope, 1)?;
        let call = scope.code.args(cmd);
        let Some((first, rest)) = call.split_first() else {
            return Err(self.error(scope, cmd.pos, "", "empty command"));
        };
        match first {
            Arg::Identifier { name, pos, func } => {
                self.eval_function(scope, dot, (cmd.pos, call), (name, *func), *pos, rest, fin)
            }
            Arg::Field { pos, idents } => {
                self.eval_field_chain(scope, dot, dot.clone(), idents, rest, fin, *pos, first)
            }
            Arg::Variable { pos, name, idents } => {
                let v = self.var(scope, name, *pos)?;
                if idents.is_empty() {
                    self.no_args(scope, first, rest, &fin)?;
                    return Ok(v);
                }
                self.eval_field_chain(scope, dot, v, idents, rest, fin, *pos, first)
            }
            Arg::Chain { pos, node, fields } => {
                let v = self.eval_arg(scope, dot, node)?;
                self.eval_field_chain(scope, dot, v, fields, rest, fin, *pos, first)
            }
            Arg::Pipe(p) => {
                self.no_args(scope, first, rest, &fin)?;
                let mark = scope.vars.len();
                let v = self.eval_pipeline(scope, dot, p);
                scope.vars.truncate(mark);
                v
            }
            _ => {
                self.no_args(scope, first, rest, &fin)?;
                self.eval_arg(scope, dot, first)
            }
        }
    }

    fn no_args(&self, scope: &Scope<'_>, first: &Arg, rest: &[Arg], fin: &Option<Value>) -> R<()> {
        let first_pos = first.pos();
        if !rest.is_empty() || fin.is_some() {
            let first = scope.code.show(first).to_string();
            return Err(self.error(
                scope,
                first_pos,
                &first,
                format!("can't give argument to non-function {first}"),
            ));
        }
        Ok(())
    }

    fn var(&self, scope: &Scope<'_>, name: &str, pos: usize) -> R<Value> {
        match scope.vars.iter().rev().find(|(n, _)| &**n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.error(scope, pos, name, format!("undefined variable: {name}"))),
        }
    }

    fn eval_arg(&mut self, scope: &mut Scope<'_>, dot: &Value, arg: &Arg) -> R<Value> {
        Ok(match arg {
            Arg::Dot(_) => dot.clone(),
            Arg::Nil(_) => nil(),
            Arg::Bool(b) => Value::from(*b),
            Arg::String(s) => Value::from(s.clone()),
            Arg::Number { value, .. } => match value {
                Number::Int(i) => Value::from(*i),
                Number::Float(f) => Value::from(*f),
            },
            Arg::Field { pos, idents } => {
                self.eval_field_chain(scope, dot, dot.clone(), idents, &[], None, *pos, arg)?
            }
            Arg::Variable { pos, name, idents } => {
                let v = self.var(scope, name, *pos)?;
                if idents.is_empty() {
                    v
                } else {
                    self.eval_field_chain(scope, dot, v, idents, &[], None, *pos, arg)?
                }
            }
            Arg::Chain { pos, node, fields } => {
                let v = self.eval_arg(scope, dot, node)?;
                self.eval_field_chain(scope, dot, v, fields, &[], None, *pos, arg)?
            }
            Arg::Pipe(p) => {
                let mark = scope.vars.len();
                let v = self.eval_pipeline(scope, dot, p);
                scope.vars.truncate(mark);
                v?
            }
            Arg::Identifier { name, pos, func } => {
                let call = (*pos, std::slice::from_ref(arg));
                self.eval_function(scope, dot, call, (name, *func), *pos, &[], None)?
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain(
        &mut self,
        scope: &mut Scope<'_>,
        dot: &Value,
        mut receiver: Value,
        idents: &FieldPath,
        args: &[Arg],
        fin: Option<Value>,
        pos: usize,
        node: &Arg,
    ) -> R<Value> {
        // Go turns a nil produced by a variable, a parenthesized pipeline or dot into an invalid value, and a field of
        // an invalid value is simply missing; only a nil met inside the chain is a "nil pointer" error.
        if is_nil(&receiver) {
            return Ok(nil());
        }
        let mut rest = idents.as_str();
        while !rest.is_empty() {
            // The next name, and whether it is the chain's last.
            let (field, last) = match rest.bytes().position(|b| b == b'.') {
                Some(at) => {
                    let field = &rest[..at];
                    rest = &rest[at + 1..];
                    (field, false)
                }
                None => (std::mem::take(&mut rest), true),
            };
            let has_args = last && (!args.is_empty() || fin.is_some());
            // Objects other than our plain maps (the common case, which have no methods) may have methods
            // (`.Files.Get`, `.Capabilities.APIVersions.Has`); as in Go, a method wins over a map key of the same name.
            if !has_args && let Some(m) = receiver.downcast_object_ref::<crate::value::GoMap>() {
                receiver = match m.get(field) {
                    Some(v) => v,
                    None => self.missing(scope, pos, node, field)?,
                };
                continue;
            }
            let plain_map = receiver
                .downcast_object_ref::<crate::value::GoMap>()
                .is_some();
            if !plain_map && receiver.as_object().is_some() {
                let mut call_args = Vec::new();
                if last {
                    for a in args {
                        call_args.push(self.eval_arg(scope, dot, a)?);
                    }
                    if let Some(f) = &fin {
                        call_args.push(f.clone());
                    }
                }
                let mut state = METHOD_ENV.empty_state();
                match receiver.call_method(&mut state, field, &call_args) {
                    Ok(v) => {
                        receiver = v;
                        continue;
                    }
                    Err(e) if e.kind() == minijinja::ErrorKind::UnknownMethod => {}
                    Err(e) => {
                        let detail = e
                            .detail()
                            .map(str::to_string)
                            .unwrap_or_else(|| e.to_string());
                        return Err(self.error(
                            scope,
                            pos,
                            &scope.code.show(node).to_string(),
                            format!("error calling {field}: {detail}"),
                        ));
                    }
                }
            }
            receiver = match receiver.kind() {
                ValueKind::Map => {
                    if has_args {
                        return Err(self.error(
                            scope,
                            pos,
                            &scope.code.show(node).to_string(),
                            format!("{field} is not a method but has arguments"),
                        ));
                    }
                    let found = match receiver.downcast_object_ref::<crate::value::GoMap>() {
                        Some(m) => m.get(field),
                        None => receiver.get_attr(field).ok().filter(|v| !v.is_undefined()),
                    };
                    match found {
                        Some(v) => v,
                        None => self.missing(scope, pos, node, field)?,
                    }
                }
                ValueKind::None | ValueKind::Undefined => {
                    return Err(self.error(
                        scope,
                        pos,
                        &scope.code.show(node).to_string(),
                        format!("nil pointer evaluating interface {{}}.{field}"),
                    ));
                }
                _ => {
                    return Err(self.error(
                        scope,
                        pos,
                        &scope.code.show(node).to_string(),
                        format!(
                            "can't evaluate field {field} in type {}",
                            crate::value::type_name(&receiver)
                        ),
                    ));
                }
            };
        }
        Ok(receiver)
    }

    /// The value of a map's missing key `field`, as the `missingkey` option says.
    #[cold]
    fn missing(&self, scope: &Scope<'_>, pos: usize, node: &Arg, field: &str) -> R<Value> {
        match self.missing_key {
            MissingKey::Zero => Ok(Value::default()),
            MissingKey::Error => Err(self.error(
                scope,
                pos,
                &scope.code.show(node).to_string(),
                format!("map has no entry for key {field:?}"),
            )),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_function(
        &mut self,
        scope: &mut Scope<'_>,
        dot: &Value,
        (cmd_pos, call): (usize, &[Arg]),
        (name, func): (&str, Option<Func>),
        pos: usize,
        args: &[Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        self.burn(scope, 1)?;
        if name == "and" || name == "or" {
            let want = name == "or";
            if args.is_empty() && fin.is_none() {
                return Err(self.error(
                    scope,
                    pos,
                    name,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut v = nil();
            for a in args {
                v = self.eval_arg(scope, dot, a)?;
                if truthy(&v) == want {
                    return Ok(v);
                }
            }
            if let Some(f) = fin {
                v = f;
            }
            return Ok(v);
        }
        if func.is_none() && self.funcs.late_bound(name).is_none() {
            return Err(self.error(scope, pos, name, format!("function {name:?} not defined")));
        }
        let mut values = self.spare.args();
        for a in args {
            values.push(self.eval_arg(scope, dot, a)?);
        }
        if let Some(f) = fin {
            values.push(f);
        }
        let result = match (func, name) {
            (Some(f), _) => self.call(f, &values),
            (None, "include") => self.include(&values),
            (None, "tpl") => self.tpl(scope, &values),
            (None, _) => match self.funcs.get(name) {
                Some(f) => self.call(f, &values),
                None => Err(CallError::Func(FuncError::Msg(format!(
                    "function {name:?} not defined"
                )))),
            },
        };
        self.spare.keep_args(values);
        result.map_err(|e| match e {
            CallError::Func(FuncError::Msg(m)) => self.error(
                scope,
                cmd_pos,
                &scope.code.show(call).to_string(),
                format!("error calling {name}: {m}"),
            ),
            CallError::Func(FuncError::Fail(m)) => TemplateError::Fail {
                location: self.location(scope, cmd_pos),
                message: m,
            },
            CallError::Nested(e) => e,
        })
    }

    /// Calls a function of the table with what it may use of this render.
    fn call(&mut self, f: Func, args: &[Value]) -> Result<Value, CallError> {
        Ok(f(&mut Call { rng: &mut self.rng }, args)?)
    }

    /// Helm's `include NAME DATA`: renders a named template to a string.
    fn include(&mut self, args: &[Value]) -> Result<Value, CallError> {
        let (name, data) = text_and_data("include", args)?;
        let Some(t) = self.lookup(&name) else {
            return Err(CallError::msg(format!(
                "template: no template {name:?} associated with template \"gotpl\""
            )));
        };
        let mut out = self.spare.buffer();
        let r = self.run(t, data, &mut out);
        let value = Value::from(out.as_str());
        self.spare.keep_buffer(out);
        r.map_err(CallError::Nested)?;
        Ok(value)
    }

    /// Helm's `tpl TEXT DATA`: parses TEXT as a template (seeing the chart's named templates) and renders it.
    fn tpl(&mut self, scope: &Scope<'_>, args: &[Value]) -> Result<Value, CallError> {
        let (text, data) = text_and_data("tpl", args)?;
        let text = text.as_ref();
        let name = as_map(data)
            .and_then(|m| m.get("Template"))
            .and_then(|t| as_map(&t).and_then(|t| t.get("Name")));
        let name = name
            .as_ref()
            .and_then(|n| n.as_str())
            .unwrap_or(&scope.tmpl.file);
        let cached = self.tpl_cache.get(name).and_then(|m| m.get(text)).cloned();
        let (root, overlay) = match cached {
            Some(cached) => cached,
            None => {
                let parsed = parse_tpl(name, text)?;
                if self.tpl_cached < TPL_CACHE_ENTRIES {
                    self.tpl_cached += 1;
                    self.tpl_cache
                        .entry(name.to_string())
                        .or_default()
                        .insert(text.to_string(), parsed.clone());
                }
                parsed
            }
        };
        self.overlays.push(overlay);
        let mut out = self.spare.buffer();
        let r = self.run(root, data, &mut out);
        self.overlays.pop();
        let value = match without_no_value(&out) {
            Some(cleaned) => Value::from(cleaned),
            None => Value::from(out.as_str()),
        };
        self.spare.keep_buffer(out);
        r.map_err(CallError::Nested)?;
        Ok(value)
    }
}

/// The two arguments of `include` and `tpl` (`func`): a text (a template's name or source, printed as Go
/// prints it when it is not a string) and the data to render with.
fn text_and_data<'a>(
    func: &str,
    args: &'a [Value],
) -> Result<(Cow<'a, str>, &'a Value), CallError> {
    let [text, data] = args else {
        return Err(CallError::msg(format!(
            "wrong number of args for {func}: want 2 got {}",
            args.len()
        )));
    };
    let text = match text.as_str() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(to_go_string(text)),
    };
    Ok((text, data))
}

/// Why a call failed: the function's own error, or (`include`, `tpl`) the nested template's, passed on unchanged.
enum CallError {
    Func(FuncError),
    Nested(TemplateError),
}

impl CallError {
    fn msg(message: String) -> CallError {
        CallError::Func(FuncError::Msg(message))
    }
}

impl From<FuncError> for CallError {
    fn from(e: FuncError) -> CallError {
        CallError::Func(e)
    }
}

/// Parses a `tpl` string as the template `name`: its body and the templates it defines.
fn parse_tpl(name: &str, text: &str) -> Result<(Arc<Tmpl>, Arc<TplOverlay>), FuncError> {
    let tree = parse::parse(name, text)
        .map_err(|e| FuncError::Msg(format!("cannot parse template {text:?}: {e}")))?;
    let tree = Arc::new(tree);
    let mut overlay = HashMap::new();
    let mut root = None;
    for t in Tmpl::each(name, &tree) {
        if t.is_file_body() {
            root = Some(Arc::new(t));
        } else {
            overlay.insert(t.name.clone(), Arc::new(t));
        }
    }
    let root = root.ok_or_else(|| FuncError::Msg("the template parser failed".into()))?;
    Ok((root, Arc::new(overlay)))
}

fn set_var(scope: &mut Scope<'_>, name: &str, value: Value) {
    if let Some(slot) = scope.vars.iter_mut().rev().find(|(n, _)| &**n == name) {
        slot.1 = value;
    }
}

/// What Go's text/template prints for nil.
const NO_VALUE: &str = "<no value>";

/// Helm removes every `<no value>` from a template's output (and from `tpl`'s): the text without them, or `None`
/// when there is none to remove (most outputs), so the caller keeps its text as it is.
pub(crate) fn without_no_value(out: &str) -> Option<String> {
    out.contains(NO_VALUE).then(|| out.replace(NO_VALUE, ""))
}

/// Prints an action's value as Go's text/template does: nil is `<no value>`.
fn print_value(out: &mut String, v: &Value) {
    if is_nil(v) {
        out.push_str(NO_VALUE);
    } else if let Some(s) = v.as_str() {
        out.push_str(s);
    } else {
        out.push_str(&to_go_string(v));
    }
}
