//! Map key order of go-yaml's encoder: a "natural" order in which digit runs compare as numbers and letters sort
//! after other characters. go-yaml v2 and v3 differ in how a letter compares with a digit after equal digits.
//!
//! The comparison is not transitive for some key sets (`"10"`, `"1a"`, `"2"`), for which Go's output order
//! depends on its random map iteration; a merge sort keeps ours deterministic (and panic-free).

use std::cmp::Ordering;

/// Which go-yaml's key comparison to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    GoYamlV2,
    GoYamlV3,
}

/// A character of a key: `char`, or a byte of an all-ASCII key (where both readings agree).
trait KeyChar: Copy + Ord {
    fn is_digit(self) -> bool;
    fn is_letter(self) -> bool;
    /// The value of an ASCII digit.
    fn digit(self) -> i64;
}

impl KeyChar for char {
    fn is_digit(self) -> bool {
        self.is_ascii_digit()
    }
    fn is_letter(self) -> bool {
        self.is_alphabetic()
    }
    fn digit(self) -> i64 {
        i64::from(self as u8 - b'0')
    }
}

impl KeyChar for u8 {
    fn is_digit(self) -> bool {
        self.is_ascii_digit()
    }
    fn is_letter(self) -> bool {
        self.is_ascii_alphabetic()
    }
    fn digit(self) -> i64 {
        i64::from(self - b'0')
    }
}

/// go-yaml's `keyList.Less` for two string keys.
fn less<C: KeyChar>(order: KeyOrder, a: &[C], b: &[C]) -> bool {
    let mut after_digit = false;
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            after_digit = a[i].is_digit();
            continue;
        }
        let (al, bl) = (a[i].is_letter(), b[i].is_letter());
        if al && bl {
            return a[i] < b[i];
        }
        if al || bl {
            return match order {
                KeyOrder::GoYamlV3 if after_digit => al,
                _ => bl,
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        let zero = |c: C| c.is_digit() && c.digit() == 0;
        if zero(a[i]) || zero(b[i]) {
            // A zero inside a number (`10` vs `100`) counts; leading zeros only break ties below.
            if a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_digit())
                .any(|&c| !zero(c))
            {
                an = 1;
                bn = 1;
            }
        }
        let digits = |s: &[C], mut n: i64| {
            let mut end = i;
            while end < s.len() && s[end].is_digit() {
                n = n.wrapping_mul(10).wrapping_add(s[end].digit());
                end += 1;
            }
            (n, end)
        };
        let ((an, ai), (bn, bi)) = (digits(a, an), digits(b, bn));
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

/// Sorts keys in go-yaml's order (a stable merge sort, valid for any comparison). All-ASCII keys (nearly all) are
/// compared as bytes, others as `char`s.
pub(crate) fn sorted<'a>(
    order: KeyOrder,
    keys: impl Iterator<Item = &'a String>,
) -> Vec<&'a String> {
    let mut keys: Vec<&String> = keys.collect();
    if keys.iter().all(|k| k.is_ascii()) {
        merge_sort(&mut keys, &mut Vec::new(), &|x, y| {
            later(less(order, y.as_bytes(), x.as_bytes()))
        });
        return keys;
    }
    by_chars(order, keys)
}

/// [`sorted`] comparing keys as `char`s.
fn by_chars(order: KeyOrder, keys: Vec<&String>) -> Vec<&String> {
    let mut items: Vec<(Vec<char>, &String)> =
        keys.into_iter().map(|k| (k.chars().collect(), k)).collect();
    merge_sort(&mut items, &mut Vec::new(), &|x, y| {
        later(less(order, &y.0, &x.0))
    });
    items.into_iter().map(|(_, k)| k).collect()
}

/// The merge's comparison: `y < x` puts `x` after `y`, anything else keeps `x` first.
fn later(y_before_x: bool) -> Ordering {
    if y_before_x {
        Ordering::Greater
    } else {
        Ordering::Less
    }
}

/// A top-down merge sort; `scratch` is the merge buffer, shared by every level.
fn merge_sort<T: Clone>(items: &mut [T], scratch: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    if items.len() <= 1 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort(&mut items[..mid], scratch, cmp);
    merge_sort(&mut items[mid..], scratch, cmp);
    scratch.clear();
    let (mut l, mut r) = (0, mid);
    while l < mid || r < items.len() {
        let take_left =
            r >= items.len() || (l < mid && cmp(&items[l], &items[r]) != Ordering::Greater);
        if take_left {
            scratch.push(items[l].clone());
            l += 1;
        } else {
            scratch.push(items[r].clone());
            r += 1;
        }
    }
    items.clone_from_slice(scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(order: KeyOrder, keys: &[&str]) -> Vec<String> {
        let owned: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        sorted(order, owned.iter()).into_iter().cloned().collect()
    }

    #[test]
    fn natural_order_with_numbers() {
        let want = [
            "", "_x", "0", "00", "1", "2", "10", "A2B", "B", "a1", "a01", "a001", "a9", "a10", "b",
            "é",
        ];
        let mut shuffled = want.to_vec();
        shuffled.reverse();
        assert_eq!(order(KeyOrder::GoYamlV2, &shuffled), want);
        assert_eq!(order(KeyOrder::GoYamlV3, &shuffled), want);
    }

    #[test]
    fn v2_and_v3_differ_after_a_digit() {
        // v2: a letter sorts after a digit; v3: after an equal digit, the letter sorts first.
        assert!(less(KeyOrder::GoYamlV2, &['a', '1', '0'], &['a', '1', 'b']));
        assert!(less(KeyOrder::GoYamlV3, &['a', '1', 'b'], &['a', '1', '0']));
    }

    #[test]
    fn ascii_keys_sort_as_their_chars_do() {
        let keys = [
            "10", "1a", "2", "a1b2", "a1b10", "a01", "a10", "a9", "_x", "Z", "z0", "00", "0",
            "a-b", "a.b",
        ];
        for o in [KeyOrder::GoYamlV2, KeyOrder::GoYamlV3] {
            for a in keys {
                for b in keys {
                    let (ac, bc): (Vec<char>, Vec<char>) =
                        (a.chars().collect(), b.chars().collect());
                    assert_eq!(
                        less(o, a.as_bytes(), b.as_bytes()),
                        less(o, &ac, &bc),
                        "{a} {b}"
                    );
                }
            }
            let owned: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
            assert_eq!(
                sorted(o, owned.iter()),
                by_chars(o, owned.iter().collect()),
                "{o:?}"
            );
        }
    }

    #[test]
    fn intransitive_key_sets_still_sort_without_panicking() {
        let keys = ["10", "1a", "2", "a1b2", "a1b10", "a01", "a10", "a9"];
        for o in [KeyOrder::GoYamlV2, KeyOrder::GoYamlV3] {
            let out = order(o, &keys);
            assert_eq!(out.len(), keys.len());
            assert_eq!(out, order(o, &keys));
        }
    }
}
