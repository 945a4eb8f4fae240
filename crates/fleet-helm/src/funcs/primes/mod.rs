//! RSA key generation for Sprig's key and certificate functions, fast enough for a render. Each prime is the first
//! number after a random start (top two bits set, odd) that survives the [`sieve`] and passes Miller–Rabin on
//! [`montgomery`] arithmetic: base 2 first (which rejects nearly every composite), then [`EXTRA_ROUNDS`] random bases.
//! The key itself is assembled and checked by the `rsa` crate ([`rsa::RsaPrivateKey::from_p_q`]).
//!
//! The two primes of a key are searched by two threads together ([`PrimeSearch`]): each starts on its own prime and,
//! once that one is found, helps test the other's candidates. A prime's search time varies widely (the distance to
//! the next prime is roughly exponential), so two threads each searching for one prime alone would wait for the
//! slower, about 1.5 times the mean; together, a key's wall time is about half its CPU time. Which thread tests which
//! candidate does not change the result: a search's prime is always the first candidate that passes, so a seeded
//! render stays reproducible.
//!
//! The arithmetic is not constant-time: it only ever touches candidates and the primes it returns, in a process that
//! renders templates, and Go's own generator is no different in that respect before the final tests.

mod montgomery;
mod sieve;

use std::sync::{Mutex, PoisonError};

use rsa::BigUint;

use super::Rng;
use montgomery::Montgomery;

/// Random-base Miller–Rabin rounds after base 2 (FIPS 186-5 asks 4 for 1024-bit primes at 2^-100 error; 5 here).
const EXTRA_ROUNDS: usize = 5;
/// The public exponent Go uses.
pub const PUBLIC_EXPONENT: u64 = 65537;

/// Why no RSA key was generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyGenError {
    #[error("unsupported RSA key size {bits}")]
    UnsupportedSize { bits: usize },
    #[error("the prime search ended without a prime")]
    NoPrime,
    /// The `rsa` crate refused the primes (its message).
    #[error("{0}")]
    Rsa(String),
}

/// Generates an RSA private key of `bits` bits (1024, 2048, 3072 or 4096; Sprig asks for 2048 and 4096) with exponent
/// 65537.
pub fn generate_rsa_key(bits: usize, rng: &mut Rng) -> Result<rsa::RsaPrivateKey, KeyGenError> {
    match bits {
        1024 => generate::<8>(rng),
        2048 => generate::<16>(rng),
        3072 => generate::<24>(rng),
        4096 => generate::<32>(rng),
        _ => Err(KeyGenError::UnsupportedSize { bits }),
    }
}

/// A key whose primes have L limbs each.
fn generate<const L: usize>(rng: &mut Rng) -> Result<rsa::RsaPrivateKey, KeyGenError> {
    loop {
        let searches = [PrimeSearch::<L>::new(rng), PrimeSearch::<L>::new(rng)];
        search_together(&searches);
        let [Some(p), Some(q)] = searches.map(PrimeSearch::prime) else {
            return Err(KeyGenError::NoPrime);
        };
        // FIPS 186-5 asks |p − q| > 2^(half − 100); equal top limbs are as good as impossible, but cheap to rule out.
        if p[L - 1] == q[L - 1] {
            continue;
        }
        return rsa::RsaPrivateKey::from_p_q(
            to_biguint(&p),
            to_biguint(&q),
            BigUint::from(PUBLIC_EXPONENT),
        )
        .map_err(|e| KeyGenError::Rsa(e.to_string()));
    }
}

fn to_biguint(limbs: &[u64]) -> BigUint {
    let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    BigUint::from_bytes_le(&bytes)
}

/// Runs both searches to the end on this thread and one helper (or on this thread alone if no thread can be
/// started). Each thread takes one search first, then helps with the other.
fn search_together<const L: usize>(searches: &[PrimeSearch<L>; 2]) {
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new().spawn_scoped(scope, || work(searches, 1));
        work(searches, 0);
        // A helper that died only leaves its claimed candidate untested: this thread has finished both searches.
        if let Ok(helper) = helper {
            let _ = helper.join();
        }
    });
}

fn work<const L: usize>(searches: &[PrimeSearch<L>; 2], first: usize) {
    for search in [&searches[first], &searches[1 - first]] {
        while let Some(candidate) = search.claim() {
            if search.passes(&candidate) {
                search.found(candidate);
            }
        }
    }
}

/// The search for one prime of L limbs, shared by the threads: candidates are numbered in order across windows and
/// handed out one at a time. Once one passes, no more are handed out; a candidate still being tested then replaces it
/// only if it comes earlier. Every candidate before the one kept has been tested, so it is the first prime.
struct PrimeSearch<const L: usize> {
    state: Mutex<SearchState<L>>,
    /// The source of each candidate's random Miller–Rabin bases ([`Rng::fork_at`] its number), so that the bases do
    /// not depend on the thread either.
    bases: Rng,
}

struct SearchState<const L: usize> {
    /// Draws each window's start.
    rng: Rng,
    start: [u64; L],
    /// The current window's sieve survivors (offsets k: the candidate is start + 2k).
    survivors: Vec<u16>,
    /// The number of the window's first survivor.
    first: usize,
    /// The number of the next candidate to hand out.
    next: usize,
    /// The first candidate found to pass, with its number.
    found: Option<(usize, [u64; L])>,
}

