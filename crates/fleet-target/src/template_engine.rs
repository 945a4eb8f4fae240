//! A small Go `text/template` interpreter for Fleet's `${ }` values templates, used unless the
//! caller plugs in a complete engine through [`ValuesTemplater`] (the Helm engine can).
//!
//! Supported: text and `${ pipeline }` actions with `${-`/`-}` trimming; field chains
//! (`.ClusterLabels.env`, `$.ClusterName`); string, number, `true`/`false`/`nil` literals;
//! parenthesised pipelines; `|` pipes (the piped value is the last argument); `if`/`else if`/
//! `else`/`end`; `range` over lists and maps (sorted keys) with `$v :=` or `$k, $v :=`
//! variables and `else`; and the functions `index`, `default`, `empty`, `coalesce`, `ternary`, `eq`, `ne`,
//! `lt`, `le`, `gt`, `ge`, `and`, `or`, `not`, `quote`, `squote`, `upper`, `lower`, `title`,
//! `trim`, `trimPrefix`, `trimSuffix`, `replace`, `contains`, `hasPrefix`, `hasSuffix`, `trunc`,
//! `printf` (`%s %d %v %q %%`), `toString`, `toJson`, `hasKey`, `len`, `list`, `join`,
//! `first`, `last`, `int`. Missing map keys reached
//! through a field chain are errors (`missingkey=error`, as Fleet sets it); `index` yields nil.
//! Anything else is a clear "function not defined" or syntax error, never a wrong output.

use serde_json::Value;

/// Renders one template string against a JSON context.
pub trait ValuesTemplater {
    /// Renders `template` (with `${ }` delimiters) against `context`; the error is a message
    /// without the field or cluster (the caller adds those).
    fn render(&self, template: &str, context: &Value) -> Result<String, String>;
}

/// The built-in interpreter described in the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinTemplater;

impl ValuesTemplater for BuiltinTemplater {
    fn render(&self, template: &str, context: &Value) -> Result<String, String> {
        let nodes = parse(template)?;
        let mut out = String::new();
        let mut scope = Scope {
            root: context,
            dot: None,
            vars: Vec::new(),
        };
        exec(&nodes, &mut scope, &mut out)?;
        Ok(out)
    }
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Action(Pipeline),
    If {
        branches: Vec<(Pipeline, Vec<Node>)>,
        otherwise: Vec<Node>,
    },
    Range {
        key_var: Option<String>,
        value_var: Option<String>,
        over: Pipeline,
        body: Vec<Node>,
        otherwise: Vec<Node>,
    },
}

type Pipeline = Vec<Command>;

#[derive(Debug, Clone)]
struct Command {
    args: Vec<Arg>,
}

#[derive(Debug, Clone)]
enum Arg {
    /// A field chain from dot (`.a.b`; empty for `.`).
    Field(Vec<String>),
    /// A variable (`$` is the root) and a field chain after it.
    Var(String, Vec<String>),
    Func(String),
    Literal(Value),
    Sub(Pipeline),
}

// ---------- lexing actions ----------

/// Splits the template into text and raw action bodies, applying trim markers.
fn split(template: &str) -> Result<Vec<(bool, String)>, String> {
    let mut parts: Vec<(bool, String)> = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let mut text = rest[..start].to_string();
        let mut body_start = start + 2;
        if rest[body_start..].starts_with("- ") || rest[body_start..].starts_with("-\n") {
            text = text.trim_end().to_string();
            body_start += 1;
        }
        parts.push((false, text));
        let end = find_close(&rest[body_start..])
            .ok_or_else(|| format!("unclosed action: missing \"}}\" after {:?}", &rest[start..]))?;
        let mut body = &rest[body_start..body_start + end];
        let mut after = body_start + end + 1;
        let trim_right = body.ends_with(" -") || body.ends_with("\n-");
        if trim_right {
            body = &body[..body.len() - 1];
        }
        parts.push((true, body.trim().to_string()));
        if trim_right {
            let skipped = rest[after..].len() - rest[after..].trim_start().len();
            after += skipped;
        }
        rest = &rest[after..];
    }
    parts.push((false, rest.to_string()));
    Ok(parts)
}

/// Position of the `}` closing an action, skipping string literals.
fn find_close(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '`' => quote = Some(c),
                '}' => return Some(i),
                _ => {}
            },
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Str(String),
    Num(f64),
    Pipe,
    Open,
    Close,
}

