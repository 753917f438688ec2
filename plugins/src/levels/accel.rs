//! `accel`: ACCEL (Parker-Holder et al., "Evolving Curricula with Regret-Based Environment
//! Design", 2022) over the slots of an engine's pool: robust PLR ([`super::plr`]) whose buffer
//! also grows by editing the levels it replays.
//!
//! Each call, after PLR's own update (scores, weights, refills of new levels):
//! 1. **Parents.** With `edit_from: "replayed"` (jaxued's choice), the slots that were scored
//!    before the call and were played in it; with `"top"`, every scored slot. The highest scores
//!    first.
//! 2. **Children's slots.** The scored slots of lowest score (the lower slot first among equal
//!    scores; those no environment plays first), other than the parents and PLR's own refills.
//! 3. **Edits.** Up to `edit_fraction · P` parents each get a child: the host edits the parent's
//!    level with `edits` changes (`floe_core::mutate`, solved again) into the child's slot
//!    ([`LevelEdit`]). A child is a new level to PLR: unseen until its first episode is scored,
//!    and, robust, played first without gradient.

use floe_plugin_api::{
    ConfigError, EpisodeRecord, LevelEdit, LevelPlan, LevelRecord, LevelSampler, PluginError,
};
use serde::{Deserialize, Serialize};

use super::plr::{LevelPlr, LevelPlrParams};
use crate::curriculum::in_range;

/// Which levels are edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditFrom {
    /// The scored levels replayed in the call (jaxued's ACCEL).
    Replayed,
    /// The highest-scored levels of the buffer.
    Top,
}

/// Parameters of [`Accel`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccelParams {
    /// The PLR underneath (robust by default).
    pub plr: LevelPlrParams,
    /// Changes to each edited level (jaxued's `num_edits`, 5).
    pub edits: u32,
    /// The share of the pool a call fills with edited levels, at most.
    pub edit_fraction: f64,
    /// Which levels are edited.
    pub edit_from: EditFrom,
}

impl Default for AccelParams {
    fn default() -> Self {
        AccelParams {
            plr: LevelPlrParams::default(),
            edits: 5,
            edit_fraction: 0.05,
            edit_from: EditFrom::Replayed,
        }
    }
}

/// The `accel` level sampler.
#[derive(Debug, Clone)]
pub struct Accel {
    plr: LevelPlr,
    p: AccelParams,
}

impl Accel {
    /// An ACCEL sampler with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming a parameter out of range (PLR's included).
    pub fn new(p: AccelParams) -> Result<Self, ConfigError> {
        if p.edits == 0 {
            return Err(ConfigError::param("edits", "0: make at least one edit"));
        }
        in_range("edit_fraction", p.edit_fraction, 0.0, 1.0)?;
        Ok(Accel { plr: LevelPlr::new(p.plr.clone())?, p })
    }
}

