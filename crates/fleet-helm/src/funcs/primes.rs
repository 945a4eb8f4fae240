//! RSA key generation for Sprig's key and certificate functions, fast enough for a render: each prime is found by
//! sieving a window of odd candidates after a random start with the small primes (and against `p ≡ 1 mod e`), then
//! testing the survivors with Miller–Rabin on Montgomery arithmetic over 64-bit limbs — base 2 first (which rejects
//! nearly every composite), then [`EXTRA_ROUNDS`] random bases on the one that passes. The two primes of a key are
//! searched on two threads, each with its own generator forked from the caller's, so a seeded render stays
//! reproducible. The key itself is assembled and checked by the `rsa` crate ([`rsa::RsaPrivateKey::from_p_q`]).
//!
//! The arithmetic is not constant-time: it only ever touches candidates and the primes it returns, in a process that
//! renders templates, and Go's own generator is no different in that respect before the final tests.

use rsa::BigUint;

use super::Rng;

/// Random-base Miller–Rabin rounds after base 2 (FIPS 186-5 asks 4 for 1024-bit primes at 2^-100 error; 5 here).
const EXTRA_ROUNDS: usize = 5;
/// Odd candidates sieved per random start (a 1024-bit prime is expected about every 355 odd numbers).
const WINDOW: usize = 4096;
/// Limbs of the largest prime searched (4096-bit primes, for 8192-bit keys).
const MAX_LIMBS: usize = 64;
/// The public exponent Go uses.
pub const PUBLIC_EXPONENT: u64 = 65537;

/// Odd primes below 2^16, for sieving (so the product of two fits in a `u32`).
fn small_primes() -> &'static [u32] {
    static PRIMES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    PRIMES.get_or_init(|| {
        const LIMIT: usize = 1 << 16;
        let mut composite = vec![false; LIMIT];
        let mut out = Vec::new();
        for i in 3..LIMIT {
            if composite[i] || i % 2 == 0 {
                continue;
            }
            out.push(i as u32);
            for j in (i * i..LIMIT).step_by(2 * i) {
                composite[j] = true;
            }
        }
        out
    })
}

/// Generates an RSA private key of `bits` bits (a multiple of 128, at least 512) with exponent 65537.
pub fn generate_rsa_key(bits: usize, rng: &mut Rng) -> Result<rsa::RsaPrivateKey, String> {
    if bits < 512 || !bits.is_multiple_of(128) || bits / 128 > MAX_LIMBS {
        return Err(format!("unsupported RSA key size {bits}"));
    }
    let half = bits / 2;
    loop {
        let (mut rng_p, mut rng_q) = (rng.fork(), rng.fork());
        let (p, q) = std::thread::scope(|s| {
            let q = s.spawn(move || random_prime(half, &mut rng_q));
            let p = random_prime(half, &mut rng_p);
            (p, q.join().unwrap_or_else(|_| random_prime(half, rng)))
        });
        // FIPS 186-5 asks |p − q| > 2^(half − 100); equal top limbs are as good as impossible, but cheap to rule out.
        if p.last() == q.last() {
            continue;
        }
        let (p, q) = (to_biguint(&p), to_biguint(&q));
        return rsa::RsaPrivateKey::from_p_q(p, q, BigUint::from(PUBLIC_EXPONENT))
            .map_err(|e| e.to_string());
    }
}

fn to_biguint(limbs: &[u64]) -> BigUint {
    let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    BigUint::from_bytes_le(&bytes)
}