fn tokenize(body: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = body.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '|' => {
                tokens.push(Token::Pipe);
                i += 1;
            }
            '(' => {
                tokens.push(Token::Open);
                i += 1;
            }
            ')' => {
                tokens.push(Token::Close);
                i += 1;
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated quoted string".into()),
                        Some('"') => break,
                        Some('\\') => {
                            i += 1;
                            match chars.get(i) {
                                Some('n') => s.push('\n'),
                                Some('t') => s.push('\t'),
                                Some(other) => s.push(*other),
                                None => return Err("unterminated quoted string".into()),
                            }
                        }
                        Some(ch) => s.push(*ch),
                    }
                    i += 1;
                }
                i += 1;
                tokens.push(Token::Str(s));
            }
            '`' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&ch| ch == '`')
                    .ok_or("unterminated raw string")?;
                tokens.push(Token::Str(chars[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !"|()\"`".contains(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let numeric = word.starts_with(|ch: char| ch.is_ascii_digit())
                    || (word.starts_with('-') && word.len() > 1 && !word.starts_with("-."));
                match word.parse::<f64>() {
                    Ok(n) if numeric => tokens.push(Token::Num(n)),
                    _ => tokens.push(Token::Word(word)),
                }
            }
        }
    }
    Ok(tokens)
}

// ---------- parsing ----------

fn parse(template: &str) -> Result<Vec<Node>, String> {
    let parts = split(template)?;
    let mut iter = parts.into_iter().peekable();
    let (nodes, terminator) = parse_block(&mut iter, 0)?;
    match terminator {
        None => Ok(nodes),
        Some(t) => Err(format!("unexpected {{{{{t}}}}}")),
    }
}

type Parts = std::iter::Peekable<std::vec::IntoIter<(bool, String)>>;

/// Parses nodes until `end`/`else` (returned as the terminator) or the end of input.
/// Deepest nesting of `if`/`range` blocks or parentheses accepted.
const MAX_NESTING: usize = 64;

fn parse_block(parts: &mut Parts, depth: usize) -> Result<(Vec<Node>, Option<String>), String> {
    if depth > MAX_NESTING {
        return Err(format!("blocks nested deeper than {MAX_NESTING}"));
    }
    let mut nodes = Vec::new();
    while let Some((is_action, body)) = parts.next() {
        if !is_action {
            if !body.is_empty() {
                nodes.push(Node::Text(body));
            }
            continue;
        }
        if body.starts_with("/*") {
            continue;
        }
        let keyword = body.split_whitespace().next().unwrap_or("");
        match keyword {
            "end" | "else" => return Ok((nodes, Some(body))),
            "if" => nodes.push(parse_if(parts, body["if".len()..].trim(), depth + 1)?),
            "range" => nodes.push(parse_range(parts, body["range".len()..].trim(), depth + 1)?),
            "with" | "define" | "template" | "block" | "break" | "continue" => {
                return Err(format!(
                    "{keyword:?} is not supported by the built-in values templater"
                ));
            }
            _ => nodes.push(Node::Action(parse_pipeline(&body)?)),
        }
    }
    Ok((nodes, None))
}

fn parse_range(parts: &mut Parts, header: &str, depth: usize) -> Result<Node, String> {
    let (vars, over) = match header.split_once(":=") {
        Some((vars, over)) => (Some(vars), over),
        None => (None, header),
    };
    let (key_var, value_var) = match vars.map(|v| {
        v.split(',')
            .map(|s| s.trim().to_string())
            .collect::<Vec<_>>()
    }) {
        None => (None, None),
        Some(v) if v.iter().any(|n| !n.starts_with('$') || n.len() < 2) => {
            return Err(format!("bad range variable declaration {header:?}"));
        }
        Some(v) if v.len() == 1 => (None, v.into_iter().next()),
        Some(v) if v.len() == 2 => {
            let mut it = v.into_iter();
            (it.next(), it.next())
        }
        Some(_) => return Err("too many variables in range".into()),
    };
    let over = parse_pipeline(over.trim())?;
    let (body, terminator) = parse_block(parts, depth)?;
    let otherwise = match terminator.as_deref() {
        Some("end") => Vec::new(),
        Some("else") => {
            let (otherwise, terminator) = parse_block(parts, depth)?;
            if terminator.as_deref() != Some("end") {
                return Err("unexpected EOF: missing ${ end }".into());
            }
            otherwise
        }
        _ => return Err("unexpected EOF: missing ${ end }".into()),
    };
    Ok(Node::Range {
        key_var,
        value_var,
        over,
        body,
        otherwise,
    })
}

