//! Sprig's random functions (`randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`, `randInt`, `uuidv4`,
//! `shuffle`) drawing from the render's generator ([`crate::rng::Rng`]), which the key and certificate functions
//! (see [`super::crypto`]) use as well.

use super::{FuncResult, Table, arity, err, str_arg, to_i64};
use crate::call::Call;
use crate::value::Value;

const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &[u8] = b"0123456789";

fn rand_from(ex: &mut Call<'_>, a: &[Value], name: &str, set: &[u8]) -> FuncResult {
    arity(name, a, 1)?;
    let n = to_i64(&a[0]);
    if !(0..=1 << 20).contains(&n) {
        return err(format!("{name}: invalid length {n}"));
    }
    let s: String = (0..n)
        .map(|_| set[ex.rng.below(set.len() as u64) as usize] as char)
        .collect();
    Ok(Value::from(s))
}

pub(super) fn register(t: &mut Table) {
    t.insert("randAlphaNum", |ex, a| {
        let set: Vec<u8> = ALPHA.iter().chain(NUMERIC).copied().collect();
        rand_from(ex, a, "randAlphaNum", &set)
    });
    t.insert("randAlpha", |ex, a| rand_from(ex, a, "randAlpha", ALPHA));
    t.insert("randNumeric", |ex, a| {
        rand_from(ex, a, "randNumeric", NUMERIC)
    });
    t.insert("randAscii", |ex, a| {
        let set: Vec<u8> = (32u8..127).collect();
        rand_from(ex, a, "randAscii", &set)
    });
    t.insert("randInt", |ex, a| {
        arity("randInt", a, 2)?;
        let (lo, hi) = (to_i64(&a[0]), to_i64(&a[1]));
        if hi <= lo {
            return err("invalid argument to Intn");
        }
        Ok(Value::from(lo + ex.rng.below((hi - lo) as u64) as i64))
    });
    t.insert("uuidv4", |ex, a| {
        arity("uuidv4", a, 0)?;
        let (x, y) = (ex.rng.next_u64(), ex.rng.next_u64());
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&x.to_be_bytes());
        b[8..].copy_from_slice(&y.to_be_bytes());
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = hex::encode(b);
        Ok(Value::from(format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        )))
    });
    t.insert("shuffle", |ex, a| {
        arity("shuffle", a, 1)?;
        let mut chars: Vec<char> = str_arg(&a[0]).chars().collect();
        for i in (1..chars.len()).rev() {
            let j = ex.rng.below(i as u64 + 1) as usize;
            chars.swap(i, j);
        }
        Ok(Value::from(chars.into_iter().collect::<String>()))
    });
}