/// A random prime of exactly `bits` bits (a multiple of 64) with its top two bits set and `p − 1` prime to 65537,
/// as little-endian limbs.
pub fn random_prime(bits: usize, rng: &mut Rng) -> Vec<u64> {
    let limbs = bits / 64;
    let primes = small_primes();
    let mut composite = vec![false; WINDOW];
    loop {
        let mut start: Vec<u64> = (0..limbs).map(|_| rng.next_u64()).collect();
        start[limbs - 1] |= 0b11 << 62;
        start[0] |= 1;
        composite.iter_mut().for_each(|c| *c = false);
        // The remainder by a product of two primes (below 2^32) gives both remainders: half the long divisions.
        for pair in primes.chunks(2) {
            let r = rem_small(&start, pair.iter().product());
            for &p in pair {
                // The first k with start + 2k ≡ 0 (mod p), then every p-th.
                let p64 = u64::from(p);
                let mut k = ((p64 - r % p64) % p64 * p64.div_ceil(2) % p64) as usize;
                while k < WINDOW {
                    composite[k] = true;
                    k += p as usize;
                }
            }
        }
        // p − 1 must be prime to e: rule out start + 2k ≡ 1 (mod e).
        let e = PUBLIC_EXPONENT;
        let r = rem_small(&start, e as u32);
        let mut k = ((e + 1 - r) % e * e.div_ceil(2) % e) as usize;
        while k < WINDOW {
            composite[k] = true;
            k += e as usize;
        }
        for (k, _) in composite.iter().enumerate().filter(|(_, c)| !**c) {
            let mut candidate = start.clone();
            if add_small(&mut candidate, 2 * k as u64) {
                break;
            }
            if candidate[limbs - 1] >> 62 != 0b11 {
                break;
            }
            let mont = Montgomery::new(&candidate);
            if mont.miller_rabin_base2() && (0..EXTRA_ROUNDS).all(|_| mont.miller_rabin_random(rng))
            {
                return candidate;
            }
        }
    }
}

/// `x mod m` for a small modulus.
fn rem_small(x: &[u64], m: u32) -> u64 {
    let m = u64::from(m);
    let mut r = 0u64;
    for &limb in x.iter().rev() {
        r = ((r << 32) | (limb >> 32)) % m;
        r = ((r << 32) | (limb & 0xffff_ffff)) % m;
    }
    r
}

/// `x += v`; returns the carry out of the top limb.
fn add_small(x: &mut [u64], v: u64) -> bool {
    let mut carry = v;
    for limb in x.iter_mut() {
        let (s, c) = limb.overflowing_add(carry);
        *limb = s;
        carry = u64::from(c);
        if carry == 0 {
            return false;
        }
    }
    carry != 0
}

/// Arithmetic modulo an odd `n` whose top bit is set, in Montgomery form with R = 2^(64·limbs).
struct Montgomery {
    n: Vec<u64>,
    /// −n⁻¹ mod 2^64.
    n0_inv: u64,
    /// R mod n: 1 in Montgomery form.
    one: Vec<u64>,
}

impl Montgomery {
    fn new(n: &[u64]) -> Montgomery {
        // Newton's iteration for n[0]⁻¹ mod 2^64 (n odd): each step doubles the correct low bits, from 1 to 64.
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        // With the top bit set, n < R < 2n, so R mod n = R − n = −n in 64·limbs-bit arithmetic.
        let mut one: Vec<u64> = n.iter().map(|l| !l).collect();
        add_small(&mut one, 1);
        Montgomery {
            n: n.to_vec(),
            n0_inv: inv.wrapping_neg(),
            one,
        }
    }

