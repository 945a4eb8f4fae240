//! [`MapEntries`], what a [`super::GoMap`] holds: its entries in a vector sorted by key bytes (the order Go sorts map
//! keys in, which `range`, `keys` and `toYaml` follow), found by binary search. Each entry keeps its key's first
//! eight bytes as one big-endian number, so a search step is one integer comparison; whole keys are compared only
//! when those bytes tie. A `BTreeMap` of `String`s, used before, compared with a `memcmp` call at every step
//! (about 45 instructions). An insert or removal moves the entries after it (as Sprig's `append` copies a list);
//! inserting keys in sorted order (coalescing, building from a sorted map) only appends.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use minijinja::Value;

/// One entry and its key's leading bytes.
#[derive(Debug, Clone)]
struct Slot {
    /// The key's first eight bytes as a big-endian number, shorter keys padded with zeros. Two keys' prefixes, when
    /// they differ, order as the keys do.
    prefix: u64,
    key: String,
    value: Value,
}

/// A map from strings to values, iterated in byte order of the keys.
#[derive(Debug, Clone, Default)]
pub struct MapEntries {
    slots: Vec<Slot>,
}

/// The key's first eight bytes as a big-endian number, shorter keys padded with zeros.
fn prefix(key: &str) -> u64 {
    let bytes = key.as_bytes();
    match bytes.first_chunk::<8>() {
        Some(lead) => u64::from_be_bytes(*lead),
        None => {
            let mut lead = [0u8; 8];
            lead[..bytes.len()].copy_from_slice(bytes);
            u64::from_be_bytes(lead)
        }
    }
}

impl MapEntries {
    /// Where `key` is (`Ok`), or where it would go (`Err`).
    fn find(&self, key: &str) -> Result<usize, usize> {
        let lead = prefix(key);
        let (mut low, mut high) = (0, self.slots.len());
        while low < high {
            let mid = low + (high - low) / 2;
            let slot = &self.slots[mid];
            let order = match slot.prefix.cmp(&lead) {
                Ordering::Equal => slot.key.as_bytes().cmp(key.as_bytes()),
                order => order,
            };
            match order {
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.find(key).ok().map(|i| &self.slots[i].value)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.slots[i].value, value)),
            Err(i) => {
                let slot = Slot {
                    prefix: prefix(&key),
                    key,
                    value,
                };
                self.slots.insert(i, slot);
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.find(key).ok()?;
        Some(self.slots.remove(i).value)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.slots.iter().map(|s| (&s.key, &s.value))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.slots.iter().map(|s| &s.key)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.slots.iter().map(|s| &s.value)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.slots.iter_mut().map(|s| &mut s.value)
    }
}

impl From<BTreeMap<String, Value>> for MapEntries {
    fn from(map: BTreeMap<String, Value>) -> Self {
        // A `BTreeMap` iterates in byte order of its `String` keys: the slots come out sorted.
        MapEntries {
            slots: map
                .into_iter()
                .map(|(key, value)| Slot {
                    prefix: prefix(&key),
                    key,
                    value,
                })
                .collect(),
        }
    }
}

/// The entries of a [`MapEntries`] it was made from, in key order.
pub struct IntoIter(std::vec::IntoIter<Slot>);

impl Iterator for IntoIter {
    type Item = (String, Value);

    fn next(&mut self) -> Option<(String, Value)> {
        self.0.next().map(|s| (s.key, s.value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl IntoIterator for MapEntries {
    type Item = (String, Value);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        IntoIter(self.slots.into_iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys that tie on their first eight bytes, are prefixes of each other, hold zero bytes or multi-byte
    /// characters: lookups find each, and iteration is the byte order a `BTreeMap` of the same keys has.
    #[test]
    fn entries_find_every_key_and_iterate_in_byte_order() {
        let keys = [
            "podSecurityContext",
            "podSecurityPolicy",
            "podSecur",
            "podSecu",
            "pod",
            "",
            "a\0",
            "a",
            "a\0b",
            "a\0\0\0\0\0\0\0",
            "a\0\0\0\0\0\0\0\0",
            "a\0\0\0\0\0\0\0\0x",
            "zz",
            "é",
            "e\u{301}",
            "Z",
            "_helpers",
            "containerSecurityContext",
            "containerPorts",
            "podSecurityContextX",
        ];
        let mut entries = MapEntries::default();
        let mut model = BTreeMap::new();
        for (n, k) in keys.iter().enumerate() {
            assert_eq!(entries.insert(k.to_string(), Value::from(n)), None);
            model.insert(k.to_string(), Value::from(n));
        }
        assert_eq!(entries.len(), keys.len());
        for (n, k) in keys.iter().enumerate() {
            assert_eq!(entries.get(k), Some(&Value::from(n)), "{k:?}");
        }
        for missing in ["podSecurityContex", "a\0a", "b", "podSecurityPolicyX", "\0"] {
            assert!(!entries.contains_key(missing), "{missing:?}");
        }
        let order: Vec<&String> = entries.keys().collect();
        let expected: Vec<&String> = model.keys().collect();
        assert_eq!(order, expected);

        assert_eq!(
            entries.insert("pod".into(), Value::from(99)),
            Some(Value::from(4))
        );
        assert_eq!(entries.remove("podSecur"), Some(Value::from(2)));
        assert_eq!(entries.remove("podSecur"), None);
        model.remove("podSecur");
        model.insert("pod".into(), Value::from(99));
        let rebuilt = MapEntries::from(model.clone());
        let a: Vec<(String, Value)> = entries.into_iter().collect();
        let b: Vec<(String, Value)> = rebuilt.into_iter().collect();
        let c: Vec<(String, Value)> = model.into_iter().collect();
        assert_eq!(a, c);
        assert_eq!(b, c);
    }

    /// Random inserts and removals of keys made of `a`, `b` and zero bytes, 0 to 20 bytes long (so many tie on
    /// their first eight bytes or are prefixes of each other), agree step by step with a `BTreeMap`.
    #[test]
    fn entries_agree_with_a_btree_map_on_tying_keys() {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let mut entries = MapEntries::default();
        let mut model = BTreeMap::new();
        for step in 0..4000 {
            let len = next() % 21;
            let key: String = (0..len).map(|_| ['a', 'b', '\0'][next() % 3]).collect();
            if next() % 3 == 0 {
                assert_eq!(entries.remove(&key), model.remove(&key), "step {step}");
            } else {
                let v = Value::from(step);
                assert_eq!(
                    entries.insert(key.clone(), v.clone()),
                    model.insert(key.clone(), v),
                    "step {step}"
                );
            }
            assert_eq!(entries.get(&key), model.get(&key), "step {step}");
        }
        assert!(entries.len() > 100);
        let a: Vec<(String, Value)> = entries.into_iter().collect();
        let b: Vec<(String, Value)> = model.into_iter().collect();
        assert_eq!(a, b);
    }
}