fn parse_if(parts: &mut Parts, condition: &str, depth: usize) -> Result<Node, String> {
    let mut branches = Vec::new();
    let mut condition = parse_pipeline(condition)?;
    loop {
        let (body, terminator) = parse_block(parts, depth)?;
        branches.push((condition, body));
        let terminator = terminator.ok_or("unexpected EOF: missing ${ end }")?;
        if terminator == "end" {
            return Ok(Node::If {
                branches,
                otherwise: Vec::new(),
            });
        }
        let rest = terminator["else".len()..].trim();
        if let Some(cond) = rest.strip_prefix("if ") {
            condition = parse_pipeline(cond.trim())?;
            continue;
        }
        if !rest.is_empty() {
            return Err(format!("unexpected {rest:?} after else"));
        }
        let (otherwise, terminator) = parse_block(parts, depth)?;
        if terminator.as_deref() != Some("end") {
            return Err("unexpected EOF: missing ${ end }".into());
        }
        return Ok(Node::If {
            branches,
            otherwise,
        });
    }
}

fn parse_pipeline(body: &str) -> Result<Pipeline, String> {
    let tokens = tokenize(body)?;
    let mut pos = 0;
    let pipeline = parse_tokens(&tokens, &mut pos, 0)?;
    if pos != tokens.len() {
        return Err(format!("unexpected {:?} in action", tokens[pos]));
    }
    Ok(pipeline)
}

fn parse_tokens(tokens: &[Token], pos: &mut usize, depth: usize) -> Result<Pipeline, String> {
    if depth > MAX_NESTING {
        return Err(format!("parentheses nested deeper than {MAX_NESTING}"));
    }
    let mut pipeline = Vec::new();
    let mut args = Vec::new();
    while let Some(token) = tokens.get(*pos) {
        *pos += 1;
        match token {
            Token::Close => {
                *pos -= 1;
                break;
            }
            Token::Pipe => {
                if args.is_empty() {
                    return Err("missing command before \"|\"".into());
                }
                pipeline.push(Command {
                    args: std::mem::take(&mut args),
                });
            }
            Token::Open => {
                let sub = parse_tokens(tokens, pos, depth + 1)?;
                if tokens.get(*pos) != Some(&Token::Close) {
                    return Err("unclosed left paren".into());
                }
                *pos += 1;
                args.push(Arg::Sub(sub));
            }
            Token::Str(s) => args.push(Arg::Literal(Value::String(s.clone()))),
            Token::Num(n) => args.push(Arg::Literal(number(*n))),
            Token::Word(w) => args.push(parse_word(w)?),
        }
    }
    if args.is_empty() {
        return Err("missing value for command".into());
    }
    pipeline.push(Command { args });
    Ok(pipeline)
}

fn parse_word(word: &str) -> Result<Arg, String> {
    match word {
        "true" => return Ok(Arg::Literal(Value::Bool(true))),
        "false" => return Ok(Arg::Literal(Value::Bool(false))),
        "nil" => return Ok(Arg::Literal(Value::Null)),
        "." => return Ok(Arg::Field(Vec::new())),
        _ => {}
    }
    let chain = |rest: &str| -> Result<Vec<String>, String> {
        let chain: Vec<String> = rest.split('.').map(String::from).collect();
        if chain.iter().any(String::is_empty) {
            return Err(format!("bad field chain {word:?}"));
        }
        Ok(chain)
    };
    if word.starts_with('$') {
        return Ok(match word.split_once('.') {
            Some((var, rest)) => Arg::Var(var.to_string(), chain(rest)?),
            None => Arg::Var(word.to_string(), Vec::new()),
        });
    }
    if let Some(rest) = word.strip_prefix('.') {
        return Ok(Arg::Field(chain(rest)?));
    }
    if FUNCTIONS.contains(&word) {
        Ok(Arg::Func(word.to_string()))
    } else {
        Err(format!("function {word:?} not defined"))
    }
}

const FUNCTIONS: &[&str] = &[
    "index",
    "default",
    "empty",
    "coalesce",
    "ternary",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "and",
    "or",
    "not",
    "quote",
    "squote",
    "upper",
    "lower",
    "title",
    "trim",
    "trimPrefix",
    "trimSuffix",
    "replace",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "trunc",
    "printf",
    "toString",
    "toJson",
    "hasKey",
    "len",
    "list",
    "join",
    "first",
    "last",
    "int",
];

