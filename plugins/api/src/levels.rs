//! Level samplers: the plugin kind that steers which levels a batched engine plays (Syllabus'
//! curriculum API, jaxued's level samplers). A host hands a [`LevelSampler`] the pool's slots
//! ([`LevelRecord`]) and the episodes that ended since its last call ([`EpisodeRecord`], what
//! the engine's `info` says of each), with a score per episode when the host computed one (PLR
//! scores levels by the agent's value errors, which only the host has); the sampler answers with
//! a [`LevelPlan`]: new sampling weights for the slots, the slots to refill with new levels
//! from the host's generator, and optionally the generator configuration to draw them from.
//!
//! The host checks every plan ([`LevelPlan::check`]) before it touches the engine: weights as
//! the engine takes them (one per slot, finite, not negative, not all zero), refill slots in
//! range and distinct, a configuration that validates.

use abi_stable::StableAbi;
use floe_core::engine::EnvInfo;

use crate::config::RoundConfig;
use crate::error::PluginError;

/// One slot of the engine's pool, as a sampler sees it. The same layout as `floe_level_record`
/// in `floe_types.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, StableAbi)]
pub struct LevelRecord {
    /// The slot's index in the pool.
    pub slot: u32,
    /// How many times the slot was refilled: a sampler's statistics of a slot belong to one
    /// generation.
    pub generation: u32,
    /// The level's grid.
    pub width: u32,
    pub height: u32,
    /// Its agents.
    pub agents: u32,
    /// Its holes.
    pub holes: u32,
    /// Its optimal sum of costs, or [`crate::UNKNOWN`].
    pub optimal_soc: u32,
    /// Environments playing it now: refilling a slot in play truncates their episodes, so a
    /// sampler may prefer slots with none.
    pub in_play: u32,
}

/// One ended episode: the engine's [`EnvInfo`] of it, field for field (`floe_env_info` in C).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default, StableAbi, serde::Serialize, serde::Deserialize)]
pub struct EpisodeRecord {
    /// Steps the episode took.
    pub episode_steps: u32,
    /// `floe_core::engine::outcome` (1 success, 2 failure, 3 truncated).
    pub outcome: u32,
    /// For failures, the [`floe_core::FailureKind`] code; else 0.
    pub failure_kind: u32,
    /// For failures, the agent at fault; else [`crate::UNKNOWN`].
    pub failure_agent: u32,
    /// The pool slot it played.
    pub instance: u32,
    /// The slot's generation when it played it.
    pub generation: u32,
    /// Every agent's rewards summed over the episode.
    pub episode_return: f32,
    /// Agents on their goals at its end.
    pub agents_on_goal: u32,
}

impl From<EnvInfo> for EpisodeRecord {
    fn from(i: EnvInfo) -> Self {
        EpisodeRecord {
            episode_steps: i.episode_steps,
            outcome: i.outcome,
            failure_kind: i.failure_kind,
            failure_agent: i.failure_agent,
            instance: i.instance,
            generation: i.generation,
            episode_return: i.episode_return,
            agents_on_goal: i.agents_on_goal,
        }
    }
}

impl EpisodeRecord {
    /// Whether every agent reached its goal with no failure.
    #[must_use]
    pub fn success(&self) -> bool {
        self.outcome == floe_core::engine::outcome::SUCCESS
    }
}

/// A slot to refill with an edit of another slot's level (ACCEL): `edits` changes to the level in
/// `from` (`floe_core::mutate`), kept only when the result stays solvable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelEdit {
    /// The slot the edited level goes to.
    pub slot: u32,
    /// The slot whose level is edited.
    pub from: u32,
    /// Changes made to it: at least 1.
    pub edits: u32,
}

