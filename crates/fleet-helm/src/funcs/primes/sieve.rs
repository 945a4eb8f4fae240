//! The sieve in front of the Miller–Rabin rounds: of the [`WINDOW`] odd numbers from a random start, which have no
//! odd prime factor below [`SIEVE_LIMIT`] and are not 1 more than a multiple of the public exponent. About one in
//! eleven survives, and a 1024-bit prime is expected about every 355 odd numbers, so a window nearly always holds one.
//!
//! Each sieving prime needs the start's remainder. Primes below 2^16 are taken in pairs, whose product is below 2^32:
//! one remainder by the product gives both. Remainders are computed 32 bits at a time with a precomputed reciprocal
//! (Barrett) instead of a hardware division per step, four moduli at once so that their chains overlap.
//!
//! Where the sieve stops: a prime p removes about 1/p of the candidates left, each of which would cost a Miller–Rabin
//! round (about a million cycles for a 1024-bit prime), against a remainder of a few hundred cycles. Past about 2^18
//! the remainders cost more than the rounds they save.

use std::sync::OnceLock;

use super::PUBLIC_EXPONENT;

/// Odd candidates per window.
pub(super) const WINDOW: usize = 4096;
/// Sieving primes are below this.
const SIEVE_LIMIT: usize = 1 << 18;

/// One or two odd primes (1 where there is no prime) whose product is below 2^32, and the product's reciprocal.
struct Modulus {
    primes: [u32; 2],
    barrett: Barrett,
}

/// x mod m for any 64-bit x with a precomputed ⌊(2^64 − 1)/m⌋.
#[derive(Clone, Copy)]
struct Barrett {
    m: u64,
    reciprocal: u64,
}

impl Barrett {
    fn new(m: u64) -> Barrett {
        Barrett {
            m,
            reciprocal: u64::MAX / m,
        }
    }

    /// The quotient estimate is at most two below the true one.
    #[inline(always)]
    fn rem(self, x: u64) -> u64 {
        let q = ((u128::from(x) * u128::from(self.reciprocal)) >> 64) as u64;
        let mut r = x - q * self.m;
        while r >= self.m {
            r -= self.m;
        }
        r
    }
}

/// `x mod m` for a multi-limb `x` (little-endian limbs) and moduli below 2^32, each taken 32 bits at a time.
fn rem_limbs<const K: usize>(moduli: [Barrett; K], x: &[u64]) -> [u64; K] {
    let mut r = [0u64; K];
    for &limb in x.iter().rev() {
        for half in [limb >> 32, limb & 0xffff_ffff] {
            for (r, m) in r.iter_mut().zip(moduli) {
                *r = m.rem((*r << 32) | half);
            }
        }
    }
    r
}

/// The sieving moduli, in groups of four (the last group padded with moduli of 1).
fn moduli() -> &'static [[Modulus; 4]] {
    static MODULI: OnceLock<Vec<[Modulus; 4]>> = OnceLock::new();
    MODULI.get_or_init(|| {
        let mut composite = vec![false; SIEVE_LIMIT];
        let mut primes = Vec::new();
        for i in (3..SIEVE_LIMIT).step_by(2) {
            if composite[i] {
                continue;
            }
            primes.push(i as u32);
            for j in (i * i..SIEVE_LIMIT).step_by(2 * i) {
                composite[j] = true;
            }
        }
        let (paired, single) = primes.split_at(primes.partition_point(|&p| p < 1 << 16));
        let mut moduli: Vec<[u32; 2]> = paired
            .chunks(2)
            .map(|pair| [pair[0], pair.get(1).copied().unwrap_or(1)])
            .chain(single.iter().map(|&p| [p, 1]))
            .collect();
        moduli.resize(moduli.len().next_multiple_of(4), [1, 1]);
        moduli
            .chunks_exact(4)
            .map(|group| {
                std::array::from_fn(|i| Modulus {
                    primes: group[i],
                    barrett: Barrett::new(u64::from(group[i][0]) * u64::from(group[i][1])),
                })
            })
            .collect()
    })
}

