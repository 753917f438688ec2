//! Built-in level samplers ([`floe_plugin_api::LevelSampler`]): which levels of an engine's pool
//! its environments play, from the episodes that ended.
//!
//! | name | what |
//! |---|---|
//! | `uniform` | [`uniform`]: every slot alike over a fixed pool; with `max_plays`, a slot's level replaced after it was played that many times (1: domain randomisation) |
//! | `plr` | [`plr`]: robust prioritized level replay (Jiang et al. 2021): rank or power prioritisation of the host's scores (or a return-based proxy), staleness, a replay probability, the lowest-scored levels replaced by new ones |
//! | `accel` | [`accel`]: ACCEL (Parker-Holder et al. 2022): robust PLR whose buffer also grows by edits of the levels it replays, made by the host (`floe_core::mutate`) |
//! | `learnability` | [`learnability`]: Sampling For Learnability (Rutherford et al. 2024): p·(1−p) of each level's recent successes, the most learnable sampled, the unlearnable replaced from the generator |
//!
//! Each keeps its statistics per slot and generation: a refilled slot starts again. Refills go
//! to slots no environment plays when there are such, so that few episodes are truncated.

pub mod accel;
pub mod learnability;
pub mod plr;
pub mod uniform;

pub use accel::{Accel, AccelParams, EditFrom};
pub use learnability::{Learnability, LearnabilityParams};
pub use plr::{LevelPlr, LevelPlrParams, Prioritization, ScoreProxy};
pub use uniform::{Uniform, UniformParams};

use floe_plugin_api::{EpisodeRecord, LevelRecord, PluginError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A slot's statistics, for the generation they were gathered on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Slot<T> {
    pub(crate) generation: u32,
    pub(crate) stats: T,
}

/// Per-slot statistics that start again when a slot is refilled (its generation changes).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Slots<T> {
    pub(crate) slots: Vec<Slot<T>>,
}

impl<T: Default> Slots<T> {
    /// Follows the pool: new slots, and refilled ones, start from `T::default()`.
    pub(crate) fn follow(&mut self, levels: &[LevelRecord]) {
        self.slots.resize_with(levels.len(), Slot::default);
        for (s, l) in self.slots.iter_mut().zip(levels) {
            if s.generation != l.generation {
                *s = Slot { generation: l.generation, stats: T::default() };
            }
        }
    }

    /// The statistics of the slot an episode played, if the episode played the slot's current
    /// level (an episode of an earlier generation tells nothing of the level there now).
    pub(crate) fn of(&mut self, e: &EpisodeRecord) -> Option<&mut T> {
        let s = self.slots.get_mut(e.instance as usize)?;
        (s.generation == e.generation).then_some(&mut s.stats)
    }
}

/// A built-in sampler's saved form ([`floe_plugin_api::LevelSampler::save`]): its name, its
/// parameters (a state is restored only into a sampler of the same ones) and its state.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved<N, P, S> {
    sampler: N,
    params: P,
    state: S,
}

/// `sampler`'s saved form, with its parameters `params` and its `state`.
pub(crate) fn save<P: Serialize, S: Serialize>(
    sampler: &str,
    params: &P,
    state: &S,
) -> Result<String, PluginError> {
    serde_json::to_string(&Saved { sampler, params, state })
        .map_err(|e| PluginError::Failed(format!("saving `{sampler}`'s state: {e}")))
}

/// The state in `text`, a saved form of `sampler` with the parameters `params`.
///
/// # Errors
/// [`PluginError::BadInput`] naming the value: text that does not read, a state of another
/// sampler or of other parameters.
pub(crate) fn restore<P, S>(sampler: &str, params: &P, text: &str) -> Result<S, PluginError>
where
    P: Serialize + DeserializeOwned + PartialEq,
    S: DeserializeOwned,
{
    let unread =
        |e: serde_json::Error| PluginError::BadInput(format!("a saved `{sampler}` state does not read: {e}"));
    let saved: Saved<String, serde_json::Value, serde_json::Value> =
        serde_json::from_str(text).map_err(unread)?;
    if saved.sampler != sampler {
        return Err(PluginError::BadInput(format!(
            "the state was saved by the `{}` sampler, not `{sampler}`",
            saved.sampler
        )));
    }
    let theirs: Option<P> = serde_json::from_value(saved.params.clone()).ok();
    if theirs.as_ref() != Some(params) {
        return Err(PluginError::BadInput(format!(
            "the `{sampler}` state was saved with the parameters {}, and this sampler has {}: make it with those",
            saved.params,
            serde_json::to_string(params).unwrap_or_default()
        )));
    }
    serde_json::from_value(saved.state).map_err(unread)
}