/// What a sampler asks of the host after a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelPlan {
    /// The slots' new sampling weights (one per slot); `None` keeps the weights in use.
    pub weights: Option<Vec<f64>>,
    /// Slots whose levels the host replaces with new ones from its generator (an episode that
    /// plays one of them is truncated).
    pub refill: Vec<u32>,
    /// The generator configuration the refilled levels are drawn from; `None` for the host's
    /// own level space.
    pub config: Option<RoundConfig>,
    /// Slots to refill with edits of other slots' levels (ACCEL), apart from `refill`. Built-in
    /// samplers only: a loaded library's plan cannot carry them yet.
    pub edits: Vec<LevelEdit>,
}

impl LevelPlan {
    /// Checks the plan against a pool of `slots` slots.
    ///
    /// # Errors
    /// [`PluginError::BadOutput`] naming the value: weights the engine refuses
    /// ([`floe_core::engine::levels::check_weights`]), a refill slot out of range or named twice,
    /// a configuration that does not validate.
    pub fn check(&self, slots: usize) -> Result<(), PluginError> {
        if let Some(w) = &self.weights {
            floe_core::engine::levels::check_weights(w, slots)
                .map_err(|e| PluginError::BadOutput(format!("the sampler's weights: {e}")))?;
        }
        let mut seen = std::collections::HashSet::with_capacity(self.refill.len());
        for &s in &self.refill {
            if s as usize >= slots {
                return Err(PluginError::BadOutput(format!(
                    "the sampler asks to refill slot {s}, outside a pool of {slots} slots"
                )));
            }
            if !seen.insert(s) {
                return Err(PluginError::BadOutput(format!("the sampler asks to refill slot {s} twice")));
            }
        }
        if let Some(c) = &self.config {
            c.validate().map_err(|e| PluginError::BadOutput(format!("the sampler's configuration: {e}")))?;
        }
        for e in &self.edits {
            if e.slot as usize >= slots || e.from as usize >= slots {
                return Err(PluginError::BadOutput(format!(
                    "the sampler asks to edit slot {} into slot {}, outside a pool of {slots} slots",
                    e.from, e.slot
                )));
            }
            if e.edits == 0 {
                return Err(PluginError::BadOutput(format!(
                    "the sampler asks for 0 edits of slot {}: at least 1",
                    e.from
                )));
            }
            if !seen.insert(e.slot) {
                return Err(PluginError::BadOutput(format!(
                    "the sampler asks to put two levels into slot {} (refilled or edited twice)",
                    e.slot
                )));
            }
        }
        Ok(())
    }
}

/// Steers which levels an engine plays: the episodes that ended (and the host's scores of them)
/// in, weights and refills out. A host calls it once with no episodes when it starts (for the
/// first weights), then with each batch of ended episodes.
pub trait LevelSampler: Send {
    /// The pool's slots now (`levels[i].slot == i`), the episodes that ended since the last call,
    /// and optionally one score per episode from the host (for PLR, the episode's positive value
    /// loss or MaxMC regret).
    ///
    /// # Errors
    /// [`PluginError::BadInput`] for scores of another length than the episodes', or whatever
    /// the sampler cannot do; the plan it returns is checked by the caller
    /// ([`LevelPlan::check`]).
    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError>;

    /// The generator configurations it designed, one per phase, with what was said of each
    /// (for a run's record). A sampler that designs no phases has none (the default; a loaded
    /// library's sampler keeps its own).
    fn designs(&self) -> &[PhaseDesign] {
        &[]
    }

    /// Whether the trainer should take no gradient from an episode on a level's first play (a
    /// level new to the run: robust PLR, PLR⊥, learns from replayed levels alone). The host's
    /// driver marks each episode and each environment's step as a first play or a replay; the
    /// trainer reads this to mask its loss. False by default, and for a loaded library's sampler.
    fn robust(&self) -> bool {
        false
    }

    /// Each pool slot's statistics as the sampler keeps them, as of its last call (one per slot
    /// it knew then; each names the generation it belongs to, so a slot refilled since shows the
    /// old level's). None by default, and for a loaded library's sampler.
    fn slot_stats(&self) -> Vec<SlotStats> {
        Vec::new()
    }