/// The first k ≥ 0 with r + 2k ≡ target (mod p), for r, target < p and p odd.
fn first_hit(r: u64, target: u64, p: u64) -> usize {
    let mut gap = target + p - r;
    if gap >= p {
        gap -= p;
    }
    // 2k ≡ gap: k = gap/2 if gap is even, else (gap + p)/2.
    (if gap.is_multiple_of(2) {
        gap / 2
    } else {
        (gap + p) / 2
    }) as usize
}

/// Fills `survivors` (cleared first; its capacity is reused) with every k < [`WINDOW`] such that start + 2k has no odd
/// prime factor below [`SIEVE_LIMIT`] and start + 2k − 1 is not a multiple of the public exponent. `start` must be odd
/// and above [`SIEVE_LIMIT`].
pub(super) fn sieve(start: &[u64], survivors: &mut Vec<u16>) {
    let mut composite = [false; WINDOW];
    let mut strike = |from: usize, step: usize| {
        for k in (from..WINDOW).step_by(step) {
            composite[k] = true;
        }
    };
    for group in moduli() {
        let remainders = rem_limbs(group.each_ref().map(|m| m.barrett), start);
        for (modulus, r) in group.iter().zip(remainders) {
            for p in modulus.primes.into_iter().filter(|&p| p > 1) {
                let p = u64::from(p);
                strike(first_hit(r % p, 0, p), p as usize);
            }
        }
    }
    // p − 1 must be prime to e: rule out start + 2k ≡ 1 (mod e).
    let e = PUBLIC_EXPONENT;
    let [r] = rem_limbs([Barrett::new(e)], start);
    strike(first_hit(r, 1, e), e as usize);
    survivors.clear();
    survivors.extend(
        composite
            .iter()
            .enumerate()
            .filter(|(_, c)| !**c)
            .map(|(k, _)| k as u16),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrett_remainders_are_remainders() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for m in [3u64, 65_521, 65_521 * 65_519, 4_294_967_291, 65_537] {
            let b = Barrett::new(m);
            for _ in 0..1000 {
                x = x.rotate_left(17).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ 0x94d0_49bb;
                assert_eq!(b.rem(x), x % m);
            }
            assert_eq!(b.rem(u64::MAX), u64::MAX % m);
            assert_eq!(b.rem(0), 0);
            let limbs = [x, !x, x.rotate_left(9), u64::MAX];
            let big = limbs.iter().rev().fold(0u128, |acc, &l| {
                ((acc << 64) | u128::from(l)) % u128::from(m)
            });
            assert_eq!(u128::from(rem_limbs([b], &limbs)[0]), big);
        }
    }

    #[test]
    fn first_hit_is_the_first_multiple() {
        for p in [3u64, 5, 7, 65_521] {
            for r in [0, 1, 2, p / 2, p - 1] {
                for target in [0, 1] {
                    let k = first_hit(r, target, p);
                    assert!(k < p as usize);
                    assert_eq!((r + 2 * k as u64) % p, target, "p={p} r={r}");
                    assert!((0..k as u64).all(|j| (r + 2 * j) % p != target));
                }
            }
        }
    }

    /// Every survivor is free of small factors and every number struck out has one (or is 1 above a multiple of e),
    /// checked with plain division on a 128-bit start.
    #[test]
    fn the_sieve_strikes_exactly_the_numbers_with_small_factors() {
        let start: u128 = (0xc3a5_c85c_97cb_3127u128 << 64) | 0xb492_b66f_be98_f273;
        let limbs = [start as u64, (start >> 64) as u64];
        let mut survivors = Vec::new();
        sieve(&limbs, &mut survivors);
        let small_primes: Vec<u128> = moduli()
            .iter()
            .flatten()
            .flat_map(|m| m.primes)
            .filter(|&p| p > 1)
            .map(u128::from)
            .collect();
        // The odd primes below 2^18.
        assert_eq!(small_primes.len(), 23_000 - 1);
        for k in 0..WINDOW {
            let n = start + 2 * k as u128;
            let struck = small_primes.iter().any(|&p| n.is_multiple_of(p))
                || n % u128::from(PUBLIC_EXPONENT) == 1;
            assert_eq!(
                survivors.binary_search(&(k as u16)).is_err(),
                struck,
                "k={k}"
            );
        }
        // About one odd number in eleven survives (Mertens: 1.12/ln 2^18 ≈ 0.090).
        assert!((260..480).contains(&survivors.len()), "{}", survivors.len());
    }
}