/// Up to `count` slots to refill among `candidates` (in order of preference), those no
/// environment plays first.
pub(crate) fn choose_refills(levels: &[LevelRecord], candidates: &[usize], count: usize) -> Vec<u32> {
    let free = candidates.iter().filter(|&&i| levels[i].in_play == 0);
    let busy = candidates.iter().filter(|&&i| levels[i].in_play > 0);
    free.chain(busy).take(count).map(|&i| i as u32).collect()
}

#[cfg(test)]
pub(crate) mod testing {
    use floe_plugin_api::{EpisodeRecord, LevelRecord};

    /// `n` slots of generation 0, none in play.
    pub(crate) fn levels(n: u32) -> Vec<LevelRecord> {
        (0..n)
            .map(|slot| LevelRecord { slot, width: 5, height: 5, agents: 2, ..LevelRecord::default() })
            .collect()
    }

    /// An episode on `slot` (generation 0): a success or a failure, with its return.
    pub(crate) fn episode(slot: u32, success: bool, ret: f32) -> EpisodeRecord {
        EpisodeRecord {
            episode_steps: 5,
            outcome: if success { 1 } else { 2 },
            failure_kind: if success { 0 } else { 5 },
            failure_agent: if success { u32::MAX } else { 0 },
            instance: slot,
            generation: 0,
            episode_return: ret,
            agents_on_goal: if success { 2 } else { 0 },
        }
    }
}

#[cfg(test)]
mod slot_stats_tests {
    use floe_plugin_api::{LevelSampler, UNKNOWN};

    use super::testing::{episode, levels};
    use super::*;

    #[test]
    fn each_sampler_reports_its_slots_as_it_keeps_them() {
        let lv = levels(3);
        // PLR, scored by the host: slot 0 twice (scores 0.5 and 1.5), slot 1 once a call later.
        let mut plr = plr::LevelPlr::new(plr::LevelPlrParams::default()).unwrap();
        plr.update(&lv, &[episode(0, true, 1.0), episode(0, false, 0.0)], Some(&[0.5, 1.5])).unwrap();
        plr.update(&lv, &[episode(1, true, 1.0)], Some(&[0.25])).unwrap();
        let s = plr.slot_stats();
        let p = plr.replay_distribution();
        assert_eq!(
            s.iter().map(|x| (x.plays, x.staleness)).collect::<Vec<_>>(),
            [(2, 1), (1, 0), (0, UNKNOWN)]
        );
        assert_eq!((s[0].score, s[1].score), (1.0, 0.25));
        assert_eq!((s[0].figure, s[1].figure), (p[0] as f32, p[1] as f32));
        assert!(s[2].score.is_nan() && s[2].figure.is_nan());
        // SFL: success rate and p·(1−p) once `min_episodes` are in the window.
        let mut sfl = learnability::Learnability::new(learnability::LearnabilityParams::default()).unwrap();
        let eps: Vec<_> = (0..4).map(|i| episode(0, i % 4 == 0, 0.0)).collect();
        sfl.update(&lv, &eps, None).unwrap();
        let s = sfl.slot_stats();
        assert_eq!((s[0].plays, s[0].score, s[0].figure, s[0].staleness), (4, 0.25, 0.1875, UNKNOWN));
        assert!(s[1].score.is_nan() && s[1].plays == 0);
        // uniform counts plays; ACCEL reports its PLR's.
        let mut u = uniform::Uniform::new(uniform::UniformParams::default()).unwrap();
        u.update(&lv, &[episode(2, true, 0.0), episode(2, false, 0.0)], None).unwrap();
        assert_eq!(u.slot_stats().iter().map(|x| x.plays).collect::<Vec<_>>(), [0, 0, 2]);
        let mut a = accel::Accel::new(accel::AccelParams::default()).unwrap();
        a.update(&lv, &[episode(1, true, 1.0)], Some(&[2.0])).unwrap();
        assert_eq!(a.slot_stats()[1].score, 2.0);
    }
}

