//! The replay pool: every instance generated for a round, with the statistics of its rollouts.
//! When a round's configuration has `replay_fraction > 0`, `round(replay_fraction · samples)` of
//! its prompts are replayed instances that the curriculum chooses
//! ([`floe_plugin_api::Curriculum::sample_replay`]) from the records of the instances played
//! before, and the rest are newly generated (when fewer instances were played than asked for,
//! the shortfall is generated new, and the round's log says so). The instances are not saved:
//! on resume, each finished round's new instances are generated again from its recorded
//! configuration, which gives the same instances; their statistics are saved in the run state.

use floe_core::progress::Progress;
use floe_core::Instance;
use floe_plugin_api::{History, ReplayRecord};
use serde::{Deserialize, Serialize};

use crate::data::{generate_all, round_seed};
use crate::error::RoundsError;

/// The rollout statistics of one pooled instance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntryStats {
    /// The round that generated it.
    pub round: u32,
    /// The last round that played it.
    pub last_round: u32,
    /// Answers sampled to it.
    pub samples: u32,
    /// Sum and sum of squares of their rewards.
    pub reward_sum: f64,
    pub reward_sq: f64,
    /// Valid answers.
    pub valid: u32,
}

/// The statistics of the whole pool, in pool order (saved in the run state).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolStats {
    pub entries: Vec<EntryStats>,
}

/// The pool: instances and their statistics.
#[derive(Debug)]
pub(crate) struct Pool {
    pub(crate) instances: Vec<Instance>,
    pub(crate) stats: PoolStats,
}

impl Pool {
    /// The pool of a run's state: each finished round's new instances generated again.
    pub(crate) fn rebuild(
        seed: u64,
        stats: &PoolStats,
        history: &History,
        progress: &dyn Progress,
    ) -> Result<Self, RoundsError> {
        let mut instances = Vec::with_capacity(stats.entries.len());
        for rec in &history.rounds {
            let n = stats.entries.iter().filter(|e| e.round == rec.round).count();
            if n == 0 {
                continue;
            }
            let jobs = rec.config.generator_configs(n, round_seed(seed, rec.round));
            let got = generate_all(&jobs, &format!("replay pool: round {} data again", rec.round), progress)?;
            if got.len() != n {
                return Err(RoundsError::Input(format!(
                    "replay pool: round {} regenerated {} instances, the state records {n}",
                    rec.round,
                    got.len()
                )));
            }
            instances.extend(got);
        }
        if instances.len() != stats.entries.len() {
            return Err(RoundsError::Input(
                "replay pool: the state's records do not match its rounds".into(),
            ));
        }
        Ok(Pool { instances, stats: stats.clone() })
    }

    /// Adds a round's new instances; returns their pool ids.
    pub(crate) fn add(&mut self, round: u32, new: &[Instance]) -> Vec<usize> {
        let first = self.instances.len();
        self.instances.extend_from_slice(new);
        self.stats.entries.extend(new.iter().map(|_| EntryStats {
            round,
            last_round: round,
            ..EntryStats::default()
        }));
        (first..self.instances.len()).collect()
    }

    /// Records one sampled answer to instance `id` in round `round`.
    pub(crate) fn record(&mut self, id: usize, round: u32, reward: f32, valid: bool) {
        let e = &mut self.stats.entries[id];
        e.last_round = round;
        e.samples += 1;
        e.reward_sum += f64::from(reward);
        e.reward_sq += f64::from(reward) * f64::from(reward);
        e.valid += u32::from(valid);
    }

    /// The records a curriculum reads: per instance its size, agents, last round and statistics.
    pub(crate) fn records(&self) -> Vec<ReplayRecord> {
        self.instances
            .iter()
            .zip(&self.stats.entries)
            .enumerate()
            .map(|(i, (inst, e))| {
                let n = f64::from(e.samples.max(1));
                let mean = e.reward_sum / n;
                let var = (e.reward_sq / n - mean * mean).max(0.0);
                ReplayRecord {
                    id: i as u64,
                    size: inst.grid.width(),
                    agents: inst.num_agents() as u32,
                    last_round: e.last_round,
                    samples: e.samples,
                    mean_reward: mean as f32,
                    reward_std: var.sqrt() as f32,
                    success_rate: (f64::from(e.valid) / n) as f32,
                    reserved: 0,
                }
            })
            .collect()
    }

    /// Instances played at least once.
    pub(crate) fn played(&self) -> usize {
        self.stats.entries.iter().filter(|e| e.samples > 0).count()
    }
}
