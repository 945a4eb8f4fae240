//! Every patch algorithm on many generated documents and patches, directives and malformed shapes included:
//! each call must return (a result or an error), never panic; successful JSON patches must be atomic.

use fleet_yaml::patch::{json_patch, merge_patch, strategic};
use serde_json::{Map, Value, json};

/// A small deterministic generator (xorshift), so failures reproduce without a seed file.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len() as u64) as usize]
    }

    fn key(&mut self) -> String {
        self.pick(&[
            "name",
            "image",
            "containers",
            "env",
            "ports",
            "spec",
            "template",
            "metadata",
            "finalizers",
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$deleteFromPrimitiveList/finalizers",
            "$setElementOrder/finalizers",
            "value",
            "a",
            "b",
            "~1",
            "",
        ])
        .to_owned()
    }

    fn scalar(&mut self) -> Value {
        match self.below(6) {
            0 => Value::Null,
            1 => json!(self.below(3) == 0),
            2 => json!(self.below(100)),
            3 => json!(self.pick(&["replace", "delete", "merge", "x"])),
            4 => json!(-1.5),
            _ => json!(self.pick(&["a", "b", "c", "name"])),
        }
    }

    fn value(&mut self, depth: u32) -> Value {
        if depth == 0 {
            return self.scalar();
        }
        match self.below(4) {
            0 => self.scalar(),
            1 => {
                let len = self.below(4);
                Value::Array((0..len).map(|_| self.value(depth - 1)).collect())
            }
            _ => Value::Object(self.object(depth - 1)),
        }
    }

    fn object(&mut self, depth: u32) -> Map<String, Value> {
        let len = self.below(5);
        (0..len).map(|_| (self.key(), self.value(depth))).collect()
    }

    fn pointer(&mut self) -> String {
        let len = self.below(4);
        (0..len)
            .map(|_| {
                format!(
                    "/{}",
                    self.pick(&["a", "b", "spec", "0", "1", "-", "~0", "~1", "01", "x"])
                )
            })
            .collect()
    }

    fn json_patch(&mut self) -> Value {
        let len = self.below(4);
        let operations: Vec<Value> = (0..len)
            .map(|_| {
                let mut op = Map::new();
                op.insert(
                    "op".into(),
                    json!(self.pick(&["add", "remove", "replace", "move", "copy", "test", "bad"])),
                );
                if self.below(8) != 0 {
                    op.insert("path".into(), json!(self.pointer()));
                }
                if self.below(2) == 0 {
                    op.insert("from".into(), json!(self.pointer()));
                }
                if self.below(4) != 0 {
                    op.insert("value".into(), self.value(2));
                }
                Value::Object(op)
            })
            .collect();
        Value::Array(operations)
    }
}

#[test]
fn no_algorithm_panics_on_generated_input() {
    let mut generator = Generator(0x9E37_79B9_7F4A_7C15);
    let schema = strategic::builtin_schema_for("apps/v1", "Deployment").unwrap();
    let mut outcomes = [0usize; 2];
    for _ in 0..3000 {
        let original = Value::Object(generator.object(4));
        let patch = Value::Object(generator.object(4));
        for result in [
            strategic::apply(&original, &patch, schema).map(drop),
            strategic::apply(&original, &patch, &strategic::Schemaless).map(drop),
            strategic::kustomize::apply(&original, &patch, schema).map(drop),
            strategic::diff(&original, &patch, schema).map(drop),
        ] {
            outcomes[usize::from(result.is_ok())] += 1;
        }
        let mut merged = original.clone();
        merge_patch::apply(&mut merged, &patch);

        let operations = generator.json_patch();
        let mut document = original.clone();
        match json_patch::apply(&mut document, &operations) {
            Ok(()) => outcomes[1] += 1,
            Err(_) => {
                assert_eq!(
                    document, original,
                    "a failed JSON patch changed the document"
                );
                outcomes[0] += 1;
            }
        }
    }
    // Both paths must have been exercised, or the generator is not testing anything.
    assert!(
        outcomes[0] > 100 && outcomes[1] > 100,
        "errors/successes: {outcomes:?}"
    );
}
