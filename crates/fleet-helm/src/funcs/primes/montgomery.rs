//! Arithmetic modulo an odd number whose top bit is set, in Montgomery form with R = 2^(64·L), on fixed-size arrays of
//! L 64-bit limbs (so the compiler unrolls the inner loops and drops the bounds checks), and the Miller–Rabin rounds
//! built on it. Squaring has its own routine (each cross product once, then doubled): a Miller–Rabin round is a
//! thousand squarings for every few multiplications.
//!
//! Nothing here is constant-time: it only ever touches prime candidates (see the module above).

use super::super::Rng;

/// Limbs of the largest modulus (2048-bit primes, for 4096-bit keys).
pub(super) const MAX_LIMBS: usize = 32;

/// Exponent bits per step of the base-2 round (a digit below 64, a shift within one limb).
const BASE2_WINDOW: usize = 6;

/// Arithmetic modulo `n`.
pub(super) struct Montgomery<const L: usize> {
    n: [u64; L],
    /// −n⁻¹ mod 2^64.
    n0_inv: u64,
    /// R mod n: 1 in Montgomery form.
    one: [u64; L],
    /// n − (R mod n): −1 in Montgomery form.
    minus_one: [u64; L],
}

impl<const L: usize> Montgomery<L> {
    /// `n` must be odd with its top bit set.
    pub(super) fn new(n: &[u64; L]) -> Self {
        const { assert!(L >= 1 && L <= MAX_LIMBS) };
        // Newton's iteration for n[0]⁻¹ mod 2^64 (n odd): each step doubles the correct low bits, from 1 to 64.
        let mut inv = 1u64;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        // With the top bit set, n < R < 2n, so R mod n = R − n = −n in 64·L-bit arithmetic.
        let mut one = n.map(|l| !l);
        add_small(&mut one, 1);
        let mut minus_one = *n;
        sub_in_place(&mut minus_one, &one);
        Montgomery {
            n: *n,
            n0_inv: inv.wrapping_neg(),
            one,
            minus_one,
        }
    }

    /// a·b·R⁻¹ mod n for `a`, `b` < n (CIOS: multiplication and reduction interleaved, one limb of `b` at a time).
    pub(super) fn mul(&self, a: &[u64; L], b: &[u64; L]) -> [u64; L] {
        let n = &self.n;
        let mut t = [0u64; L];
        let mut top = 0u64;
        for &bi in b {
            let mut carry = 0u64;
            for j in 0..L {
                (t[j], carry) = mul_add(t[j], a[j], bi, carry);
            }
            let (t_l, t_l1) = add_wide(top, carry, 0);
            let m = t[0].wrapping_mul(self.n0_inv);
            let (_, mut carry) = mul_add(t[0], m, n[0], 0);
            for j in 1..L {
                (t[j - 1], carry) = mul_add(t[j], m, n[j], carry);
            }
            let (last, c) = add_wide(t_l, carry, 0);
            t[L - 1] = last;
            top = t_l1 + c;
        }
        self.reduce_once(t, top)
    }

    /// a²·R⁻¹ mod n for `a` < n: the square in full (cross products once, doubled, plus the diagonal), then the
    /// Montgomery reduction row by row.
    pub(super) fn square(&self, a: &[u64; L]) -> [u64; L] {
        let mut t = [0u64; 2 * MAX_LIMBS + 1];
        for i in 0..L.saturating_sub(1) {
            let mut carry = 0u64;
            for j in i + 1..L {
                (t[i + j], carry) = mul_add(t[i + j], a[i], a[j], carry);
            }
            t[i + L] = carry;
        }
        let mut shifted_out = 0u64;
        for limb in &mut t[..2 * L] {
            let next = *limb >> 63;
            *limb = (*limb << 1) | shifted_out;
            shifted_out = next;
        }
        let mut carry = 0u64;
        for i in 0..L {
            let (lo, hi) = mul_add(0, a[i], a[i], 0);
            let (sum, c) = add_wide(t[2 * i], lo, carry);
            t[2 * i] = sum;
            (t[2 * i + 1], carry) = add_wide(t[2 * i + 1], hi, c);
        }
        let mut top = 0u64;
        for i in 0..L {
            let m = t[i].wrapping_mul(self.n0_inv);
            let mut carry = 0u64;
            for j in 0..L {
                (t[i + j], carry) = mul_add(t[i + j], m, self.n[j], carry);
            }
            (t[i + L], top) = add_wide(t[i + L], carry, top);
        }
        let mut out = [0u64; L];
        out.copy_from_slice(&t[L..2 * L]);
        self.reduce_once(out, top)
    }

