//! Sprig's random functions (`randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`, `randInt`, `uuidv4`,
//! `shuffle`) on a generator that is the OS CSPRNG unless a seed is set, so tests can fix the seed and get stable
//! output. The key and certificate functions use the same generator (see [`super::crypto`]).

use rsa::rand_core::{CryptoRng, RngCore};

use super::{FuncResult, Table, arity, err, str_arg, to_i64};
use crate::template::exec::Exec;
use crate::value::Value;

/// The generator behind every random function. By default it draws from the operating system's CSPRNG, because
/// generated passwords, keys and certificates end up in clusters; [`Rng::seeded`] makes a reproducible stream
/// (SplitMix64, not secure) for tests and `--seed`-style renders.
#[derive(Debug, Clone, Default)]
pub struct Rng(Option<u64>);

impl Rng {
    pub fn seeded(seed: u64) -> Self {
        Rng(Some(seed))
    }

    /// An independent generator for another thread: seeded from this one when this one is seeded (so a seeded
    /// render stays reproducible), else the OS CSPRNG as well.
    pub fn fork(&mut self) -> Rng {
        match self.0 {
            Some(_) => Rng::seeded(Rng::next_u64(self)),
            None => Rng(None),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let Some(state) = &mut self.0 else {
            return rsa::rand_core::OsRng.next_u64();
        };
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

/// The key generators (`rsa`, `p256`) take a `rand_core` generator.
impl RngCore for Rng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        Rng::next_u64(self)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        if self.0.is_none() {
            return rsa::rand_core::OsRng.fill_bytes(dest);
        }
        for chunk in dest.chunks_mut(8) {
            let bytes = Rng::next_u64(self).to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// Unseeded, this is the OS CSPRNG; seeded, it is only as strong as the seed, which callers choose knowingly.
impl CryptoRng for Rng {}

const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &[u8] = b"0123456789";

fn rand_from(ex: &mut Exec<'_>, a: &[Value], name: &str, set: &[u8]) -> FuncResult {
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
