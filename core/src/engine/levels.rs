//! Level sampling in the engine: per-slot weights of the instance pool, from which every
//! auto-reset draws the level of its next episode, and the checks every way in (Rust, C,
//! Python, a sampler plugin's output) goes through.
//!
//! # The draw, exactly
//! Episode `n` of environment `e` (seed `s` of the last reset) plays slot
//!
//! ```text
//! h = hash4(lo(s + e), hi(s + e), n, 0x00a11ce0)      i = h mod P
//! u = hash4(lo(s + e), hi(s + e), n, 0x00a11ce1) >> 8  (24 bits)
//! slot = i                 without weights
//! slot = i if u < T[i] else A[i]   with weights
//! ```
//!
//! where `(T, A)` is Walker's alias table of the weights ([`LevelWeights`]), built in integers
//! once when the weights are set: every column holds `2^24` units of probability, `T[i]` of
//! them its own slot's and the rest its alias's. The units are the weights' share of `P · 2^24`,
//! rounded by largest remainder, so a slot of weight 0 gets none and is never drawn, and slots
//! of equal weight get exactly `2^24`: equal weights draw exactly what no weights draw. The first
//! hash is [`super::hash::pool_pick`]'s, so results still depend only on the seed, the
//! environment and the episode, never on the backend, the batch size or the threads; the GPU
//! kernels receive the same table.

use super::hash::{hash4, pool_pick};
use crate::error::EngineError;

/// A column's units of probability in the alias table: `T[i] = ALIAS_ONE` keeps slot `i`.
pub const ALIAS_ONE: u32 = 1 << 24;

/// The tag of the draw's second hash (the first is [`pool_pick`]'s).
const ALIAS_TAG: u32 = 0x00a1_1ce1;

/// Checked sampling weights of a pool's slots, and their alias table.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelWeights {
    weights: Vec<f64>,
    /// Per slot `[T, A]`: the units kept, the alias. Empty when every weight is equal (the draw
    /// is then [`pool_pick`]'s).
    table: Vec<[u32; 2]>,
}

impl LevelWeights {
    /// Checks `weights` (one per slot of a pool of `pool_len`) and builds their alias table.
    ///
    /// # Errors
    /// [`EngineError::Invalid`] naming the value: a length other than the pool's, a negative,
    /// NaN or infinite weight, every weight zero, or weights whose sum overflows.
    pub fn new(weights: &[f64], pool_len: usize) -> Result<Self, EngineError> {
        check_weights(weights, pool_len)?;
        let first = weights[0];
        let table = if weights.iter().all(|&w| w == first) { Vec::new() } else { alias_table(weights) };
        Ok(Self { weights: weights.to_vec(), table })
    }

    /// The weights, as given.
    #[must_use]
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The alias table, `[T, A]` per slot (empty when uniform), as the GPU kernels receive it.
    #[must_use]
    pub fn table(&self) -> &[[u32; 2]] {
        &self.table
    }
}

/// The checks of a weights vector for a pool of `pool_len` slots (what [`LevelWeights::new`]
/// refuses), for callers that check before they hand weights on.
///
/// # Errors
/// As [`LevelWeights::new`].
pub fn check_weights(weights: &[f64], pool_len: usize) -> Result<(), EngineError> {
    if weights.len() != pool_len {
        return Err(EngineError::Invalid(format!(
            "{} weights for a pool of {pool_len} slots: give one weight per slot",
            weights.len()
        )));
    }
    if let Some(i) = weights.iter().position(|w| !w.is_finite() || *w < 0.0) {
        return Err(EngineError::Invalid(format!(
            "weight {i} is {}: weights must be finite and not negative",
            weights[i]
        )));
    }
    let sum: f64 = weights.iter().sum();
    if sum == 0.0 {
        return Err(EngineError::Invalid(format!(
            "all {pool_len} weights are zero: at least one slot must have a positive weight"
        )));
    }
    if !sum.is_finite() {
        return Err(EngineError::Invalid(format!(
            "the weights' sum overflows ({sum}): scale them down (only their ratios matter)"
        )));
    }
    Ok(())
}