    /// `t` + `top`·R, known to be below 2n, reduced below n.
    #[inline(always)]
    fn reduce_once(&self, mut t: [u64; L], top: u64) -> [u64; L] {
        if top != 0 || !less(&t, &self.n) {
            sub_in_place(&mut t, &self.n);
        }
        t
    }

    /// x·2^shift mod n for `x` < n and a shift below 64: the shifted number has one more limb, and its quotient by n
    /// is estimated from the top two limbs (at most three below the true one, which the final subtractions make up).
    fn mul_pow2(&self, x: &mut [u64; L], shift: u32) {
        if shift == 0 {
            return;
        }
        let mut top = x[L - 1] >> (64 - shift);
        for i in (1..L).rev() {
            x[i] = (x[i] << shift) | (x[i - 1] >> (64 - shift));
        }
        x[0] <<= shift;
        let numerator = (u128::from(top) << 64) | u128::from(x[L - 1]);
        // Below 2^(shift + 1) ≤ 2^64, since n's top limb is at least 2^63.
        let q = (numerator / (u128::from(self.n[L - 1]) + 1)) as u64;
        let (mut carry, mut borrow) = (0u64, false);
        for (limb, &n) in x.iter_mut().zip(&self.n) {
            let (lo, hi) = mul_add(0, q, n, carry);
            carry = hi;
            let (d1, b1) = limb.overflowing_sub(lo);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *limb = d2;
            borrow = b1 || b2;
        }
        top = top.wrapping_sub(carry).wrapping_sub(u64::from(borrow));
        while top != 0 || !less(x, &self.n) {
            top = top.wrapping_sub(u64::from(sub_in_place(x, &self.n)));
        }
    }

    /// n − 1 = d·2^s: returns (d, s).
    fn odd_part(&self) -> ([u64; L], usize) {
        let mut d = self.n;
        d[0] -= 1;
        let s = trailing_zeros(&d);
        shift_right(&mut d, s);
        (d, s)
    }

    /// The Miller–Rabin round to base 2. A multiplication by a power of two is a shift and one reduction, so the
    /// exponent is taken [`BASE2_WINDOW`] bits at a time: that many squarings, then x·2^digit.
    pub(super) fn miller_rabin_base2(&self) -> bool {
        let (d, s) = self.odd_part();
        let windows = bit_len(&d).div_ceil(BASE2_WINDOW);
        let mut x = self.one;
        for w in (0..windows).rev() {
            if w + 1 < windows {
                for _ in 0..BASE2_WINDOW {
                    x = self.square(&x);
                }
            }
            self.mul_pow2(&mut x, bits_at(&d, w * BASE2_WINDOW, BASE2_WINDOW));
        }
        self.finish_round(x, s)
    }

    /// One Miller–Rabin round to a random base in [2, n − 2].
    pub(super) fn miller_rabin_random(&self, rng: &mut Rng) -> bool {
        let base = loop {
            let mut b = [0u64; L];
            b.iter_mut().for_each(|l| *l = rng.next_u64());
            b[L - 1] &= u64::MAX >> 1;
            if b.iter().skip(1).any(|&l| l != 0) || b[0] > 1 {
                break b;
            }
        };
        // R² mod n by shifting R mod n left 64·L bits, 32 at a time, then the base into Montgomery form.
        let mut r2 = self.one;
        for _ in 0..2 * L {
            self.mul_pow2(&mut r2, 32);
        }
        let base = self.mul(&base, &r2);
        let (d, s) = self.odd_part();
        // Left-to-right exponentiation with a 4-bit window.
        let mut table = [self.one; 16];
        for i in 1..16 {
            table[i] = self.mul(&table[i - 1], &base);
        }
        let mut x = self.one;
        for w in (0..bit_len(&d).div_ceil(4)).rev() {
            for _ in 0..4 {
                x = self.square(&x);
            }
            let bit = w * 4;
            let digit = (d[bit / 64] >> (bit % 64)) & 0xf;
            if digit != 0 {
                x = self.mul(&x, &table[digit as usize]);
            }
        }
        self.finish_round(x, s)
    }

    /// Given x = a^d (Montgomery form), whether n passes the round: x = ±1, or x^(2^i) = −1 for some i < s.
    fn finish_round(&self, mut x: [u64; L], s: usize) -> bool {
        if x == self.one || x == self.minus_one {
            return true;
        }
        for _ in 1..s {
            x = self.square(&x);
            if x == self.minus_one {
                return true;
            }
            if x == self.one {
                return false;
            }
        }
        false
    }
}

