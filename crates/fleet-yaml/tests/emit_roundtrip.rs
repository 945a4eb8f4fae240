//! Whatever we emit reads back as the same value: random documents with hostile strings (YAML 1.1 words,
//! numbers, indicators, quotes, newlines, long lines) survive `emit` then `parse`, for Helm's and kustomize's
//! dialects. (U+0085, U+2028 and U+2029 are left out: go-yaml folds them as YAML 1.1 line breaks, which a
//! YAML 1.2 reader keeps as text. A key `<<` is written plain by go-yaml, as Helm does, and then reads back as a
//! merge key, so keys never are exactly `<<`.)

use fleet_yaml::emit::{helm, kyaml};
use fleet_yaml::parse::{self, Options};
use serde_json::{Map, Number, Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "null",
    "~",
    "",
    "0755",
    "0x1F",
    "1e3",
    "1_000",
    ".5",
    "+1",
    "-0",
    ".inf",
    ".NaN",
    "2024-01-01",
    "2001-12-14 21:59:43.10",
    "1:20",
    "<<",
    "=",
    "-",
    "- x",
    "? x",
    ": x",
    "#x",
    "a #b",
    "a: b",
    "key:",
    "[x]",
    "{x}",
    "*a",
    "&a",
    "!t",
    "|",
    ">",
    "'q'",
    "\"q\"",
    "%",
    "@",
    "`",
    "---",
    "...",
    " lead",
    "trail ",
    "tab\tin",
    "multi\nline",
    "end\n",
    "\nstart",
    "keep\n\n",
    " x\ny",
    "x  \ny",
    "é☺😀",
    "\u{7}",
    "\\",
    "\u{feff}bom",
    "a\r\nb",
];

fn random_string(rng: &mut Rng) -> String {
    let parts = 1 + rng.below(3);
    let mut s = String::new();
    for _ in 0..parts {
        if rng.below(4) == 0 {
            // A long run of words, to fold past 80 columns.
            for _ in 0..(5 + rng.below(25)) {
                s.push_str(WORDS[rng.below(WORDS.len())]);
                s.push(' ');
            }
        } else {
            s.push_str(WORDS[rng.below(WORDS.len())]);
        }
    }
    s
}

fn random_key(rng: &mut Rng) -> String {
    Some(random_string(rng))
        .filter(|k| k != "<<")
        .unwrap_or_default()
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let pick = if depth > 3 {
        rng.below(5)
    } else {
        rng.below(8)
    };
    match pick {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => json!(rng.next() as i64 >> rng.below(64)),
        3 => {
            Number::from_f64((rng.next() % 100_000) as f64 / 7.0).map_or(Value::Null, Value::Number)
        }
        4 => Value::String(random_string(rng)),
        5 | 6 => {
            let mut map = Map::new();
            for _ in 0..rng.below(5) {
                map.insert(random_key(rng), random_value(rng, depth + 1));
            }
            Value::Object(map)
        }
        _ => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
    }
}

/// What reading our output must give back: Go's JSON round trip turns integral floats into integers.
fn expected(value: &Value) -> Value {
    match value {
        Value::Number(n) => match n
            .as_f64()
            .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15)
        {
            Some(f) => json!(f as i64),
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(expected).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), expected(v))).collect())
        }
        other => other.clone(),
    }
}

/// The first place where `a` and `b` differ (object order ignored, numbers compared as floats).
fn difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let Some(w) = y.get(k) else {
                    return Some(format!(
                        "{path}: key {k:?} only in ours; theirs has {:?}",
                        y.keys().collect::<Vec<_>>()
                    ));
                };
                if let Some(d) = difference(v, w, &format!("{path}/{k:?}")) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| format!("{path}: {} keys vs {}", x.len(), y.len()))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| difference(v, w, &format!("{path}/{i}"))),
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ => (a != b).then(|| format!("{path}: {a:?} vs {b:?}")),
    }
}

#[test]
fn emitted_yaml_reads_back_as_the_same_value() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for round in 0..400 {
        let mut map = Map::new();
        for _ in 0..(1 + rng.below(6)) {
            map.insert(random_key(&mut rng), random_value(&mut rng, 0));
        }
        let value = Value::Object(map);
        let want = expected(&value);
        let text = helm::marshal(&value);
        let back = parse::documents(&text, "helm.yaml")
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{text}"));
        let back = back.into_iter().next().unwrap_or(Value::Object(Map::new()));
        if let Some(d) = difference(&back, &want, "") {
            panic!("round {round} (helm), read back vs wanted: {d}\n{text}");
        }

        let text = kyaml::to_yaml(&value);
        let back = parse::documents_with(&Options::kustomize(), &text, "kyaml.yaml")
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{text}"));
        let back = back.into_iter().next().unwrap_or(Value::Object(Map::new()));
        if let Some(d) = difference(&back, &want, "") {
            panic!("round {round} (kyaml), read back vs wanted: {d}\n{text}");
        }
    }
}