    /// a·b·R⁻¹ mod n; `a`, `b` < n.
    fn mul(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0; self.n.len()];
        self.mul_to(a, b, &mut out);
        out
    }

    /// x ← x²·R⁻¹ mod n. (A dedicated squaring with each cross product once measured slower than this
    /// multiplication at 1024 bits: its triangular loops do not unroll.)
    fn square(&self, x: &mut [u64]) {
        let mut a = [0u64; MAX_LIMBS];
        let a = &mut a[..x.len()];
        a.copy_from_slice(x);
        self.mul_to(a, a, x);
    }

    /// x ← x·b·R⁻¹ mod n.
    fn mul_by(&self, x: &mut [u64], b: &[u64]) {
        let mut a = [0u64; MAX_LIMBS];
        let a = &mut a[..x.len()];
        a.copy_from_slice(x);
        self.mul_to(a, b, x);
    }

    /// out ← a·b·R⁻¹ mod n, unrolled for the sizes key generation uses (512-, 1024- and 2048-bit primes).
    fn mul_to(&self, a: &[u64], b: &[u64], out: &mut [u64]) {
        fn fixed<const L: usize>(m: &Montgomery, a: &[u64], b: &[u64], out: &mut [u64]) -> bool {
            let (Ok(a), Ok(b), Ok(n)) = (a.try_into(), b.try_into(), m.n.as_slice().try_into())
            else {
                return false;
            };
            out.copy_from_slice(&mont_mul::<L>(a, b, n, m.n0_inv));
            true
        }
        let done = match self.n.len() {
            8 => fixed::<8>(self, a, b, out),
            16 => fixed::<16>(self, a, b, out),
            32 => fixed::<32>(self, a, b, out),
            _ => false,
        };
        if !done {
            self.mul_to_any(a, b, out);
        }
    }

    /// out ← a·b·R⁻¹ mod n for any size (CIOS: multiplication and reduction interleaved, one limb of `b` at a
    /// time).
    fn mul_to_any(&self, a: &[u64], b: &[u64], out: &mut [u64]) {
        let len = self.n.len();
        let mut scratch = [0u64; MAX_LIMBS + 2];
        let t = &mut scratch[..len + 2];
        for &bi in b {
            let mut carry = 0u64;
            for (tj, &aj) in t.iter_mut().zip(a) {
                let s = u128::from(*tj) + u128::from(aj) * u128::from(bi) + u128::from(carry);
                *tj = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = u128::from(t[len]) + u128::from(carry);
            t[len] = s as u64;
            t[len + 1] = (s >> 64) as u64;
            let m = t[0].wrapping_mul(self.n0_inv);
            let s = u128::from(t[0]) + u128::from(m) * u128::from(self.n[0]);
            let mut carry = (s >> 64) as u64;
            for j in 1..len {
                let s =
                    u128::from(t[j]) + u128::from(m) * u128::from(self.n[j]) + u128::from(carry);
                t[j - 1] = s as u64;
                carry = (s >> 64) as u64;
            }
            let s = u128::from(t[len]) + u128::from(carry);
            t[len - 1] = s as u64;
            t[len] = t[len + 1] + (s >> 64) as u64;
        }
        let overflow = t[len] != 0;
        out.copy_from_slice(&t[..len]);
        if overflow || !less(out, &self.n) {
            sub_in_place(out, &self.n);
        }
    }

    /// 2x mod n.
    fn double(&self, x: &mut [u64]) {
        let mut carry = 0u64;
        for limb in x.iter_mut() {
            let next = *limb >> 63;
            *limb = (*limb << 1) | carry;
            carry = next;
        }
        if carry != 0 || !less(x, &self.n) {
            sub_in_place(x, &self.n);
        }
    }

    /// n − 1 = d·2^s: returns (d, s).
    fn odd_part(&self) -> (Vec<u64>, usize) {
        let mut d = self.n.clone();
        d[0] -= 1;
        let s = trailing_zeros(&d);
        shift_right(&mut d, s);
        (d, s)
    }

    /// The Miller–Rabin test to base 2, where every multiplication by the base is a doubling.
    fn miller_rabin_base2(&self) -> bool {
        let (d, s) = self.odd_part();
        let mut x = self.one.clone();
        for bit in (0..bit_len(&d)).rev() {
            self.square(&mut x);
            if d[bit / 64] >> (bit % 64) & 1 == 1 {
                self.double(&mut x);
            }
        }
        self.finish_round(x, s)
    }

    /// One Miller–Rabin round to a random base in [2, n − 2].
    fn miller_rabin_random(&self, rng: &mut Rng) -> bool {
        let len = self.n.len();
        let base = loop {
            let mut b: Vec<u64> = (0..len).map(|_| rng.next_u64()).collect();
            b[len - 1] &= u64::MAX >> 1;
            if b.iter().skip(1).any(|&l| l != 0) || b[0] > 1 {
                break b;
            }
        };
        // R² mod n by doubling R mod n 64·len times, then the base into Montgomery form.
        let mut r2 = self.one.clone();
        for _ in 0..64 * len {
            self.double(&mut r2);
        }
        let base = self.mul(&base, &r2);
        let (d, s) = self.odd_part();
        // Left-to-right exponentiation with a 4-bit window.
        let mut table = vec![self.one.clone(), base.clone()];
        for i in 2..16 {
            table.push(self.mul(&table[i - 1], &base));
        }
        let mut x = self.one.clone();
        let bits = bit_len(&d).div_ceil(4) * 4;
        for w in (0..bits / 4).rev() {
            for _ in 0..4 {
                self.square(&mut x);
            }
            let bit = w * 4;
            let digit = (d[bit / 64] >> (bit % 64)) & 0xf;
            if digit != 0 {
                self.mul_by(&mut x, &table[digit as usize]);
            }
        }
        self.finish_round(x, s)
    }

    /// Given x = a^d (Montgomery form), whether n passes the round: x = ±1, or x^(2^i) = −1 for some i < s.
    fn finish_round(&self, mut x: Vec<u64>, s: usize) -> bool {
        let mut minus_one = self.n.clone();
        sub_in_place(&mut minus_one, &self.one);
        if x == self.one || x == minus_one {
            return true;
        }
        for _ in 1..s {
            self.square(&mut x);
            if x == minus_one {
                return true;
            }
            if x == self.one {
                return false;
            }
        }
        false
    }
}