    /// The sampler's whole state as JSON text: its parameters, its statistics per slot (scores,
    /// staleness, plays, each with its generation) and its counters, for
    /// [`LevelSampler::restore`] in a later run (the host's driver saves it with the pool and its
    /// own state: `floe_levels::LevelsState`).
    ///
    /// # Errors
    /// [`PluginError::Unsupported`] by default: a sampler that keeps no saved form (a loaded
    /// library's, the phase designers').
    fn save(&self) -> Result<String, PluginError> {
        Err(PluginError::Unsupported("saving its state: this level sampler keeps no saved form".into()))
    }

    /// Puts back a state [`LevelSampler::save`] wrote.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] naming the value for a state of another sampler, of other
    /// parameters, or one that does not read; the sampler is then as it was.
    /// [`PluginError::Unsupported`] by default.
    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        let _ = state;
        Err(PluginError::Unsupported(
            "restoring a saved state: this level sampler keeps no saved form".into(),
        ))
    }
}

/// One pool slot's statistics, as its sampler keeps them ([`LevelSampler::slot_stats`]):
/// jaxued's and Syllabus' per-level figures, for a host's log. The same layout as
/// `floe_slot_stats` in `floe_types.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SlotStats {
    /// The slot's generation (its refills) these statistics belong to.
    pub generation: u32,
    /// Episodes the sampler counted on that level (`learnability`: those in its window).
    pub plays: u32,
    /// The sampler's calls since it last scored the level (`plr`, `accel`), or [`crate::UNKNOWN`].
    pub staleness: u32,
    /// The level's score (`plr`, `accel`: the mean of its last scored episodes; `learnability`:
    /// its success rate p), NaN where the sampler keeps none.
    pub score: f32,
    /// The sampler's own figure (`plr`, `accel`: the replay probability; `learnability`:
    /// p·(1−p)), NaN where it keeps none.
    pub figure: f32,
}

/// One phase's design by a sampler over generator configurations: the configuration its levels
/// were drawn from, the designer's rationale (the engineer's; none for a curriculum), and the
/// notes of its adoption (what was clamped into the level space, why a reply was not used).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseDesign {
    /// The phase, from 0.
    pub phase: u32,
    /// The configuration the phase's levels were drawn from.
    pub config: RoundConfig,
    /// The rationale the designer gave for it, if any.
    pub rationale: Option<String>,
    /// Notes of its adoption, for the host's log.
    pub notes: Vec<String>,
}