/// t + a·b + carry as (low, high) limbs; cannot overflow 128 bits.
#[inline(always)]
fn mul_add(t: u64, a: u64, b: u64, carry: u64) -> (u64, u64) {
    let s = u128::from(t) + u128::from(a) * u128::from(b) + u128::from(carry);
    (s as u64, (s >> 64) as u64)
}

/// a + b + c as (low, high) limbs.
#[inline(always)]
fn add_wide(a: u64, b: u64, c: u64) -> (u64, u64) {
    let s = u128::from(a) + u128::from(b) + u128::from(c);
    (s as u64, (s >> 64) as u64)
}

/// `x += v`; returns the carry out of the top limb.
pub(super) fn add_small(x: &mut [u64], v: u64) -> bool {
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

fn less(a: &[u64], b: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// a −= b (mod 2^(64·len)); returns the borrow out of the top limb.
fn sub_in_place(a: &mut [u64], b: &[u64]) -> bool {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
    borrow
}

/// The `count` (at most 64) bits of `x` from bit `at` up, as a number; bits past the top read as 0.
fn bits_at(x: &[u64], at: usize, count: usize) -> u32 {
    let (limb, offset) = (at / 64, at % 64);
    let low = x.get(limb).map_or(0, |l| l >> offset);
    let high = match offset {
        0 => 0,
        _ => x.get(limb + 1).map_or(0, |l| l << (64 - offset)),
    };
    ((low | high) & (u64::MAX >> (64 - count))) as u32
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
    use super::super::to_biguint;
    use super::*;
    use rsa::BigUint;

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

    fn limbs<const L: usize>(x: &BigUint) -> [u64; L] {
        let mut bytes = x.to_bytes_le();
        bytes.resize(8 * L, 0);
        std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
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

    /// Multiplication, squaring and shifts against BigUint at every size key generation uses (and at the edges of the
    /// values: 0, 1, n − 1).
    fn arithmetic_matches_biguint<const L: usize>(seed: u64) {
        let mut rng = Rng::seeded(seed);
        let mut random = || -> [u64; L] { std::array::from_fn(|_| rng.next_u64()) };
        let mut n = random();
        n[L - 1] |= 1 << 63;
        n[0] |= 1;
        let m = Montgomery::new(&n);
        let nb = to_biguint(&n);
        let r = BigUint::from(1u8) << (64 * L);
        assert_eq!(to_biguint(&m.one), &r % &nb);
        assert_eq!((to_biguint(&m.minus_one) + &r) % &nb, BigUint::from(0u8));
        let n_minus_1 = &nb - 1u8;
        let mut values: Vec<BigUint> = (0..20).map(|_| to_biguint(&random()) % &nb).collect();
        values.extend([BigUint::from(0u8), BigUint::from(1u8), n_minus_1]);
        for (i, a) in values.iter().enumerate() {
            let b = &values[(i * 7 + 3) % values.len()];
            let (al, bl) = (limbs::<L>(a), limbs::<L>(b));
            // mul(a, b) = a·b·R⁻¹ mod n, so mul(a, b)·R ≡ a·b, and it is fully reduced.
            let product = to_biguint(&m.mul(&al, &bl));
            assert!(product < nb);
            assert_eq!((&product * &r) % &nb, (a * b) % &nb, "L={L} mul");
            let square = to_biguint(&m.square(&al));
            assert!(square < nb);
            assert_eq!((&square * &r) % &nb, (a * a) % &nb, "L={L} square");
            for shift in [0, 1, 5, 6, 33, 63] {
                let mut x = al;
                m.mul_pow2(&mut x, shift);
                assert_eq!(
                    to_biguint(&x),
                    (a << shift as usize) % &nb,
                    "L={L} shift {shift}"
                );
            }
        }
    }

    #[test]
    fn bits_are_read_across_limbs() {
        let x = [0xf000_0000_0000_0001u64, 0x0000_0000_0000_002b];
        assert_eq!(bits_at(&x, 0, 6), 1);
        assert_eq!(bits_at(&x, 60, 6), 0b11_1111);
        assert_eq!(bits_at(&x, 62, 6), 0b10_1111);
        assert_eq!(bits_at(&x, 64, 6), 0b10_1011);
        assert_eq!(bits_at(&x, 126, 6), 0);
    }

    #[test]
    fn montgomery_arithmetic_matches_biguint() {
        arithmetic_matches_biguint::<1>(1);
        arithmetic_matches_biguint::<2>(2);
        arithmetic_matches_biguint::<8>(3);
        arithmetic_matches_biguint::<16>(4);
        arithmetic_matches_biguint::<24>(5);
        arithmetic_matches_biguint::<32>(6);
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
}
