//! `learnability`: Sampling For Learnability (Rutherford et al., "No Regrets: Investigating and
//! Improving Regret Approximations for Curriculum Discovery", NeurIPS 2024) over the slots of an
//! engine's pool.
//!
//! A slot's learnability is `p · (1 − p)`, with `p` the success rate of the last `window`
//! episodes on its level, once it has `min_episodes` of them: highest for levels the agent
//! solves half the time, 0 for those it always or never solves. Each call:
//! - **Weights:** the buffer is the most learnable `top_fraction` of the scored slots (those of
//!   learnability above 0); an episode plays a buffer level with probability `buffer_prob`
//!   (uniformly among them, as SFL samples its buffer), otherwise any slot uniformly, which is
//!   how new levels get scored (SFL's evaluation rollouts, played here as ordinary episodes).
//!   Uniform while nothing is scored.
//! - **Refills:** scored slots of learnability 0 (solved every time, or never) are replaced by
//!   new levels from the generator, at most `refill_fraction · P` a call, those no environment
//!   plays first: the buffer is refreshed from the generator.

use std::collections::VecDeque;

use floe_plugin_api::{ConfigError, EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};
use serde::{Deserialize, Serialize};

use super::{choose_refills, Slots};
use crate::curriculum::in_range;

/// Parameters of [`Learnability`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnabilityParams {
    /// The share of episodes that play the buffer (SFL's rho).
    pub buffer_prob: f64,
    /// The buffer: this share of the scored slots, the most learnable.
    pub top_fraction: f64,
    /// The episodes a slot's success rate is taken over (the last ones).
    pub window: u32,
    /// Episodes a slot needs before it is scored.
    pub min_episodes: u32,
    /// The most slots refilled in one call, as a share of the pool.
    pub refill_fraction: f64,
}

impl Default for LearnabilityParams {
    fn default() -> Self {
        LearnabilityParams {
            buffer_prob: 0.8,
            top_fraction: 0.25,
            window: 16,
            min_episodes: 4,
            refill_fraction: 0.1,
        }
    }
}

/// The `learnability` level sampler.
#[derive(Debug, Clone)]
pub struct Learnability {
    p: LearnabilityParams,
    /// Per slot, the outcomes of its last `window` episodes (true: success).
    slots: Slots<VecDeque<bool>>,
}

impl Learnability {
    /// An SFL sampler with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming a parameter out of range.
    pub fn new(p: LearnabilityParams) -> Result<Self, ConfigError> {
        in_range("buffer_prob", p.buffer_prob, 0.0, 1.0)?;
        in_range("top_fraction", p.top_fraction, 0.0, 1.0)?;
        in_range("refill_fraction", p.refill_fraction, 0.0, 1.0)?;
        if p.window == 0 || p.min_episodes == 0 || p.min_episodes > p.window {
            return Err(ConfigError::param(
                "min_episodes",
                format!("{} must be in 1..=window ({})", p.min_episodes, p.window),
            ));
        }
        Ok(Learnability { p, slots: Slots::default() })
    }

    /// Each slot's learnability `p · (1 − p)`, or `None` while it has too few episodes.
    #[must_use]
    pub fn learnability(&self) -> Vec<Option<f64>> {
        self.slots
            .slots
            .iter()
            .map(|s| {
                let h = &s.stats;
                (h.len() as u32 >= self.p.min_episodes).then(|| {
                    let p = h.iter().filter(|&&x| x).count() as f64 / h.len() as f64;
                    p * (1.0 - p)
                })
            })
            .collect()
    }
}