/// Checks a host's call: scores, when given, one per episode and finite; every episode's slot in
/// the pool.
///
/// # Errors
/// [`PluginError::BadInput`] naming the value.
pub fn check_update(
    levels: &[LevelRecord],
    episodes: &[EpisodeRecord],
    scores: Option<&[f32]>,
) -> Result<(), PluginError> {
    if let Some(s) = scores {
        if s.len() != episodes.len() {
            return Err(PluginError::BadInput(format!(
                "{} scores for {} episodes: give one score per episode",
                s.len(),
                episodes.len()
            )));
        }
        if let Some(i) = s.iter().position(|x| !x.is_finite()) {
            return Err(PluginError::BadInput(format!("score {i} is {}: scores must be finite", s[i])));
        }
    }
    if let Some(e) = episodes.iter().find(|e| e.instance as usize >= levels.len()) {
        return Err(PluginError::BadInput(format!(
            "an episode played slot {}, outside a pool of {} slots",
            e.instance,
            levels.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_record_is_the_engines_info_field_for_field() {
        assert_eq!(std::mem::size_of::<EpisodeRecord>(), std::mem::size_of::<EnvInfo>());
        let info = EnvInfo {
            episode_steps: 3,
            outcome: 2,
            failure_kind: 5,
            failure_agent: 1,
            instance: 7,
            generation: 2,
            episode_return: -1.5,
            agents_on_goal: 1,
        };
        let r = EpisodeRecord::from(info);
        assert_eq!((r.episode_steps, r.outcome, r.failure_kind, r.failure_agent), (3, 2, 5, 1));
        assert_eq!((r.instance, r.generation, r.episode_return, r.agents_on_goal), (7, 2, -1.5, 1));
        assert_eq!(std::mem::size_of::<LevelRecord>(), 32);
        assert_eq!(std::mem::size_of::<SlotStats>(), 20, "floe_slot_stats");
    }

    /// The codes `floe_types.h` writes as literals are floe's: the plugin kinds and the outcomes.
    #[test]
    fn the_c_headers_codes_are_the_rust_ones() {
        let header = include_str!("../include/floe_types.h");
        let code = |name: &str| -> u32 {
            let line = header
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name}"));
            line.split_whitespace()
                .nth(2)
                .and_then(|v| v.trim_end_matches('u').parse().ok())
                .unwrap_or_else(|| panic!("{line}"))
        };
        use floe_core::engine::outcome;
        for (name, v) in outcome::NAMED {
            assert_eq!(code(&format!("FLOE_OUTCOME_{name}")), v, "{name}");
        }
        for kind in [
            crate::PluginKind::Reward,
            crate::PluginKind::Curriculum,
            crate::PluginKind::EnvEngineer,
            crate::PluginKind::LevelSampler,
        ] {
            assert_eq!(
                code(&format!("FLOE_PLUGIN_KIND_{}", kind.name().to_ascii_uppercase())),
                kind.code(),
                "{kind}"
            );
        }
    }

    #[test]
    fn plans_and_calls_are_checked_naming_the_value() {
        let ok = LevelPlan {
            weights: Some(vec![1.0, 0.0, 2.0]),
            refill: vec![2, 0],
            config: None,
            edits: Vec::new(),
        };
        ok.check(3).unwrap();
        let bad = |p: LevelPlan| p.check(3).unwrap_err().to_string();
        assert!(
            bad(LevelPlan { weights: Some(vec![1.0, -2.0, 0.0]), ..ok.clone() }).contains("weight 1 is -2")
        );
        assert!(
            bad(LevelPlan { weights: Some(vec![0.0; 3]), ..ok.clone() }).contains("all 3 weights are zero")
        );
        assert!(
            bad(LevelPlan { weights: Some(vec![1.0]), ..ok.clone() }).contains("1 weights for a pool of 3")
        );
        assert!(bad(LevelPlan { refill: vec![3], ..ok.clone() }).contains("refill slot 3, outside"));
        assert!(bad(LevelPlan { refill: vec![1, 1], ..ok.clone() }).contains("slot 1 twice"));
        let mut cfg = RoundConfig::round0_default();
        cfg.sizes[0].data_ratio = 0.9;
        assert!(bad(LevelPlan { config: Some(cfg), ..ok.clone() }).contains("configuration"));
        let edit = |slot, from, edits| vec![LevelEdit { slot, from, edits }];
        assert!(LevelPlan { edits: edit(1, 2, 3), ..ok.clone() }.check(3).is_ok());
        assert!(bad(LevelPlan { edits: edit(3, 2, 1), ..ok.clone() }).contains("outside a pool of 3"));
        assert!(bad(LevelPlan { edits: edit(1, 2, 0), ..ok.clone() }).contains("0 edits of slot 2"));
        assert!(bad(LevelPlan { edits: edit(2, 1, 1), ..ok }).contains("two levels into slot 2"));
        let levels = [LevelRecord::default(); 2];
        let ep = [EpisodeRecord { instance: 1, ..EpisodeRecord::default() }];
        check_update(&levels, &ep, Some(&[0.5])).unwrap();
        let e = check_update(&levels, &ep, Some(&[0.5, 1.0])).unwrap_err().to_string();
        assert!(e.contains("2 scores for 1 episodes"), "{e}");
        let e = check_update(&levels, &ep, Some(&[f32::NAN])).unwrap_err().to_string();
        assert!(e.contains("score 0 is NaN"), "{e}");
        let far = [EpisodeRecord { instance: 2, ..EpisodeRecord::default() }];
        assert!(check_update(&levels, &far, None).unwrap_err().to_string().contains("slot 2, outside"));
    }
}
