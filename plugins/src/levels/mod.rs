//! Built-in level samplers ([`floe_plugin_api::LevelSampler`]): which levels of an engine's pool
//! its environments play, from the episodes that ended.
//!
//! | name | what |
//! |---|---|
//! | `uniform` | [`uniform`]: domain randomisation, every slot alike; optionally a slot's level replaced after it was played `max_plays` times |
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

use floe_plugin_api::{EpisodeRecord, LevelRecord};

/// A slot's statistics, for the generation they were gathered on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Slot<T> {
    pub(crate) generation: u32,
    pub(crate) stats: T,
}

/// Per-slot statistics that start again when a slot is refilled (its generation changes).
#[derive(Debug, Clone, Default)]
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
