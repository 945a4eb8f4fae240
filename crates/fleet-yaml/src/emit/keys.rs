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

/// go-yaml's `keyList.Less` for two string keys.
fn less(order: KeyOrder, a: &[char], b: &[char]) -> bool {
    let mut after_digit = false;
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            after_digit = a[i].is_ascii_digit();
            continue;
        }
        let (al, bl) = (a[i].is_alphabetic(), b[i].is_alphabetic());
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
        if a[i] == '0' || b[i] == '0' {
            // A zero inside a number (`10` vs `100`) counts; leading zeros only break ties below.
            if a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .any(|&c| c != '0')
            {
                an = 1;
                bn = 1;
            }
        }
        let digits = |s: &[char], mut n: i64| {
            let mut end = i;
            while end < s.len() && s[end].is_ascii_digit() {
                n = n
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(s[end] as u8 - b'0'));
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

/// Sorts keys in go-yaml's order (a stable merge sort, valid for any comparison).
pub(crate) fn sorted<'a>(
    order: KeyOrder,
    keys: impl Iterator<Item = &'a String>,
) -> Vec<&'a String> {
    let mut items: Vec<(Vec<char>, &String)> = keys.map(|k| (k.chars().collect(), k)).collect();
    merge_sort(&mut items, &|x, y| {
        if less(order, &y.0, &x.0) {
            Ordering::Greater
        } else {
            Ordering::Less
        }
    });
    items.into_iter().map(|(_, k)| k).collect()
}

fn merge_sort<T: Clone>(items: &mut [T], cmp: &dyn Fn(&T, &T) -> Ordering) {
    if items.len() <= 1 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort(&mut items[..mid], cmp);
    merge_sort(&mut items[mid..], cmp);
    let (left, right) = (items[..mid].to_vec(), items[mid..].to_vec());
    let (mut l, mut r) = (0, 0);
    for slot in items.iter_mut() {
        let take_left =
            r >= right.len() || (l < left.len() && cmp(&left[l], &right[r]) != Ordering::Greater);
        if take_left {
            *slot = left[l].clone();
            l += 1;
        } else {
            *slot = right[r].clone();
            r += 1;
        }
    }
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
    fn intransitive_key_sets_still_sort_without_panicking() {
        let keys = ["10", "1a", "2", "a1b2", "a1b10", "a01", "a10", "a9"];
        for o in [KeyOrder::GoYamlV2, KeyOrder::GoYamlV3] {
            let out = order(o, &keys);
            assert_eq!(out.len(), keys.len());
            assert_eq!(out, order(o, &keys));
        }
    }
}