impl LevelSampler for Accel {
    fn save(&self) -> Result<String, PluginError> {
        super::save("accel", &self.p, &self.plr.state())
    }

    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        let state = super::restore("accel", &self.p, state)?;
        self.plr.set_state(state);
        Ok(())
    }

    fn slot_stats(&self) -> Vec<floe_plugin_api::SlotStats> {
        self.plr.slot_stats()
    }

    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        let before = self.plr.scores(levels);
        let mut plan = self.plr.update(levels, episodes, scores)?;
        let after = self.plr.scores(levels);
        let n = levels.len();
        let mut played = vec![false; n];
        for e in episodes {
            if levels.get(e.instance as usize).is_some_and(|l| l.generation == e.generation) {
                played[e.instance as usize] = true;
            }
        }
        let by_score = |a: &usize, b: &usize| after[*b].unwrap_or(0.0).total_cmp(&after[*a].unwrap_or(0.0));
        let mut parents: Vec<usize> = (0..n)
            .filter(|&i| match self.p.edit_from {
                EditFrom::Replayed => before[i].is_some() && played[i],
                EditFrom::Top => after[i].is_some(),
            })
            .collect();
        parents.sort_by(by_score);
        let count = ((self.p.edit_fraction * n as f64).round() as usize).min(parents.len());
        parents.truncate(count);
        // Neither a parent nor one of PLR's refills takes a child.
        let mut taken = vec![false; n];
        for &i in &parents {
            taken[i] = true;
        }
        for &s in &plan.refill {
            taken[s as usize] = true;
        }
        let mut lowest: Vec<usize> = (0..n).filter(|&i| after[i].is_some() && !taken[i]).collect();
        lowest.sort_by(|a, b| by_score(b, a).then(a.cmp(b)));
        let children = super::choose_refills(levels, &lowest, parents.len());
        plan.edits = parents
            .iter()
            .zip(children)
            .map(|(&from, slot)| LevelEdit { slot, from: from as u32, edits: self.p.edits })
            .collect();
        Ok(plan)
    }

    fn robust(&self) -> bool {
        self.plr.robust()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{episode, levels};
    use super::*;

    /// Eight slots scored by hand: the replayed ones with the highest scores are edited into the
    /// lowest-scored slots, never into a parent or one of PLR's refills.
    #[test]
    fn the_best_replayed_levels_are_edited_into_the_worst_slots() {
        let p = AccelParams {
            plr: LevelPlrParams { fresh: 0.0, ..LevelPlrParams::default() },
            edits: 3,
            edit_fraction: 0.25,
            edit_from: EditFrom::Replayed,
        };
        let mut s = Accel::new(p.clone()).unwrap();
        let lv = levels(8);
        let eps: Vec<_> = (0..8).map(|i| episode(i, true, 1.0)).collect();
        let scores = [0.5, 0.1, 0.9, 0.05, 0.7, 0.3, 0.2, 0.8];
        // The first call scores every slot; none was scored before it, so none is replayed.
        let plan = s.update(&lv, &eps, Some(&scores)).unwrap();
        assert!(plan.edits.is_empty(), "{plan:?}");
        // Slots 0, 2 and 4 replayed (scores 0.5, 0.9, 0.7): two parents (a quarter of 8), the
        // best two: 2 and 4, into the lowest: 3 (0.05) and 1 (0.1).
        let eps = [episode(0, true, 1.0), episode(2, true, 1.0), episode(4, true, 1.0)];
        let plan = s.update(&lv, &eps, Some(&[0.5, 0.9, 0.7])).unwrap();
        let got: Vec<(u32, u32, u32)> = plan.edits.iter().map(|e| (e.from, e.slot, e.edits)).collect();
        assert_eq!(got, [(2, 3, 3), (4, 1, 3)]);
        plan.check(8).unwrap();
        // `top` edits the buffer's best whether replayed or not: 2 (0.9) and 7 (0.8).
        let mut top = Accel::new(AccelParams { edit_from: EditFrom::Top, ..p }).unwrap();
        top.update(&lv, &(0..8).map(|i| episode(i, true, 1.0)).collect::<Vec<_>>(), Some(&scores)).unwrap();
        let plan = top.update(&lv, &[], None).unwrap();
        let got: Vec<(u32, u32)> = plan.edits.iter().map(|e| (e.from, e.slot)).collect();
        assert_eq!(got, [(2, 3), (7, 1)]);
        assert!(top.robust(), "ACCEL is robust PLR's by default");
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let e = Accel::new(AccelParams { edits: 0, ..AccelParams::default() }).unwrap_err();
        assert!(e.to_string().contains("edits"), "{e}");
        let e = Accel::new(AccelParams { edit_fraction: 1.5, ..AccelParams::default() }).unwrap_err();
        assert!(e.to_string().contains("edit_fraction"), "{e}");
        let p: AccelParams = serde_json::from_str(r#"{"plr": {"robust": false}, "edits": 2}"#).unwrap();
        assert!(!Accel::new(p).unwrap().robust());
        assert!(serde_json::from_str::<AccelParams>(r#"{"edit": 2}"#).is_err());
    }
}
