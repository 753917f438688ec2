//! `difficulty-scaling`: start easy and make each map size harder once the policy passes it.
//!
//! After each round, reading the last round's validation results:
//! 1. every trained size whose valid rate is at least `threshold` gets `hole_step` more hole
//!    ratio (up to `max_hole_ratio`, and only while the map keeps room for the agents) and
//!    `wait_step` more wait ratio (up to `max_wait_ratio`);
//! 2. every trained size whose valid rate is below `ease_threshold` gets the same steps less
//!    (down to 0);
//! 3. if the valid rate over the trained sizes, weighted by their data ratios, is at least
//!    `threshold`, and the largest size is below `max_size`, the next size is added with data
//!    ratio `new_size_share` and the entry hole and wait ratios; the other sizes' data ratios
//!    are scaled by `1 − new_size_share`.
//!
//! A size without a result is left as it is. Round 0 trains `start_sizes` with equal data
//! ratios at the entry ratios.

use floe_plugin_api::{ConfigError, Curriculum, History, PluginError, RoundConfig, RoundRecord, SizeConfig};
use serde::{Deserialize, Serialize};

use super::in_range;

/// Parameters of [`DifficultyScaling`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DifficultyParams {
    /// Map sizes of round 0.
    pub start_sizes: Vec<u32>,
    /// Agent counts to train on.
    pub agents: Vec<u32>,
    /// Hole ratio of a size when it enters.
    pub entry_hole_ratio: f64,
    /// Wait ratio of a size when it enters.
    pub entry_wait_ratio: f64,
    /// Valid rate at which a size gets harder (and, over all sizes, a size is added).
    pub threshold: f64,
    /// Valid rate below which a size gets easier (0 never eases).
    pub ease_threshold: f64,
    /// Hole ratio added per step.
    pub hole_step: f64,
    /// Wait ratio added per step.
    pub wait_step: f64,
    /// Largest hole ratio.
    pub max_hole_ratio: f64,
    /// Largest wait ratio.
    pub max_wait_ratio: f64,
    /// Largest map size.
    pub max_size: u32,
    /// Data ratio of a newly added size.
    pub new_size_share: f64,
}

impl Default for DifficultyParams {
    fn default() -> Self {
        DifficultyParams {
            start_sizes: vec![3],
            agents: vec![2],
            entry_hole_ratio: 0.1,
            entry_wait_ratio: 0.25,
            threshold: 0.7,
            ease_threshold: 0.2,
            hole_step: 0.05,
            wait_step: 0.1,
            max_hole_ratio: 0.5,
            max_wait_ratio: 0.75,
            max_size: 10,
            new_size_share: 0.25,
        }
    }
}

/// The difficulty-scaling curriculum.
#[derive(Debug, Clone)]
pub struct DifficultyScaling {
    p: DifficultyParams,
}

impl DifficultyScaling {
    /// A difficulty-scaling curriculum with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming a parameter out of range, or what
    /// [`RoundConfig::validate`] finds in the round-0 configuration.
    pub fn new(p: DifficultyParams) -> Result<Self, ConfigError> {
        in_range("threshold", p.threshold, 0.0, 1.0)?;
        in_range("ease_threshold", p.ease_threshold, 0.0, p.threshold)?;
        in_range("hole_step", p.hole_step, 0.0, 1.0)?;
        in_range("wait_step", p.wait_step, 0.0, 1.0)?;
        in_range("max_hole_ratio", p.max_hole_ratio, 0.0, 0.99)?;
        in_range("max_wait_ratio", p.max_wait_ratio, 0.0, 1.0)?;
        in_range("entry_hole_ratio", p.entry_hole_ratio, 0.0, p.max_hole_ratio)?;
        in_range("entry_wait_ratio", p.entry_wait_ratio, 0.0, p.max_wait_ratio)?;
        in_range("new_size_share", p.new_size_share, 0.0, 1.0)?;
        let s = DifficultyScaling { p };
        let start = s.initial();
        start.validate()?;
        if start.sizes.iter().any(|z| z.size > s.p.max_size) {
            return Err(ConfigError::param("max_size", "is below a start size"));
        }
        Ok(s)
    }

    /// The round-0 configuration.
    #[must_use]
    pub fn initial(&self) -> RoundConfig {
        let n = self.p.start_sizes.len().max(1) as f64;
        RoundConfig {
            sizes: self
                .p
                .start_sizes
                .iter()
                .map(|&size| SizeConfig {
                    size,
                    data_ratio: 1.0 / n,
                    hole_ratio: self.p.entry_hole_ratio,
                    wait_ratio: self.p.entry_wait_ratio,
                })
                .collect(),
            agents: self.p.agents.clone(),
            replay_fraction: 0.0,
        }
    }

    /// The next configuration and, one line per change, why.
    #[must_use]
    pub fn decide(&self, history: &History) -> (RoundConfig, Vec<String>) {
        match history.last() {
            None => (self.initial(), vec!["no finished round: the initial configuration".into()]),
            Some(last) => self.step(last),
        }
    }

