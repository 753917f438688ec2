//! `frontier`: the engineer's guideline followed literally: train where the policy is neither
//! hopeless nor done.
//!
//! After each round, reading the last round's validation results, every size of the base
//! configuration gets the weight `v · (1 − v)` (`v` its valid rate; a size without a result
//! counts as `v = 0.5`, the most to learn). The weights are smoothed over neighbouring sizes
//! (`w'(s) = (1 − smoothing) · w(s) + smoothing · mean of its neighbours' w`), so that a size
//! at 0% next to the frontier gets some data before it rises. The data ratios are then
//!
//! ```text
//! data_ratio(s) = floor + (1 − floor · n) · w'(s) / Σ w'
//! ```
//!
//! over the base configuration's `n` sizes: every size keeps at least `floor`, so that learned
//! sizes are not forgotten; when every weight is 0 (all sizes at 0% or 100%), the ratios are
//! equal. The hole and wait ratios and the agent counts are the base configuration's. Round 0
//! (no finished round) is the base configuration itself. The curriculum keeps no state: the
//! same history gives the same configuration.

use floe_plugin_api::{ConfigError, Curriculum, History, PluginError, RoundConfig};
use serde::{Deserialize, Serialize};

use super::in_range;

/// Parameters of [`Frontier`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FrontierParams {
    /// The sizes, their hole and wait ratios, the agent counts, and round 0's data ratios.
    pub base: RoundConfig,
    /// The least data ratio of every size, in `[0, 1 / sizes]`.
    pub floor: f64,
    /// How much of a size's weight comes from its neighbours' mean, in `[0, 1]`.
    pub smoothing: f64,
}

impl Default for FrontierParams {
    fn default() -> Self {
        FrontierParams { base: RoundConfig::round0_default(), floor: 0.02, smoothing: 0.3 }
    }
}

/// The frontier curriculum.
#[derive(Debug, Clone)]
pub struct Frontier {
    p: FrontierParams,
}

impl Frontier {
    /// A frontier curriculum with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming a parameter out of range, or what
    /// [`RoundConfig::validate`] finds in the base configuration.
    pub fn new(p: FrontierParams) -> Result<Self, ConfigError> {
        p.base.validate()?;
        let n = p.base.sizes.len().max(1) as f64;
        in_range("floor", p.floor, 0.0, 1.0 / n)?;
        in_range("smoothing", p.smoothing, 0.0, 1.0)?;
        Ok(Frontier { p })
    }

    /// The data ratios for the sizes' valid rates (`None`: no result).
    #[must_use]
    pub fn ratios(&self, valid: &[Option<f64>]) -> Vec<f64> {
        let w: Vec<f64> = valid.iter().map(|v| v.map_or(0.25, |v| v * (1.0 - v))).collect();
        let smoothed: Vec<f64> = (0..w.len())
            .map(|i| {
                let near: Vec<f64> = [i.checked_sub(1), Some(i + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| w.get(j).copied())
                    .collect();
                if near.is_empty() {
                    w[i]
                } else {
                    let mean = near.iter().sum::<f64>() / near.len() as f64;
                    (1.0 - self.p.smoothing) * w[i] + self.p.smoothing * mean
                }
            })
            .collect();
        let n = w.len() as f64;
        let total: f64 = smoothed.iter().sum();
        if total <= 0.0 {
            return vec![1.0 / n; w.len()];
        }
        let free = 1.0 - self.p.floor * n;
        smoothed.iter().map(|x| self.p.floor + free * x / total).collect()
    }
}

impl Curriculum for Frontier {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let Some(last) = history.last() else { return Ok(self.p.base.clone()) };
        let mut sizes = self.p.base.sizes.clone();
        // Sizes in increasing order, so that neighbours are the next smaller and larger maps.
        sizes.sort_by_key(|s| s.size);
        let valid: Vec<Option<f64>> =
            sizes.iter().map(|s| last.result(s.size).map(|r| r.valid_rate)).collect();
        for (s, r) in sizes.iter_mut().zip(self.ratios(&valid)) {
            s.data_ratio = r;
        }
        Ok(RoundConfig { sizes, ..self.p.base.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curriculum::result;
    use floe_plugin_api::{RoundRecord, SizeResult};

    #[test]
    fn more_data_at_the_frontier_than_on_a_learned_size() {
        let base = RoundConfig::round0_default();
        let mut f =
            Frontier::new(FrontierParams { base: base.clone(), ..FrontierParams::default() }).unwrap();
        assert_eq!(f.next_config(&History::default()).unwrap(), base);
        let sizes: Vec<u32> = base.sizes.iter().map(|s| s.size).collect();
        assert!(sizes.len() >= 3, "{sizes:?}");
        // The smallest size learned (95%), the next at the frontier (50%), the rest hopeless.
        let results: Vec<SizeResult> = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| result(s, [0.95, 0.5].get(i).copied().unwrap_or(0.0)))
            .collect();
        let h = History { rounds: vec![RoundRecord { round: 0, config: base.clone(), results }] };
        let c = f.next_config(&h).unwrap();
        c.validate().unwrap();
        let ratio = |s: u32| c.sizes.iter().find(|z| z.size == s).unwrap().data_ratio;
        assert!(ratio(sizes[1]) > ratio(sizes[0]), "{c:?}");
        // The learned size keeps its floor; the hopeless size beside the frontier gets more than
        // the hopeless ones farther out.
        assert!(ratio(sizes[0]) >= 0.02 && ratio(sizes[2]) > ratio(sizes[sizes.len() - 1]));
        assert!((c.sizes.iter().map(|s| s.data_ratio).sum::<f64>() - 1.0).abs() < 1e-9);
        // The hole and wait ratios are the base's; the same history gives the same design.
        for (a, b) in c.sizes.iter().zip(&base.sizes) {
            assert_eq!((a.size, a.hole_ratio, a.wait_ratio), (b.size, b.hole_ratio, b.wait_ratio));
        }
        assert_eq!(f.next_config(&h).unwrap(), c);
    }

    #[test]
    fn nothing_to_learn_anywhere_is_uniform_and_bad_parameters_are_refused() {
        let f = Frontier::new(FrontierParams::default()).unwrap();
        let r = f.ratios(&[Some(0.0), Some(1.0), Some(0.0)]);
        assert!(r.iter().all(|&x| (x - 1.0 / 3.0).abs() < 1e-12), "{r:?}");
        let bad = |floor, smoothing| {
            Frontier::new(FrontierParams { floor, smoothing, ..FrontierParams::default() })
        };
        assert!(bad(0.9, 0.3).unwrap_err().to_string().contains("floor"));
        assert!(bad(0.0, 1.5).unwrap_err().to_string().contains("smoothing"));
        assert!(bad(f64::NAN, 0.3).is_err());
    }
}