/// Walker's alias table of checked, not all equal, weights, in integer units (module docs).
fn alias_table(weights: &[f64]) -> Vec<[u32; 2]> {
    let n = weights.len();
    let one = u64::from(ALIAS_ONE);
    let total_units = n as u64 * one;
    let sum: f64 = weights.iter().sum();
    // Each weight's share of the units, rounded down, then the units left over one each to the
    // largest remainders (ties to the lower slot); a weight of 0 has no remainder and gets none.
    let exact: Vec<f64> = weights.iter().map(|&w| w / sum * total_units as f64).collect();
    let mut units: Vec<u64> = exact.iter().map(|&x| (x.floor() as u64).min(total_units)).collect();
    let given: u64 = units.iter().sum();
    let mut left = total_units.saturating_sub(given);
    if left > 0 {
        let mut order: Vec<usize> = (0..n).filter(|&i| weights[i] > 0.0).collect();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        // Fewer units are left than slots of positive weight, but rounding in the shares may
        // leave a few more: go round again.
        while left > 0 {
            for &i in &order {
                if left == 0 {
                    break;
                }
                units[i] += 1;
                left -= 1;
            }
        }
    } else if given > total_units {
        // Rounding may also give a few too many: take them from the largest.
        let mut over = given - total_units;
        while over > 0 {
            let i = (0..n).max_by_key(|&i| (units[i], std::cmp::Reverse(i))).unwrap_or(0);
            units[i] -= 1;
            over -= 1;
        }
    }
    let mut table: Vec<[u32; 2]> = (0..n as u32).map(|i| [ALIAS_ONE, i]).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| units[i] < one);
    small.reverse();
    large.reverse();
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        table[s] = [units[s] as u32, l as u32];
        units[l] -= one - units[s];
        if units[l] < one {
            large.pop();
            small.push(l);
        }
    }
    table
}

/// The slot episode `episode` of an environment with seed words `seed` plays, from a pool of
/// `pool_len` slots, without weights (`table` empty) or with their alias table.
#[inline]
#[must_use]
pub fn level_pick(seed: (u32, u32), episode: u32, pool_len: u32, table: &[[u32; 2]]) -> u32 {
    let i = pool_pick(seed, episode, pool_len);
    if table.is_empty() {
        return i;
    }
    let [keep, alias] = table[i as usize];
    if hash4(seed.0, seed.1, episode, ALIAS_TAG) >> 8 < keep {
        i
    } else {
        alias
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::env_seed;

    /// The probability with which `w`'s draw picks each slot (what its table encodes).
    fn probabilities(w: &LevelWeights) -> Vec<f64> {
        let n = w.weights.len();
        if w.table.is_empty() {
            return vec![1.0 / n as f64; n];
        }
        let mut units = vec![0u64; n];
        for (i, &[t, a]) in w.table.iter().enumerate() {
            units[i] += u64::from(t);
            units[a as usize] += u64::from(ALIAS_ONE - t);
        }
        let total = n as f64 * f64::from(ALIAS_ONE);
        units.iter().map(|&u| u as f64 / total).collect()
    }

    #[test]
    fn equal_weights_draw_exactly_what_no_weights_draw() {
        let w = LevelWeights::new(&[2.5; 7], 7).unwrap();
        assert!(w.table().is_empty(), "equal weights need no table");
        for e in 0..200 {
            for n in 0..5 {
                let s = env_seed(11, e);
                assert_eq!(level_pick(s, n, 7, w.table()), pool_pick(s, n, 7));
            }
        }
    }

    #[test]
    fn the_table_holds_each_weights_share() {
        let weights = [0.0, 1.0, 3.0, 0.5, 0.0, 10.0, 1e-3];
        let w = LevelWeights::new(&weights, weights.len()).unwrap();
        let sum: f64 = weights.iter().sum();
        for (p, &x) in probabilities(&w).iter().zip(&weights) {
            assert!((p - x / sum).abs() < 1e-6, "{p} against {}", x / sum);
        }
        // Slots of weight 0 are never drawn; the draw's frequencies follow the weights.
        let mut seen = [0u32; 7];
        for e in 0..20_000 {
            seen[level_pick(env_seed(3, e), 0, 7, w.table()) as usize] += 1;
        }
        assert_eq!((seen[0], seen[4]), (0, 0));
        let f5 = f64::from(seen[5]) / 20_000.0;
        assert!((f5 - 10.0 / sum).abs() < 0.02, "{seen:?}");
        assert!(seen[2] > seen[1] && seen[1] > seen[3], "{seen:?}");
    }

    #[test]
    fn one_positive_weight_always_draws_its_slot() {
        let mut weights = vec![0.0; 1000];
        weights[617] = 1e-300;
        let w = LevelWeights::new(&weights, 1000).unwrap();
        assert!((0..500).all(|e| level_pick(env_seed(9, e), e, 1000, w.table()) == 617));
    }

    #[test]
    fn bad_weights_are_refused_naming_the_value() {
        let err = |w: &[f64], n| LevelWeights::new(w, n).unwrap_err().to_string();
        assert_eq!(err(&[1.0, 2.0], 3), "2 weights for a pool of 3 slots: give one weight per slot");
        assert_eq!(err(&[1.0, -0.5], 2), "weight 1 is -0.5: weights must be finite and not negative");
        assert!(err(&[f64::NAN, 1.0], 2).starts_with("weight 0 is NaN"));
        assert!(err(&[1.0, f64::INFINITY], 2).starts_with("weight 1 is inf"));
        assert!(err(&[0.0, 0.0], 2).starts_with("all 2 weights are zero"));
        assert!(err(&[f64::MAX, f64::MAX], 2).contains("sum overflows"));
    }
}