    fn step(&self, last: &RoundRecord) -> (RoundConfig, Vec<String>) {
        let p = &self.p;
        let mut cfg = last.config.clone();
        let mut notes = Vec::new();
        let (mut weighted, mut weight) = (0.0, 0.0);
        for i in 0..cfg.sizes.len() {
            let size = cfg.sizes[i].size;
            let Some(res) = last.result(size).filter(|_| cfg.sizes[i].data_ratio > 0.0) else { continue };
            weighted += cfg.sizes[i].data_ratio * res.valid_rate;
            weight += cfg.sizes[i].data_ratio;
            let s = cfg.sizes[i].clone();
            let (hole, wait, verb) = if res.valid_rate >= p.threshold {
                (
                    (s.hole_ratio + p.hole_step).min(p.max_hole_ratio),
                    (s.wait_ratio + p.wait_step).min(p.max_wait_ratio),
                    "harder",
                )
            } else if res.valid_rate < p.ease_threshold {
                ((s.hole_ratio - p.hole_step).max(0.0), (s.wait_ratio - p.wait_step).max(0.0), "easier")
            } else {
                continue;
            };
            cfg.sizes[i].wait_ratio = wait;
            cfg.sizes[i].hole_ratio = hole;
            if cfg.validate().is_err() {
                // More holes would leave no room for the agents: keep the holes.
                cfg.sizes[i].hole_ratio = s.hole_ratio;
            }
            notes.push(format!(
                "size {size}: valid rate {:.2}, {verb}: hole ratio {:.2} -> {:.2}, wait ratio {:.2} -> {:.2}",
                res.valid_rate, s.hole_ratio, cfg.sizes[i].hole_ratio, s.wait_ratio, cfg.sizes[i].wait_ratio
            ));
        }
        let overall = if weight > 0.0 { weighted / weight } else { 0.0 };
        let largest = cfg.sizes.iter().map(|s| s.size).max().unwrap_or(0);
        if weight > 0.0 && overall >= p.threshold && largest < p.max_size {
            let mut grown = cfg.clone();
            for s in &mut grown.sizes {
                s.data_ratio *= 1.0 - p.new_size_share;
            }
            grown.sizes.push(SizeConfig {
                size: largest + 1,
                data_ratio: p.new_size_share,
                hole_ratio: p.entry_hole_ratio,
                wait_ratio: p.entry_wait_ratio,
            });
            if grown.validate().is_ok() {
                notes.push(format!(
                    "overall valid rate {overall:.2} >= {:.2}: adding size {} with data ratio {:.2}",
                    p.threshold,
                    largest + 1,
                    p.new_size_share
                ));
                cfg = grown;
            }
        }
        if notes.is_empty() {
            notes.push(format!("overall valid rate {overall:.2}: no change"));
        }
        (cfg, notes)
    }
}

impl Curriculum for DifficultyScaling {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        Ok(self.decide(history).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curriculum::result;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn thresholds_by_hand() {
        let d = DifficultyScaling::new(DifficultyParams::default()).unwrap();
        let mut h = History::default();
        let c0 = d.decide(&h).0;
        assert_eq!(c0.sizes.len(), 1);
        assert_eq!((c0.sizes[0].size, c0.sizes[0].hole_ratio, c0.sizes[0].wait_ratio), (3, 0.1, 0.25));

        // Round 0: size 3 passes (0.8 >= 0.7): harder, and size 4 enters with 0.25 of the data.
        h.rounds.push(RoundRecord { round: 0, config: c0, results: vec![result(3, 0.8), result(9, 0.0)] });
        let (c1, notes) = d.decide(&h);
        assert_eq!(c1.sizes.len(), 2);
        close(c1.sizes[0].hole_ratio, 0.15);
        close(c1.sizes[0].wait_ratio, 0.35);
        close(c1.sizes[0].data_ratio, 0.75);
        assert_eq!(c1.sizes[1].size, 4);
        close(c1.sizes[1].data_ratio, 0.25);
        close(c1.sizes[1].hole_ratio, 0.1);
        assert_eq!(notes.len(), 2, "{notes:?}");

        // Round 1: size 3 at 0.75 passes again, size 4 at 0.1 eases; overall
        // 0.75 * 0.75 + 0.25 * 0.1 = 0.5875 < 0.7: no new size.
        h.rounds.push(RoundRecord { round: 1, config: c1, results: vec![result(3, 0.75), result(4, 0.1)] });
        let (c2, _) = d.decide(&h);
        assert_eq!(c2.sizes.len(), 2);
        close(c2.sizes[0].hole_ratio, 0.2);
        close(c2.sizes[0].wait_ratio, 0.45);
        close(c2.sizes[1].hole_ratio, 0.05);
        close(c2.sizes[1].wait_ratio, 0.15);
        // Between the thresholds nothing changes.
        h.rounds.push(RoundRecord {
            round: 2,
            config: c2.clone(),
            results: vec![result(3, 0.5), result(4, 0.5)],
        });
        let (c3, notes) = d.decide(&h);
        assert_eq!(c3, c2);
        assert!(notes[0].contains("no change"));
    }

    #[test]
    fn caps_hold() {
        let d =
            DifficultyScaling::new(DifficultyParams { max_size: 3, ..DifficultyParams::default() }).unwrap();
        let mut cfg = d.initial();
        cfg.sizes[0].hole_ratio = 0.48;
        cfg.sizes[0].wait_ratio = 0.7;
        let h =
            History { rounds: vec![RoundRecord { round: 0, config: cfg, results: vec![result(3, 1.0)] }] };
        let (c, _) = d.decide(&h);
        assert_eq!(c.sizes.len(), 1, "max_size 3: no size 4");
        // 3x3 at 0.5 holes: round(4.5) = 5 holes leave 4 cells, room for 2 agents.
        close(c.sizes[0].hole_ratio, 0.5);
        close(c.sizes[0].wait_ratio, 0.75);
        assert!(DifficultyScaling::new(DifficultyParams { threshold: 1.5, ..DifficultyParams::default() })
            .is_err());
    }
}