/// a·b·R⁻¹ mod n on fixed-size limb arrays (CIOS), so the compiler unrolls the loops and drops bounds checks.
#[inline(always)]
fn mont_mul<const L: usize>(a: &[u64; L], b: &[u64; L], n: &[u64; L], n0_inv: u64) -> [u64; L] {
    let mut t = [0u64; L];
    let mut top = 0u64;
    for &bi in b {
        let mut carry = 0u64;
        for j in 0..L {
            let s = u128::from(t[j]) + u128::from(a[j]) * u128::from(bi) + u128::from(carry);
            t[j] = s as u64;
            carry = (s >> 64) as u64;
        }
        let s = u128::from(top) + u128::from(carry);
        let (t_l, t_l1) = (s as u64, (s >> 64) as u64);
        let m = t[0].wrapping_mul(n0_inv);
        let s = u128::from(t[0]) + u128::from(m) * u128::from(n[0]);
        let mut carry = (s >> 64) as u64;
        for j in 1..L {
            let s = u128::from(t[j]) + u128::from(m) * u128::from(n[j]) + u128::from(carry);
            t[j - 1] = s as u64;
            carry = (s >> 64) as u64;
        }
        let s = u128::from(t_l) + u128::from(carry);
        t[L - 1] = s as u64;
        top = t_l1 + (s >> 64) as u64;
    }
    if top != 0 || !less(&t, n) {
        sub_in_place(&mut t, n);
    }
    t
}