#[cfg(test)]
mod save_tests {
    use floe_plugin_api::{LevelSampler, PluginError};

    use super::testing::{episode, levels};
    use super::*;

    /// Each built-in, fed the same episodes, then saved and restored into a new sampler of the
    /// same parameters: the restored one answers the next call as the one that went on.
    #[test]
    fn a_restored_sampler_answers_as_the_one_that_went_on() {
        type Make = Box<dyn Fn() -> Box<dyn LevelSampler>>;
        let make: Vec<(&str, Make)> = vec![
            ("uniform", Box::new(|| Box::new(Uniform::new(UniformParams { max_plays: 2 }).unwrap()))),
            (
                "plr",
                Box::new(|| {
                    Box::new(LevelPlr::new(LevelPlrParams { fresh: 0.0, ..Default::default() }).unwrap())
                }),
            ),
            (
                "accel",
                Box::new(|| {
                    Box::new(Accel::new(AccelParams { edit_fraction: 0.5, ..Default::default() }).unwrap())
                }),
            ),
            (
                "learnability",
                Box::new(|| {
                    let p = LearnabilityParams { min_episodes: 1, window: 4, ..Default::default() };
                    Box::new(Learnability::new(p).unwrap())
                }),
            ),
        ];
        let lv = levels(6);
        let eps: Vec<_> = (0..12).map(|i| episode(i % 6, i % 3 == 0, i as f32 * 0.1)).collect();
        let scores: Vec<f32> = (0..12).map(|i| (i * 7 % 5) as f32).collect();
        for (name, new) in make {
            let mut went_on = new();
            went_on.update(&lv, &[], None).unwrap();
            went_on.update(&lv, &eps, Some(&scores)).unwrap();
            let state = went_on.save().unwrap();
            let mut fresh = new();
            let mut restored = new();
            restored.restore(&state).unwrap();
            assert_eq!(restored.save().unwrap(), state, "{name}");
            let next = &eps[..5];
            let a = went_on.update(&lv, next, Some(&scores[..5])).unwrap();
            let b = restored.update(&lv, next, Some(&scores[..5])).unwrap();
            let c = fresh.update(&lv, next, Some(&scores[..5])).unwrap();
            assert_eq!(a, b, "{name}");
            let stats = |s: &dyn LevelSampler| format!("{:?}", s.slot_stats());
            assert_eq!(stats(&*went_on), stats(&*restored), "{name}");
            assert!(a != c || stats(&*went_on) != stats(&*fresh), "{name}: one not restored differs");
        }
    }

    #[test]
    fn a_state_of_another_sampler_or_other_parameters_is_refused_and_changes_nothing() {
        let lv = levels(3);
        let mut plr = LevelPlr::new(LevelPlrParams::default()).unwrap();
        plr.update(&lv, &[episode(0, true, 1.0)], Some(&[0.5])).unwrap();
        let state = plr.save().unwrap();
        let mut other = LevelPlr::new(LevelPlrParams { temperature: 0.5, ..Default::default() }).unwrap();
        let before = other.save().unwrap();
        let bad_input = |e: PluginError| match e {
            PluginError::BadInput(m) => m,
            e => panic!("{e}"),
        };
        let m = bad_input(other.restore(&state).unwrap_err());
        assert!(m.contains("temperature") && m.contains("0.3") && m.contains("0.5"), "{m}");
        let m = bad_input(Uniform::new(UniformParams::default()).unwrap().restore(&state).unwrap_err());
        assert!(m.contains("`plr`") && m.contains("`uniform`"), "{m}");
        let m = bad_input(other.restore("{\"sampler\": \"plr\"").unwrap_err());
        assert!(m.contains("does not read"), "{m}");
        assert_eq!(other.save().unwrap(), before, "nothing changed");
    }
}
