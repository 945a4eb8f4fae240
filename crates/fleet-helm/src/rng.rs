//! The randomness source of a render: the OS CSPRNG unless a seed is set, so tests and `--seed`-style renders get
//! stable output. The random, key and certificate functions draw from it through their call context
//! ([`crate::call::Call`]).

use rsa::rand_core::{CryptoRng, RngCore};

/// The generator behind every random function. By default it draws from the operating system's CSPRNG, because
/// generated passwords, keys and certificates end up in clusters; [`Rng::seeded`] makes a reproducible stream
/// (SplitMix64, not secure) for tests and `--seed`-style renders.
///
/// OS randomness is fetched [`OS_BATCH`] bytes at a time and handed out from that batch: a render asks for a few
/// bytes hundreds of times (every character of a `randAlphaNum` password, every prime candidate of a key), and a
/// system call per ask was a visible share of a short render. The batch is never shared: a clone or a fork starts
/// with an empty one, and `Debug` does not print it.
#[derive(Default)]
pub struct Rng {
    seed: Option<u64>,
    os: OsBatch,
}

/// How many bytes of OS randomness [`Rng`] fetches at once.
pub const OS_BATCH: usize = 256;

/// Fetched OS random bytes not yet handed out: `bytes[used..]`.
struct OsBatch {
    bytes: [u8; OS_BATCH],
    used: usize,
}

impl Default for OsBatch {
    fn default() -> Self {
        OsBatch {
            bytes: [0; OS_BATCH],
            used: OS_BATCH,
        }
    }
}

impl OsBatch {
    /// Fills `dest` with OS random bytes, from the batch while it lasts.
    fn fill(&mut self, dest: &mut [u8]) {
        if dest.len() >= OS_BATCH {
            return rsa::rand_core::OsRng.fill_bytes(dest);
        }
        if OS_BATCH - self.used < dest.len() {
            rsa::rand_core::OsRng.fill_bytes(&mut self.bytes);
            self.used = 0;
        }
        let end = self.used + dest.len();
        dest.copy_from_slice(&self.bytes[self.used..end]);
        // Handed-out bytes are not kept around.
        self.bytes[self.used..end].fill(0);
        self.used = end;
    }
}

/// A copy of a seeded generator continues the same stream from the same point; a copy of an OS-backed one fetches
/// its own bytes.
impl Clone for Rng {
    fn clone(&self) -> Self {
        Rng {
            seed: self.seed,
            os: OsBatch::default(),
        }
    }
}

impl std::fmt::Debug for Rng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seed {
            Some(_) => f.write_str("Rng(seeded)"),
            None => f.write_str("Rng(os)"),
        }
    }
}

impl Rng {
    pub fn seeded(seed: u64) -> Self {
        Rng {
            seed: Some(seed),
            os: OsBatch::default(),
        }
    }

    /// An independent generator for another thread: seeded from this one when this one is seeded (so a seeded
    /// render stays reproducible), else the OS CSPRNG as well.
    pub fn fork(&mut self) -> Rng {
        match self.seed {
            Some(_) => Rng::seeded(Rng::next_u64(self)),
            None => Rng::default(),
        }
    }

    /// The generator for task `index` of a set of tasks whose results must not depend on which thread ran which:
    /// when this one is seeded, seeded from its state and the index (this one does not advance); else the OS CSPRNG.
    pub fn fork_at(&self, index: u64) -> Rng {
        match self.seed {
            Some(state) => {
                Rng::seeded(state ^ index.wrapping_add(1).wrapping_mul(0xd1b5_4a32_d192_ed03))
            }
            None => Rng::default(),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let Some(state) = &mut self.seed else {
            let mut bytes = [0u8; 8];
            self.os.fill(&mut bytes);
            return u64::from_le_bytes(bytes);
        };
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
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
        if self.seed.is_none() {
            return self.os.fill(dest);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_randomness_is_batched_but_never_repeated_or_shared() {
        let mut rng = Rng::default();
        // Several batches' worth: every draw is new, across refills.
        let draws: std::collections::HashSet<u64> =
            (0..4 * OS_BATCH).map(|_| rng.next_u64()).collect();
        assert_eq!(draws.len(), 4 * OS_BATCH);
        // A clone taken mid-batch does not hand out the bytes the original is about to.
        let mut copy = rng.clone();
        let (mine, theirs): (Vec<u64>, Vec<u64>) =
            (0..4).map(|_| (rng.next_u64(), copy.next_u64())).unzip();
        assert_ne!(mine, theirs);
        // Requests larger than a batch and odd sizes are filled whole.
        for len in [1, 7, OS_BATCH - 1, OS_BATCH, 3 * OS_BATCH + 5] {
            let mut buf = vec![0u8; len];
            rng.fill_bytes(&mut buf);
            if len >= 7 {
                assert!(buf.iter().any(|&b| b != 0), "{len} bytes all zero");
            }
        }
        assert_eq!(format!("{rng:?}"), "Rng(os)");
    }

    #[test]
    fn a_seeded_clone_continues_the_same_stream() {
        let mut a = Rng::seeded(42);
        a.next_u64();
        let mut b = a.clone();
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(format!("{a:?}"), "Rng(seeded)");
    }
}