fn less(a: &[u64], b: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// a −= b (mod 2^(64·len)).
fn sub_in_place(a: &mut [u64], b: &[u64]) {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
}

fn bit_len(x: &[u64]) -> usize {
    x.iter()
        .rposition(|&l| l != 0)
        .map_or(0, |i| 64 * i + 64 - x[i].leading_zeros() as usize)
}

fn trailing_zeros(x: &[u64]) -> usize {
    x.iter()
        .position(|&l| l != 0)
        .map_or(0, |i| 64 * i + x[i].trailing_zeros() as usize)
}

fn shift_right(x: &mut [u64], bits: usize) {
    let (limbs, rest) = (bits / 64, bits % 64);
    let len = x.len();
    for i in 0..len {
        let lo = x.get(i + limbs).copied().unwrap_or(0);
        let hi = x.get(i + limbs + 1).copied().unwrap_or(0);
        x[i] = if rest == 0 {
            lo
        } else {
            (lo >> rest) | (hi << (64 - rest))
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    /// Deterministic Miller–Rabin for 64-bit numbers (these twelve bases decide every n < 2^64), on u128
    /// arithmetic: an independent check of the Montgomery code.
    fn is_prime_u64(n: u64) -> bool {
        let mul = |a: u64, b: u64| (u128::from(a) * u128::from(b) % u128::from(n)) as u64;
        let pow = |mut b: u64, mut e: u64| {
            let mut x = 1u64;
            while e > 0 {
                if e & 1 == 1 {
                    x = mul(x, b);
                }
                b = mul(b, b);
                e >>= 1;
            }
            x
        };
        let s = (n - 1).trailing_zeros();
        let d = (n - 1) >> s;
        [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
            .iter()
            .all(|&a| {
                let mut x = pow(a % n, d);
                if x == 1 || x == n - 1 {
                    return true;
                }
                (1..s).any(|_| {
                    x = mul(x, x);
                    x == n - 1
                })
            })
    }

    #[test]
    fn miller_rabin_agrees_with_a_deterministic_test() {
        let mut rng = Rng::seeded(7);
        let mut primes = 0;
        for n in ((1u64 << 63) + 1..(1u64 << 63) + 20_000).step_by(2) {
            let m = Montgomery::new(&[n]);
            let probable = m.miller_rabin_base2() && m.miller_rabin_random(&mut rng);
            assert_eq!(probable, is_prime_u64(n), "{n}");
            primes += usize::from(probable);
        }
        assert!(primes > 100, "{primes}");
    }

    #[test]
    fn montgomery_multiplication_matches_biguint() {
        let mut rng = Rng::seeded(3);
        let mut n: Vec<u64> = (0..16).map(|_| rng.next_u64()).collect();
        n[15] |= 1 << 63;
        n[0] |= 1;
        let m = Montgomery::new(&n);
        let nb = to_biguint(&n);
        let r = BigUint::from(1u8) << 1024;
        let a: Vec<u64> = (0..16).map(|_| rng.next_u64()).collect();
        let b: Vec<u64> = (0..16).map(|_| rng.next_u64()).collect();
        let (ab, bb) = (to_biguint(&a) % &nb, to_biguint(&b) % &nb);
        let pad = |x: &BigUint| {
            let mut bytes = x.to_bytes_le();
            bytes.resize(128, 0);
            bytes
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect::<Vec<u64>>()
        };
        // mul(a, b) = a·b·R⁻¹, so mul(a, b)·R ≡ a·b.
        let got = to_biguint(&m.mul(&pad(&ab), &pad(&bb)));
        assert_eq!((got * &r) % &nb, (&ab * &bb) % &nb);
        assert_eq!(to_biguint(&m.one), &r % &nb);
    }

    #[test]
    fn generated_primes_are_prime_and_shaped_like_gos() {
        let mut rng = Rng::seeded(11);
        let p = random_prime(512, &mut rng);
        assert_eq!(p.len(), 8);
        assert_eq!(p[7] >> 62, 0b11);
        let pb = to_biguint(&p);
        // Fermat to a few bases with BigUint's own arithmetic.
        for base in [2u32, 3, 5, 7, 11] {
            let one = BigUint::from(1u8);
            assert_eq!(BigUint::from(base).modpow(&(&pb - &one), &pb), one);
        }
        assert_ne!(
            to_biguint(&p) % BigUint::from(PUBLIC_EXPONENT),
            BigUint::from(1u8)
        );
    }

    #[test]
    fn two_limb_primes_pass_and_their_products_fail() {
        // 2^128 − 159 is the largest 128-bit prime; (2^64 − 59)(2^64 − 83) is a product of the two largest 64-bit
        // primes, so a composite with no small factor.
        let limbs = |x: u128| [x as u64, (x >> 64) as u64];
        let mut rng = Rng::seeded(1);
        let m = Montgomery::new(&limbs(u128::MAX - 158));
        assert!(m.miller_rabin_base2() && m.miller_rabin_random(&mut rng));
        let product = u128::from(u64::MAX - 58) * u128::from(u64::MAX - 82);
        let m = Montgomery::new(&limbs(product));
        assert!(!m.miller_rabin_base2());
        assert!(!m.miller_rabin_random(&mut rng));
    }

    #[test]
    fn seeded_keys_are_reproducible_and_valid() {
        let a = generate_rsa_key(1024, &mut Rng::seeded(5)).unwrap();
        let b = generate_rsa_key(1024, &mut Rng::seeded(5)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.n().bits(), 1024);
        assert_eq!(a.e(), &BigUint::from(PUBLIC_EXPONENT));
        a.validate().unwrap();
        let c = generate_rsa_key(1024, &mut Rng::seeded(6)).unwrap();
        assert_ne!(a.primes(), c.primes());
    }
}