// ---------- execution ----------

/// The root (`$`), dot (`None` while it is the root) and the variables in scope.
struct Scope<'r> {
    root: &'r Value,
    dot: Option<Value>,
    vars: Vec<(String, Value)>,
}

impl Scope<'_> {
    fn dot(&self) -> &Value {
        self.dot.as_ref().unwrap_or(self.root)
    }

    fn var(&self, name: &str) -> Result<&Value, String> {
        if name == "$" {
            return Ok(self.root);
        }
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("undefined variable {name:?}"))
    }
}

fn exec(nodes: &[Node], scope: &mut Scope<'_>, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Action(p) => out.push_str(&print(&eval_pipeline(p, scope)?)),
            Node::If {
                branches,
                otherwise,
            } => {
                let mut taken = false;
                for (cond, body) in branches {
                    if truthy(&eval_pipeline(cond, scope)?) {
                        exec(body, scope, out)?;
                        taken = true;
                        break;
                    }
                }
                if !taken {
                    exec(otherwise, scope, out)?;
                }
            }
            Node::Range {
                key_var,
                value_var,
                over,
                body,
                otherwise,
            } => {
                let items: Vec<(Value, Value)> = match eval_pipeline(over, scope)? {
                    Value::Array(a) => a
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| (Value::from(i), v))
                        .collect(),
                    Value::Object(o) => {
                        let mut entries: Vec<(String, Value)> = o.into_iter().collect();
                        entries.sort_by(|a, b| a.0.cmp(&b.0));
                        entries
                            .into_iter()
                            .map(|(k, v)| (Value::String(k), v))
                            .collect()
                    }
                    Value::Null => Vec::new(),
                    other => {
                        return Err(format!("range can't iterate over a {}", kind(&other)));
                    }
                };
                if items.is_empty() {
                    exec(otherwise, scope, out)?;
                    continue;
                }
                for (key, value) in items {
                    let saved_dot = scope.dot.replace(value.clone());
                    let depth = scope.vars.len();
                    if let Some(k) = key_var {
                        scope.vars.push((k.clone(), key));
                    }
                    if let Some(v) = value_var {
                        scope.vars.push((v.clone(), value));
                    }
                    let result = exec(body, scope, out);
                    scope.vars.truncate(depth);
                    scope.dot = saved_dot;
                    result?;
                }
            }
        }
    }
    Ok(())
}

fn eval_pipeline(pipeline: &Pipeline, scope: &Scope<'_>) -> Result<Value, String> {
    let mut piped: Option<Value> = None;
    for command in pipeline {
        piped = Some(eval_command(command, scope, piped.take())?);
    }
    piped.ok_or_else(|| "empty pipeline".to_string())
}

fn eval_command(
    command: &Command,
    scope: &Scope<'_>,
    piped: Option<Value>,
) -> Result<Value, String> {
    let (head, rest) = command.args.split_first().ok_or("empty command")?;
    match head {
        Arg::Func(name) => {
            let mut args = rest
                .iter()
                .map(|a| eval_arg(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            args.extend(piped);
            call(name, &args)
        }
        _ if !rest.is_empty() || piped.is_some() => {
            Err("can't give arguments to a non-function value".into())
        }
        _ => eval_arg(head, scope),
    }
}

fn eval_arg(arg: &Arg, scope: &Scope<'_>) -> Result<Value, String> {
    match arg {
        Arg::Literal(v) => Ok(v.clone()),
        Arg::Sub(p) => eval_pipeline(p, scope),
        Arg::Func(name) => call(name, &[]),
        Arg::Field(chain) => walk(scope.dot(), chain),
        Arg::Var(name, chain) => walk(scope.var(name)?, chain),
    }
}

/// Follows a field chain; a missing key is an error (`missingkey=error`).
fn walk(start: &Value, chain: &[String]) -> Result<Value, String> {
    let mut current = start;
    for key in chain {
        current = match current {
            Value::Object(map) => map
                .get(key)
                .ok_or_else(|| format!("map has no entry for key {key:?}"))?,
            Value::Null => return Ok(Value::Null),
            _ => return Err(format!("can't evaluate field {key} in a non-map value")),
        };
    }
    Ok(current.clone())
}

fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// The type of a value, for error messages (which never quote values: they may be secret).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Go's default formatting of a value (maps and lists print as JSON, a documented difference).
fn print(v: &Value) -> String {
    match v {
        Value::Null => "<no value>".into(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

fn as_str(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => print(other),
    }
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .zip(y.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y))
            .ok_or_else(|| "incomparable numbers".to_string()),
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        _ => Err(format!(
            "incompatible types for comparison: {} and {}",
            kind(a),
            kind(b)
        )),
    }
}

fn arity(name: &str, args: &[Value], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ))
    }
}

fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    let s = |i: usize| as_str(&args[i]);
    let string = |v: String| Ok(Value::String(v));
    match name {
        "index" => {
            let (first, keys) = args.split_first().ok_or("index of nothing")?;
            let mut current = first.clone();
            for key in keys {
                current = match (&current, key) {
                    (Value::Object(m), Value::String(k)) => {
                        m.get(k).cloned().unwrap_or(Value::Null)
                    }
                    (Value::Array(a), Value::Number(n)) => n
                        .as_u64()
                        .and_then(|i| a.get(i as usize).cloned())
                        .ok_or_else(|| format!("index out of range: {n}"))?,
                    (Value::Null, _) => Value::Null,
                    _ => {
                        return Err(format!(
                            "can't index a {} with a {}",
                            kind(&current),
                            kind(key)
                        ));
                    }
                };
            }
            Ok(current)
        }
        "default" => {
            arity(name, args, 2).or_else(|_| arity(name, args, 1))?;
            Ok(match args {
                [d, v] if !truthy(v) => d.clone(),
                [_, v] => v.clone(),
                [d] => d.clone(),
                _ => Value::Null,
            })
        }
        "empty" => {
            arity(name, args, 1)?;
            Ok(Value::Bool(!truthy(&args[0])))
        }
        "coalesce" => Ok(args
            .iter()
            .find(|v| truthy(v))
            .cloned()
            .unwrap_or(Value::Null)),
        "ternary" => {
            arity(name, args, 3)?;
            Ok(if truthy(&args[2]) {
                args[0].clone()
            } else {
                args[1].clone()
            })
        }
        "eq" => {
            let (first, rest) = args
                .split_first()
                .ok_or("missing argument for comparison")?;
            if rest.is_empty() {
                return Err("missing argument for comparison".into());
            }
            Ok(Value::Bool(rest.iter().any(|v| values_equal(first, v))))
        }
        "ne" => {
            arity(name, args, 2)?;
            Ok(Value::Bool(!values_equal(&args[0], &args[1])))
        }
        "lt" | "le" | "gt" | "ge" => {
            arity(name, args, 2)?;
            let ord = compare(&args[0], &args[1])?;
            Ok(Value::Bool(match name {
                "lt" => ord.is_lt(),
                "le" => ord.is_le(),
                "gt" => ord.is_gt(),
                _ => ord.is_ge(),
            }))
        }
        "and" => Ok(args
            .iter()
            .find(|v| !truthy(v))
            .or(args.last())
            .cloned()
            .unwrap_or(Value::Null)),
        "or" => Ok(args
            .iter()
            .find(|v| truthy(v))
            .or(args.last())
            .cloned()
            .unwrap_or(Value::Null)),
        "not" => {
            arity(name, args, 1)?;
            Ok(Value::Bool(!truthy(&args[0])))
        }
        "quote" => string(
            args.iter()
                .filter(|v| !v.is_null())
                .map(|v| format!("{:?}", as_str(v)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "squote" => string(
            args.iter()
                .filter(|v| !v.is_null())
                .map(|v| format!("'{}'", as_str(v)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "upper" | "lower" | "title" | "trim" | "toString" | "len" | "toJson" => {
            arity(name, args, 1)?;
            match name {
                "upper" => string(s(0).to_uppercase()),
                "lower" => string(s(0).to_lowercase()),
                "title" => string(title(&s(0))),
                "trim" => string(s(0).trim().to_string()),
                "toString" => string(s(0)),
                "toJson" => string(args[0].to_string()),
                _ => Ok(Value::from(match &args[0] {
                    Value::String(x) => x.len(),
                    Value::Array(a) => a.len(),
                    Value::Object(o) => o.len(),
                    other => return Err(format!("len of a {}", kind(other))),
                })),
            }
        }
        "trimPrefix" | "trimSuffix" | "contains" | "hasPrefix" | "hasSuffix" => {
            arity(name, args, 2)?;
            let (needle, hay) = (s(0), s(1));
            match name {
                "trimPrefix" => string(hay.strip_prefix(&needle).unwrap_or(&hay).to_string()),
                "trimSuffix" => string(hay.strip_suffix(&needle).unwrap_or(&hay).to_string()),
                "contains" => Ok(Value::Bool(hay.contains(&needle))),
                "hasPrefix" => Ok(Value::Bool(hay.starts_with(&needle))),
                _ => Ok(Value::Bool(hay.ends_with(&needle))),
            }
        }
        "replace" => {
            arity(name, args, 3)?;
            string(s(2).replace(&s(0), &s(1)))
        }
        "trunc" => {
            arity(name, args, 2)?;
            let n = args[0].as_i64().ok_or("trunc needs an integer length")?;
            let text: Vec<char> = s(1).chars().collect();
            let kept: String = if n >= 0 {
                text.iter().take(n as usize).collect()
            } else {
                text.iter()
                    .skip(text.len().saturating_sub(n.unsigned_abs() as usize))
                    .collect()
            };
            string(kept)
        }
        "hasKey" => {
            arity(name, args, 2)?;
            Ok(Value::Bool(
                args[0].as_object().is_some_and(|m| m.contains_key(&s(1))),
            ))
        }
        "list" => Ok(Value::Array(args.to_vec())),
        "join" => {
            arity(name, args, 2)?;
            let items: Vec<String> = match &args[1] {
                Value::Array(a) => a.iter().map(as_str).collect(),
                other => vec![as_str(other)],
            };
            string(items.join(&s(0)))
        }
        "first" | "last" => {
            arity(name, args, 1)?;
            let a = args[0]
                .as_array()
                .ok_or_else(|| format!("{name} needs a list"))?;
            Ok(if name == "first" { a.first() } else { a.last() }
                .cloned()
                .unwrap_or(Value::Null))
        }
        "int" => {
            arity(name, args, 1)?;
            Ok(Value::from(match &args[0] {
                Value::Number(n) => n.as_f64().unwrap_or(0.0) as i64,
                Value::String(t) => t.trim().parse::<f64>().map_or(0, |f| f as i64),
                Value::Bool(b) => i64::from(*b),
                _ => 0,
            }))
        }
        "printf" => {
            let (format, rest) = args.split_first().ok_or("printf needs a format")?;
            string(printf(&as_str(format), rest))
        }
        other => Err(format!("function {other:?} not defined")),
    }
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        start = c.is_whitespace();
    }
    out
}

/// Go's `fmt.Sprintf` for the verbs `%s %d %v %q %%`; flags and width are accepted and padding
/// applied (`%5s`, `%-5s`, `%05d`), precision is ignored.
fn printf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&f) = chars.peek() {
            if !"-+# 0123456789.".contains(f) {
                break;
            }
            spec.push(f);
            chars.next();
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let text = match args.next() {
            Some(v) if verb == 'q' => format!("{:?}", as_str(v)),
            Some(v) => print(v),
            None => {
                out.push_str(&format!("%!{verb}(MISSING)"));
                continue;
            }
        };
        let left = spec.starts_with('-');
        let zero = !left && spec.trim_start_matches(['+', '#', ' ']).starts_with('0');
        let width: usize = spec
            .trim_start_matches(['-', '+', '#', ' ', '0'])
            .split('.')
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(0)
            .min(4096);
        let pad = width.saturating_sub(text.chars().count());
        let fill = if zero { '0' } else { ' ' };
        if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.extend(std::iter::repeat_n(fill, pad));
            out.push_str(&text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Value {
        json!({
            "ClusterName": "c1",
            "ClusterNamespace": "fleet-default",
            "ClusterLabels": {"env": "prod", "region": "east", "replicas": "3"},
            "ClusterAnnotations": {},
            "ClusterValues": {"size": 2, "nested": {"k": "v"}, "list": ["a", "b"], "none": []}
        })
    }

    fn render(t: &str) -> Result<String, String> {
        BuiltinTemplater.render(t, &ctx())
    }

    #[test]
    fn renders_supported_constructs() {
        let cases = [
            ("plain text", "plain text"),
            ("${ .ClusterName }", "c1"),
            (
                "name-${ .ClusterLabels.env }-${.ClusterNamespace}",
                "name-prod-fleet-default",
            ),
            ("${ index .ClusterLabels \"region\" }", "east"),
            (
                "${ index .ClusterLabels \"absent\" | default \"none\" }",
                "none",
            ),
            ("${ .ClusterValues.nested.k | upper | quote }", "\"V\""),
            ("${ .ClusterValues.size }", "2"),
            (
                "${ if eq .ClusterLabels.env \"prod\" }3${ else }1${ end }",
                "3",
            ),
            (
                "${ if eq .ClusterLabels.env \"dev\" }a${ else if eq .ClusterLabels.region \"east\" }b${ else }c${ end }",
                "b",
            ),
            (
                "${ printf \"%s-%s\" .ClusterName .ClusterLabels.env }",
                "c1-prod",
            ),
            ("${ replace \"-\" \"_\" \"a-b\" }", "a_b"),
            (
                "${ ternary \"big\" \"small\" (gt .ClusterValues.size 1) }",
                "big",
            ),
            ("a  ${- .ClusterName -}  b", "ac1b"),
            ("${ hasKey .ClusterLabels \"env\" }", "true"),
            (
                "${ range $k, $v := .ClusterLabels }${ $k }=${ $v };${ end }",
                "env=prod;region=east;replicas=3;",
            ),
            (
                "${ range .ClusterValues.list }[${ . }|${ $.ClusterName }]${ end }",
                "[a|c1][b|c1]",
            ),
            (
                "${ range $i, $e := .ClusterValues.list }${ $i }${ $e }${ end }",
                "0a1b",
            ),
            (
                "${ range .ClusterValues.none }x${ else }empty${ end }",
                "empty",
            ),
            ("${ list 1 2 3 | toJson }", "[1,2,3]"),
            ("${ .ClusterValues.list | join \",\" }", "a,b"),
            ("${ int \"42\" }", "42"),
            (
                "${ printf \"[%5s|%-3s|%03d|%%]\" \"ab\" \"c\" 7 }",
                "[   ab|c  |007|%]",
            ),
            ("${ printf \"%s %s\" \"x\" }", "x %!s(MISSING)"),
            (
                "${ .ClusterAnnotations.missing | default \"x\" }",
                "MISSING-KEY",
            ),
        ];
        for (template, want) in cases {
            let got = render(template);
            if want == "MISSING-KEY" {
                assert_eq!(
                    got.unwrap_err(),
                    "map has no entry for key \"missing\"",
                    "{template}"
                );
            } else {
                assert_eq!(got.as_deref(), Ok(want), "{template}");
            }
        }
    }

    #[test]
    fn errors_are_clear() {
        let cases = [
            ("${ env \"HOME\" }", "function \"env\" not defined"),
            ("${ .ClusterName", "unclosed action"),
            ("${ if .ClusterName }x", "unexpected EOF: missing ${ end }"),
            (
                "${ with .ClusterLabels }${ end }",
                "\"with\" is not supported by the built-in values templater",
            ),
            (
                "${ range .ClusterLabels }x",
                "unexpected EOF: missing ${ end }",
            ),
            ("${ $nope }", "undefined variable \"$nope\""),
            (
                "${ range $a, $b, $c := .ClusterLabels }${ end }",
                "too many variables in range",
            ),
            ("${ \"abc }", "unclosed action"),
            ("${ .ClusterName | }", "missing value for command"),
            (
                &format!("${{ {}1{} }}", "(".repeat(10_000), ")".repeat(10_000)),
                "parentheses nested deeper than 64",
            ),
            (
                &"${ if true }".repeat(10_000),
                "blocks nested deeper than 64",
            ),
        ];
        for (template, want) in cases {
            let err = render(template).unwrap_err();
            assert!(err.contains(want), "{template}: {err}");
        }
    }

    /// Random template-like input never panics: it renders or returns an error.
    #[test]
    fn arbitrary_input_never_panics() {
        const TOKENS: &[&str] = &[
            "${",
            "${-",
            "}",
            "-}",
            " ",
            ".",
            "a",
            "$",
            "$x",
            "\"",
            "`",
            "(",
            ")",
            "|",
            "if ",
            "else",
            "end",
            "range ",
            ":=",
            ",",
            "é",
            "0",
            "-1",
            "index",
            "printf \"%5",
            "%",
            "ClusterLabels",
            "\\",
            "/*",
            "*/",
            "eq",
            "default",
            "\n",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let template: String = (0..len)
                .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
                .collect();
            let _ = render(&template);
        }
    }
}