impl LevelSampler for Learnability {
    fn save(&self) -> Result<String, PluginError> {
        super::save("learnability", &self.p, &self.slots)
    }

    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        self.slots = super::restore("learnability", &self.p, state)?;
        Ok(())
    }

    fn slot_stats(&self) -> Vec<floe_plugin_api::SlotStats> {
        self.slots
            .slots
            .iter()
            .map(|slot| {
                let h = &slot.stats;
                let p = (h.len() as u32 >= self.p.min_episodes)
                    .then(|| h.iter().filter(|&&x| x).count() as f64 / h.len() as f64);
                floe_plugin_api::SlotStats {
                    generation: slot.generation,
                    plays: h.len() as u32,
                    staleness: floe_plugin_api::UNKNOWN,
                    score: p.map_or(f32::NAN, |p| p as f32),
                    figure: p.map_or(f32::NAN, |p| (p * (1.0 - p)) as f32),
                }
            })
            .collect()
    }

    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        _scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        self.slots.follow(levels);
        let window = self.p.window as usize;
        for e in episodes {
            if let Some(h) = self.slots.of(e) {
                if h.len() == window {
                    h.pop_front();
                }
                h.push_back(e.success());
            }
        }
        let n = levels.len();
        let l = self.learnability();
        let mut scored: Vec<usize> = (0..n).filter(|&i| l[i].is_some_and(|x| x > 0.0)).collect();
        // Most learnable first; a stable sort keeps slot order among equals.
        scored.sort_by(|&a, &b| l[b].unwrap_or(0.0).total_cmp(&l[a].unwrap_or(0.0)));
        let buffer =
            &scored[..((self.p.top_fraction * scored.len() as f64).ceil() as usize).min(scored.len())];
        let mut weights = vec![(1.0 - self.p.buffer_prob) / n as f64; n];
        if buffer.is_empty() {
            weights.fill(1.0);
        } else {
            for &i in buffer {
                weights[i] += self.p.buffer_prob / buffer.len() as f64;
            }
            if weights.iter().all(|&w| w == 0.0) {
                weights.fill(1.0);
            }
        }
        let dead: Vec<usize> = (0..n).filter(|&i| l[i] == Some(0.0)).collect();
        let most = (self.p.refill_fraction * n as f64).ceil() as usize;
        let refill =
            choose_refills(levels, &dead, most.min(dead.iter().filter(|&&i| levels[i].in_play == 0).count()));
        Ok(LevelPlan { weights: Some(weights), refill, config: None, edits: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{episode, levels};
    use super::*;

    #[test]
    fn the_most_learnable_levels_are_sampled_and_the_unlearnable_replaced() {
        let p = LearnabilityParams {
            buffer_prob: 0.5,
            top_fraction: 0.5,
            window: 4,
            min_episodes: 2,
            refill_fraction: 0.5,
        };
        let mut s = Learnability::new(p).unwrap();
        let mut lv = levels(4);
        assert_eq!(s.update(&lv, &[], None).unwrap().weights, Some(vec![1.0; 4]), "nothing scored: uniform");
        // Slot 0: 2 of 4 solved (0.25); slot 1: 1 of 4 (0.1875); slot 2: always (0); slot 3: one
        // episode, not scored yet.
        let mut eps = Vec::new();
        for (slot, wins) in
            [(0, [true, false, true, false]), (1, [true, false, false, false]), (2, [true; 4])]
        {
            eps.extend(wins.iter().map(|&w| episode(slot, w, 0.0)));
        }
        eps.push(episode(3, false, 0.0));
        let plan = s.update(&lv, &eps, None).unwrap();
        let l = s.learnability();
        assert_eq!(l, vec![Some(0.25), Some(0.1875), Some(0.0), None]);
        // Buffer: the top half of the two learnable slots, slot 0: 0.5 on it, 0.5 spread over all.
        assert_eq!(plan.weights, Some(vec![0.625, 0.125, 0.125, 0.125]));
        assert_eq!(plan.refill, vec![2], "always solved: nothing to learn");
        // The window keeps the last 4: slot 1 solved twice more is 2 of 4 (0.25), slot 0 3 of 4
        // (0.1875); slot 2, refilled, starts again.
        lv[2].generation = 1;
        lv[0].in_play = 1;
        let more =
            [episode(1, true, 0.0), episode(1, true, 0.0), episode(0, true, 0.0), episode(0, true, 0.0)];
        let plan = s.update(&lv, &more, None).unwrap();
        assert_eq!(s.learnability(), vec![Some(0.1875), Some(0.25), None, None]);
        assert!(plan.refill.is_empty());
        assert_eq!(plan.weights, Some(vec![0.125, 0.625, 0.125, 0.125]), "slot 1 is the most learnable now");
        assert!(Learnability::new(LearnabilityParams {
            min_episodes: 5,
            window: 4,
            ..LearnabilityParams::default()
        })
        .is_err());
    }
}
