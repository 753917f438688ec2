//! Counter-based randomness: every random draw in floe is a pure function of integers (a seed and
//! counters such as instance index, attempt, environment, step, agent), so results never depend on
//! the thread count, batch size or backend.

/// The SplitMix64 finaliser: a bijective 64-bit mixer.
#[inline]
#[must_use]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hashes a sequence of counters into one 64-bit value.
#[must_use]
pub fn hash(words: &[u64]) -> u64 {
    let mut h = 0x6a09_e667_f3bc_c909_u64;
    for &w in words {
        h = mix64(h ^ mix64(w.wrapping_add(0x9e37_79b9_7f4a_7c15)));
    }
    h
}

/// A small deterministic stream generator (SplitMix64) seeded from counters.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A stream keyed by the given counters.
    #[must_use]
    pub fn from_counters(words: &[u64]) -> Self {
        Self { state: hash(words) }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// A uniform integer in `0..n` (`n > 0`), by Lemire's multiply-shift with rejection.
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0, "Rng::below(0)");
        let n64 = u64::from(n);
        let threshold = (u64::MAX - n64 + 1) % n64;
        loop {
            let x = self.next_u64();
            let m = u128::from(x) * u128::from(n64);
            if (m as u64) >= threshold {
                return (m >> 64) as u32;
            }
        }
    }

    /// Shuffles a slice in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_fixed_functions_of_their_counters() {
        let mut a = Rng::from_counters(&[7, 1, 2]);
        let mut b = Rng::from_counters(&[7, 1, 2]);
        let mut c = Rng::from_counters(&[7, 2, 1]);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        // Pinned value (computed independently): a change here changes every generated data set.
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut r = Rng::from_counters(&[3]);
        let mut seen = [0u32; 5];
        for _ in 0..1000 {
            let x = r.below(5);
            seen[x as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 150), "{seen:?}");
    }
}