/// A number to test, with its place in the search's order.
struct Candidate<const L: usize> {
    number: usize,
    value: [u64; L],
}

impl<const L: usize> PrimeSearch<L> {
    fn new(rng: &mut Rng) -> Self {
        let mut state = SearchState {
            rng: rng.fork(),
            start: [0; L],
            survivors: Vec::with_capacity(sieve::WINDOW),
            first: 0,
            next: 0,
            found: None,
        };
        state.new_window();
        PrimeSearch {
            state: Mutex::new(state),
            bases: rng.fork(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SearchState<L>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next candidate to test, or None once the search is over.
    fn claim(&self) -> Option<Candidate<L>> {
        let mut state = self.lock();
        loop {
            // Every candidate numbered below `next` is claimed already, and is tested by whoever claimed it.
            if state.found.is_some() {
                return None;
            }
            let number = state.next;
            let Some(&k) = state.survivors.get(number - state.first) else {
                state.new_window();
                continue;
            };
            state.next += 1;
            let mut value = state.start;
            // Past the top limb or below the top two bits set (a start just under 2^bits): not a candidate.
            if montgomery::add_small(&mut value, 2 * u64::from(k)) || value[L - 1] >> 62 != 0b11 {
                continue;
            }
            return Some(Candidate { number, value });
        }
    }

    fn passes(&self, candidate: &Candidate<L>) -> bool {
        let mont = Montgomery::new(&candidate.value);
        if !mont.miller_rabin_base2() {
            return false;
        }
        let mut bases = self.bases.fork_at(candidate.number as u64);
        (0..EXTRA_ROUNDS).all(|_| mont.miller_rabin_random(&mut bases))
    }

    fn found(&self, candidate: Candidate<L>) {
        let mut state = self.lock();
        if state
            .found
            .as_ref()
            .is_none_or(|(n, _)| candidate.number < *n)
        {
            state.found = Some((candidate.number, candidate.value));
        }
    }

    fn prime(self) -> Option<[u64; L]> {
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        state.found.map(|(_, p)| p)
    }
}

impl<const L: usize> SearchState<L> {
    /// Moves on to a fresh window after a new random start; the numbering of candidates goes on.
    fn new_window(&mut self) {
        self.start.iter_mut().for_each(|l| *l = self.rng.next_u64());
        self.start[L - 1] |= 0b11 << 62;
        self.start[0] |= 1;
        sieve::sieve(&self.start, &mut self.survivors);
        self.first = self.next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    /// The first prime from the search's start, found by one thread testing every survivor in order.
    fn first_prime_alone<const L: usize>(search: &PrimeSearch<L>) -> [u64; L] {
        while let Some(c) = search.claim() {
            if search.passes(&c) {
                return c.value;
            }
        }
        unreachable!("a search only ends with a prime")
    }

    #[test]
    fn generated_primes_are_prime_and_shaped_like_gos() {
        let mut rng = Rng::seeded(11);
        let searches = [
            PrimeSearch::<8>::new(&mut rng),
            PrimeSearch::<8>::new(&mut rng),
        ];
        search_together(&searches);
        for p in searches.map(|s| s.prime().unwrap()) {
            assert_eq!(p[7] >> 62, 0b11);
            let pb = to_biguint(&p);
            // Fermat to a few bases with BigUint's own arithmetic.
            let one = BigUint::from(1u8);
            for base in [2u32, 3, 5, 7, 11] {
                assert_eq!(BigUint::from(base).modpow(&(&pb - &one), &pb), one);
            }
            assert_ne!(&pb % BigUint::from(PUBLIC_EXPONENT), one);
        }
    }

    /// Two threads sharing the searches find the same primes as one thread alone: the first candidate of each search
    /// that passes, whoever tested it.
    #[test]
    fn the_primes_do_not_depend_on_which_thread_tested_what() {
        for seed in 0..6 {
            let alone = {
                let mut rng = Rng::seeded(seed);
                [
                    PrimeSearch::<8>::new(&mut rng),
                    PrimeSearch::<8>::new(&mut rng),
                ]
                .map(|s| first_prime_alone(&s))
            };
            let together = {
                let mut rng = Rng::seeded(seed);
                let searches = [
                    PrimeSearch::<8>::new(&mut rng),
                    PrimeSearch::<8>::new(&mut rng),
                ];
                search_together(&searches);
                searches.map(|s| s.prime().unwrap())
            };
            assert_eq!(alone, together, "seed {seed}");
        }
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

    #[test]
    fn every_supported_size_makes_a_valid_key_and_others_are_refused() {
        // 4096 (genPrivateKey "rsa") is generated and parsed by tests/crypto.rs.
        for bits in [2048, 3072] {
            let key = generate_rsa_key(bits, &mut Rng::seeded(bits as u64)).unwrap();
            assert_eq!(key.n().bits(), bits);
            key.validate().unwrap();
        }
        for bits in [0, 512, 1000, 8192] {
            let err = generate_rsa_key(bits, &mut Rng::seeded(1)).unwrap_err();
            assert_eq!(err, KeyGenError::UnsupportedSize { bits });
            assert_eq!(err.to_string(), format!("unsupported RSA key size {bits}"));
        }
    }
}
