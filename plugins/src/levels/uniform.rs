//! `uniform`: every slot has the same weight, as an engine without a sampler draws, over a fixed
//! pool by default; with `max_plays`, a slot's level is replaced by a new one from the generator
//! once it was played that many times (1: domain randomisation, nearly every episode on a level
//! of its own when the pool is larger than the number of environments).

use floe_plugin_api::{ConfigError, EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};
use serde::{Deserialize, Serialize};

use super::{choose_refills, Slots};

/// Parameters of [`Uniform`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UniformParams {
    /// Replace a level after this many of its episodes ended (0: never).
    pub max_plays: u32,
}

/// The `uniform` sampler.
#[derive(Debug, Clone)]
pub struct Uniform {
    p: UniformParams,
    plays: Slots<u32>,
    started: bool,
}

impl Uniform {
    /// A uniform sampler.
    ///
    /// # Errors
    /// None today; the signature is the built-ins'.
    pub fn new(p: UniformParams) -> Result<Self, ConfigError> {
        Ok(Uniform { p, plays: Slots::default(), started: false })
    }
}

impl LevelSampler for Uniform {
    fn save(&self) -> Result<String, PluginError> {
        super::save("uniform", &self.p, &(&self.plays, self.started))
    }

    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        (self.plays, self.started) = super::restore("uniform", &self.p, state)?;
        Ok(())
    }

    fn slot_stats(&self) -> Vec<floe_plugin_api::SlotStats> {
        let stats = |slot: &super::Slot<u32>| floe_plugin_api::SlotStats {
            generation: slot.generation,
            plays: slot.stats,
            staleness: floe_plugin_api::UNKNOWN,
            score: f32::NAN,
            figure: f32::NAN,
        };
        self.plays.slots.iter().map(stats).collect()
    }

    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        _scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        self.plays.follow(levels);
        for e in episodes {
            if let Some(n) = self.plays.of(e) {
                *n += 1;
            }
        }
        // The first call sets equal weights (whatever the engine had); later calls keep them.
        let weights = (!std::mem::replace(&mut self.started, true)).then(|| vec![1.0; levels.len()]);
        let mut refill = Vec::new();
        if self.p.max_plays > 0 {
            let worn: Vec<usize> =
                (0..levels.len()).filter(|&i| self.plays.slots[i].stats >= self.p.max_plays).collect();
            // Only slots nobody plays: a level in play is replaced at a later call.
            refill = choose_refills(levels, &worn, worn.iter().filter(|&&i| levels[i].in_play == 0).count());
        }
        Ok(LevelPlan { weights, refill, config: None, edits: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{episode, levels};
    use super::*;

    #[test]
    fn equal_weights_once_and_worn_levels_replaced_when_free() {
        let mut s = Uniform::new(UniformParams::default()).unwrap();
        let lv = levels(4);
        let plan = s.update(&lv, &[], None).unwrap();
        assert_eq!(
            plan,
            LevelPlan { weights: Some(vec![1.0; 4]), refill: vec![], config: None, edits: Vec::new() }
        );
        let plan = s.update(&lv, &[episode(1, true, 1.0)], None).unwrap();
        assert_eq!(plan, LevelPlan::default(), "no refills without max_plays, weights kept");

        let mut s = Uniform::new(UniformParams { max_plays: 2 }).unwrap();
        let mut lv = levels(4);
        s.update(&lv, &[], None).unwrap();
        let plan = s.update(&lv, &[episode(1, true, 1.0), episode(2, false, 0.0)], None).unwrap();
        assert!(plan.refill.is_empty());
        lv[2].in_play = 1;
        let plan = s.update(&lv, &[episode(1, false, 0.0), episode(2, true, 1.0)], None).unwrap();
        assert_eq!(plan.refill, vec![1], "slot 2 is worn too, but in play");
        // Refilled, slot 1 starts again; slot 2, free now, goes.
        lv[1].generation = 1;
        lv[2].in_play = 0;
        let plan = s.update(&lv, &[], None).unwrap();
        assert_eq!(plan.refill, vec![2]);
    }
}
