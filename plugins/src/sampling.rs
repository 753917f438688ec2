//! Seeded draws shared by the curricula: uniform numbers from floe's counter-based generator,
//! and weighted draws without replacement.

use floe_core::rng::Rng;

/// A uniform number in `[0, 1)` with 53 random bits.
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1_u64 << 53) as f64)
}

/// One index drawn with probability proportional to `weights` (finite, non-negative); uniform
/// over the indices with `eligible[i]` when the weights of those add up to 0. `None` when no
/// index is eligible.
pub fn weighted(rng: &mut Rng, weights: &[f64], eligible: &[bool]) -> Option<usize> {
    let total: f64 = weights.iter().zip(eligible).filter(|(_, &e)| e).map(|(w, _)| *w).sum();
    let candidates: Vec<usize> = (0..weights.len()).filter(|&i| eligible[i]).collect();
    if candidates.is_empty() {
        return None;
    }
    if total <= 0.0 {
        return Some(candidates[rng.below(candidates.len() as u32) as usize]);
    }
    let target = unit(rng) * total;
    let mut acc = 0.0;
    for &i in &candidates {
        acc += weights[i];
        if target < acc {
            return Some(i);
        }
    }
    // Rounding left the target at the very top: the last candidate with weight.
    candidates.iter().rev().copied().find(|&i| weights[i] > 0.0)
}

/// `count` distinct indices drawn one after another with probability proportional to
/// `weights` among those not yet drawn (`eligible` marks the indices that may be drawn at all).
/// Returns fewer only when fewer are eligible.
pub fn without_replacement(rng: &mut Rng, weights: &[f64], eligible: &[bool], count: usize) -> Vec<u32> {
    let mut left = eligible.to_vec();
    let mut picked = Vec::with_capacity(count);
    while picked.len() < count {
        let Some(i) = weighted(rng, weights, &left) else { break };
        left[i] = false;
        picked.push(i as u32);
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_weights_and_never_repeat() {
        let mut rng = Rng::from_counters(&[1]);
        let weights = [0.0, 1.0, 3.0];
        let eligible = [true; 3];
        let mut counts = [0; 3];
        for _ in 0..4000 {
            counts[weighted(&mut rng, &weights, &eligible).unwrap()] += 1;
        }
        assert_eq!(counts[0], 0);
        // Expected 1000 and 3000; a 5-sigma band is about +-137.
        assert!((counts[1] - 1000_i32).abs() < 140, "{counts:?}");
        let picked = without_replacement(&mut rng, &weights, &eligible, 3);
        assert_eq!(picked.len(), 3, "zero weight is drawn last, uniformly, once the rest are gone");
        let mut sorted = picked.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2]);
        assert_eq!(picked[2], 0);
        assert_eq!(without_replacement(&mut rng, &weights, &[false, true, false], 2), vec![1]);
        assert!(unit(&mut rng) < 1.0);
    }
}
