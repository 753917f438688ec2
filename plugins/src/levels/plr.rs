//! `plr`: robust Prioritized Level Replay (Jiang, Grefenstette and Rocktäschel, 2021; "robust"
//! and the replay decision as in Jiang et al., "Replay-Guided Adversarial Environment Design",
//! 2021) over the slots of an engine's pool.
//!
//! The pool is PLR's level buffer plus room for levels not yet seen. A slot is *seen* once an
//! episode on its level ended (and was scored); a refilled slot is unseen again. Each call:
//! 1. **Scores.** A seen slot's score is the mean of the host's scores of its episodes in the
//!    call (PLR's positive value loss, or MaxMC: the host's choice), or, when the host gives no
//!    scores, a proxy from the episodes alone ([`ScoreProxy`]). Slots whose level was played in
//!    the call are no longer stale.
//! 2. **Weights.** With `S` the seen slots and `U` the unseen:
//!
//!    ```text
//!    P_replay(i) = (1 − rho) · P_S(i) + rho · P_C(i)                         (i in S)
//!    P_S(i) = h(i)^(1/beta) / Σ_j h(j)^(1/beta)   h = 1 / rank (rank) or the score (power)
//!    P_C(i) = (c − C_i) / Σ_j (c − C_j)            c: the calls so far, C_i: the last call that scored i
//!    weight(i) = p · P_replay(i)  for i in S,     (1 − p) / |U|  for i in U
//!    ```
//!
//!    (all of it to `S` when `U` is empty, uniform while `S` is). With probability `p`
//!    (`replay_prob`) an episode replays a level of the buffer, otherwise it plays a new one.
//! 3. **Refills.** Once fewer than `fresh · P` slots are unseen, the lowest-scored seen slots
//!    (the stalest first among equal scores; those no environment plays first) are refilled with
//!    new levels from the generator, back up to `fresh · P`. A new level so replaces the buffer's
//!    worst once it has been scored itself, as robust PLR inserts a level only if it scores
//!    higher than the lowest.
//!
//! **Robust or not.** With `robust` (the default), this is robust PLR (PLR⊥): the trainer takes
//! no gradient from a level's first play, only from replays of the levels the buffer kept
//! ([`LevelSampler::robust`]; the host's driver marks each episode and each environment's step
//! as a first play or a replay, and `floe levels`' PPO masks its loss by it). With
//! `robust: false` it is PLR as first published, which trains on every episode. The weights and
//! refills are the same for both.

use floe_plugin_api::{ConfigError, EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};
use serde::{Deserialize, Serialize};

use super::{choose_refills, Slots};
use crate::curriculum::{in_range, positive};

/// How the buffer's scores become replay weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prioritization {
    /// `h = 1 / rank` (rank 1 for the highest score).
    Rank,
    /// `h = score` (scores below 0 count as 0).
    Power,
}

/// A slot's score when the host gives none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreProxy {
    /// MaxMC with returns in place of values: the highest return seen on the level minus the
    /// mean return of its episodes in the call (how far the agent now falls short of its best).
    MaxReturnGap,
    /// The share of the call's episodes on the level that failed.
    FailureRate,
}

/// Parameters of [`LevelPlr`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LevelPlrParams {
    /// `p`: the share of episodes that replay the buffer.
    pub replay_prob: f64,
    /// Rank or power prioritisation.
    pub prioritization: Prioritization,
    /// `beta`, the temperature.
    pub temperature: f64,
    /// `rho`, the weight of staleness.
    pub staleness_coef: f64,
    /// The share of the pool kept for unseen levels.
    pub fresh: f64,
    /// The score without the host's scores.
    pub proxy: ScoreProxy,
    /// Robust PLR (PLR⊥): the trainer learns from replayed levels only.
    pub robust: bool,
}

impl Default for LevelPlrParams {
    fn default() -> Self {
        // jaxued's and the PLR paper's defaults for p, beta and rho.
        LevelPlrParams {
            replay_prob: 0.8,
            prioritization: Prioritization::Rank,
            temperature: 0.3,
            staleness_coef: 0.3,
            fresh: 0.25,
            proxy: ScoreProxy::MaxReturnGap,
            robust: true,
        }
    }
}

/// One slot's PLR statistics.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Stats {
    seen: bool,
    score: f64,
    /// The call that last scored it.
    last: u64,
    /// The highest return of an episode on it.
    best: Option<f32>,
    /// This call's episodes: the sum of the host's scores, of the returns, the failures, the count.
    sum_scores: f64,
    sum_returns: f64,
    failures: u32,
    count: u32,
    /// Every episode counted on its level.
    plays: u32,
}

/// The `plr` level sampler.
#[derive(Debug, Clone)]
pub struct LevelPlr {
    p: LevelPlrParams,
    slots: Slots<Stats>,
    calls: u64,
}

impl LevelPlr {
    /// A PLR sampler with checked parameters.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming a parameter out of range.
    pub fn new(p: LevelPlrParams) -> Result<Self, ConfigError> {
        in_range("replay_prob", p.replay_prob, 0.0, 1.0)?;
        positive("temperature", p.temperature)?;
        in_range("staleness_coef", p.staleness_coef, 0.0, 1.0)?;
        in_range("fresh", p.fresh, 0.0, 1.0)?;
        Ok(LevelPlr { p, slots: Slots::default(), calls: 0 })
    }

    /// Per slot of `levels`, its score if it is seen (scored) on its current level, as of the
    /// last call; None for an unseen slot.
    #[must_use]
    pub fn scores(&self, levels: &[LevelRecord]) -> Vec<Option<f64>> {
        levels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                self.slots
                    .slots
                    .get(i)
                    .filter(|s| s.generation == l.generation && s.stats.seen)
                    .map(|s| s.stats.score)
            })
            .collect()
    }

    /// The replay distribution over the seen slots (0 elsewhere), as of the last call.
    #[must_use]
    pub fn replay_distribution(&self) -> Vec<f64> {
        let slots = &self.slots.slots;
        let seen: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].stats.seen).collect();
        let mut p = vec![0.0; slots.len()];
        if seen.is_empty() {
            return p;
        }
        let beta = self.p.temperature;
        let h: Vec<f64> =
            match self.p.prioritization {
                Prioritization::Rank => {
                    let mut order = seen.clone();
                    // Highest first; a stable sort keeps slot order among equal scores.
                    order.sort_by(|&a, &b| slots[b].stats.score.total_cmp(&slots[a].stats.score));
                    let mut h = vec![0.0; slots.len()];
                    for (r, &i) in order.iter().enumerate() {
                        h[i] = (1.0 / (r + 1) as f64).powf(1.0 / beta);
                    }
                    h
                }
                Prioritization::Power => (0..slots.len())
                    .map(|i| {
                        if slots[i].stats.seen {
                            slots[i].stats.score.max(0.0).powf(1.0 / beta)
                        } else {
                            0.0
                        }
                    })
                    .collect(),
            };
        let h_sum: f64 = seen.iter().map(|&i| h[i]).sum();
        let stale: Vec<f64> = (0..slots.len()).map(|i| (self.calls - slots[i].stats.last) as f64).collect();
        let stale_sum: f64 = seen.iter().map(|&i| stale[i]).sum();
        let rho = self.p.staleness_coef;
        let n = seen.len() as f64;
        for &i in &seen {
            let p_s = if h_sum > 0.0 { h[i] / h_sum } else { 1.0 / n };
            let p_c = if stale_sum > 0.0 { stale[i] / stale_sum } else { 1.0 / n };
            p[i] = (1.0 - rho) * p_s + rho * p_c;
        }
        p
    }
}

impl LevelPlr {
    /// Its statistics and calls, as saved.
    pub(crate) fn state(&self) -> (&Slots<Stats>, u64) {
        (&self.slots, self.calls)
    }

    /// Puts back a [`LevelPlr::state`].
    pub(crate) fn set_state(&mut self, (slots, calls): (Slots<Stats>, u64)) {
        (self.slots, self.calls) = (slots, calls);
    }
}

impl LevelSampler for LevelPlr {
    fn save(&self) -> Result<String, PluginError> {
        super::save("plr", &self.p, &self.state())
    }

    fn restore(&mut self, state: &str) -> Result<(), PluginError> {
        let state = super::restore("plr", &self.p, state)?;
        self.set_state(state);
        Ok(())
    }

    fn slot_stats(&self) -> Vec<floe_plugin_api::SlotStats> {
        let replay = self.replay_distribution();
        self.slots
            .slots
            .iter()
            .zip(replay)
            .map(|(slot, p)| {
                let s = &slot.stats;
                floe_plugin_api::SlotStats {
                    generation: slot.generation,
                    plays: s.plays,
                    staleness: if s.seen {
                        u32::try_from(self.calls - s.last).unwrap_or(u32::MAX - 1)
                    } else {
                        floe_plugin_api::UNKNOWN
                    },
                    score: if s.seen { s.score as f32 } else { f32::NAN },
                    figure: if s.seen { p as f32 } else { f32::NAN },
                }
            })
            .collect()
    }

    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        self.slots.follow(levels);
        self.calls += 1;
        for (i, e) in episodes.iter().enumerate() {
            if let Some(s) = self.slots.of(e) {
                s.sum_scores += scores.map_or(0.0, |sc| f64::from(sc[i]));
                s.sum_returns += f64::from(e.episode_return);
                s.failures += u32::from(!e.success());
                s.count += 1;
                s.plays += 1;
                s.best = Some(s.best.map_or(e.episode_return, |b| b.max(e.episode_return)));
            }
        }
        let (calls, proxy) = (self.calls, self.p.proxy);
        for slot in &mut self.slots.slots {
            let s = &mut slot.stats;
            if s.count == 0 {
                continue;
            }
            let n = f64::from(s.count);
            s.score = match (scores, proxy) {
                (Some(_), _) => s.sum_scores / n,
                (None, ScoreProxy::MaxReturnGap) => {
                    (f64::from(s.best.unwrap_or(0.0)) - s.sum_returns / n).max(0.0)
                }
                (None, ScoreProxy::FailureRate) => f64::from(s.failures) / n,
            };
            (s.seen, s.last) = (true, calls);
            (s.sum_scores, s.sum_returns, s.failures, s.count) = (0.0, 0.0, 0, 0);
        }
        let n = levels.len();
        let slots = &self.slots.slots;
        let unseen: Vec<usize> = (0..n).filter(|&i| !slots[i].stats.seen).collect();
        let replay = self.replay_distribution();
        let weights = if unseen.len() == n {
            vec![1.0; n]
        } else if unseen.is_empty() {
            replay
        } else {
            let p = self.p.replay_prob;
            let fresh = (1.0 - p) / unseen.len() as f64;
            (0..n).map(|i| if slots[i].stats.seen { p * replay[i] } else { fresh }).collect()
        };
        // Keep `fresh · P` slots for new levels: the buffer's lowest scores (stalest first among
        // equals) make way.
        let target = (self.p.fresh * n as f64).round() as usize;
        let mut refill = Vec::new();
        if unseen.len() < target {
            let mut worst: Vec<usize> = (0..n).filter(|&i| slots[i].stats.seen).collect();
            worst.sort_by(|&a, &b| {
                let (x, y) = (&slots[a].stats, &slots[b].stats);
                x.score.total_cmp(&y.score).then(x.last.cmp(&y.last)).then(a.cmp(&b))
            });
            refill = choose_refills(levels, &worst, target - unseen.len());
        }
        Ok(LevelPlan { weights: Some(weights), refill, config: None, edits: Vec::new() })
    }

    fn robust(&self) -> bool {
        self.p.robust
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{episode, levels};
    use super::*;

    fn plr(p: LevelPlrParams) -> LevelPlr {
        LevelPlr::new(p).unwrap()
    }

    #[test]
    fn rank_prioritisation_staleness_and_the_replay_probability_by_hand() {
        // Four slots, three scored in call 1 with host scores 0.3, 0.9, 0.6: ranks 3, 1, 2. With
        // beta 1: h = 1/3, 1, 1/2 (sum 11/6), P_S = 2/11, 6/11, 3/11. Slot 1 is scored again in
        // call 2 (score 0.1, now rank 3): h = 1/2, 1/3, 1 (ranks 2, 3, 1 for slots 0, 1, 2).
        let p = LevelPlrParams {
            temperature: 1.0,
            staleness_coef: 0.5,
            replay_prob: 0.8,
            fresh: 0.0,
            ..LevelPlrParams::default()
        };
        let mut s = plr(p);
        let lv = levels(4);
        let eps = [episode(0, true, 1.0), episode(1, false, 0.0), episode(2, true, 0.5)];
        let plan = s.update(&lv, &eps, Some(&[0.3, 0.9, 0.6])).unwrap();
        // Call 1: every staleness 0, so P_C is uniform (1/3); slot 3 is unseen: 0.2 of the weight.
        let w = plan.weights.unwrap();
        let replay = [2.0 / 11.0, 6.0 / 11.0, 3.0 / 11.0].map(|ps| 0.5 * ps + 0.5 / 3.0);
        for i in 0..3 {
            assert!((w[i] - 0.8 * replay[i]).abs() < 1e-12, "{w:?}");
        }
        assert!((w[3] - 0.2).abs() < 1e-12);
        // Call 2: slot 1 scores 0.1; staleness is 1, 0, 1 (sum 2); scores 0.3, 0.1, 0.6.
        let plan = s.update(&lv, &[episode(1, true, 1.0)], Some(&[0.1])).unwrap();
        let w = plan.weights.unwrap();
        let (h, hs) = ([0.5, 1.0 / 3.0, 1.0], 11.0 / 6.0);
        let stale = [0.5, 0.0, 0.5];
        for i in 0..3 {
            let want = 0.8 * (0.5 * h[i] / hs + 0.5 * stale[i]);
            assert!((w[i] - want).abs() < 1e-12, "slot {i}: {w:?}");
        }
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn robust_by_default_and_as_asked() {
        assert!(plr(LevelPlrParams::default()).robust());
        let plain = plr(LevelPlrParams { robust: false, ..LevelPlrParams::default() });
        assert!(!plain.robust());
        let p: LevelPlrParams = serde_json::from_str(r#"{"robust": false}"#).unwrap();
        assert!(!p.robust && p.replay_prob == 0.8);
        assert!(serde_json::from_str::<LevelPlrParams>(r#"{"robust": 1}"#).is_err());
    }

    #[test]
    fn power_prioritisation_and_the_proxies() {
        let mut s = plr(LevelPlrParams {
            prioritization: Prioritization::Power,
            temperature: 0.5,
            staleness_coef: 0.0,
            fresh: 0.0,
            ..LevelPlrParams::default()
        });
        let lv = levels(2);
        // No host scores: MaxMC on returns. Slot 0: best 2.0, mean 1.0, gap 1.0; slot 1: one
        // episode, gap 0.
        let eps = [episode(0, true, 2.0), episode(0, false, 0.0), episode(1, true, 1.0)];
        let w = s.update(&lv, &eps, None).unwrap().weights.unwrap();
        assert_eq!(w, vec![1.0, 0.0], "h = score^2: slot 0 only");
        let mut f = plr(LevelPlrParams {
            proxy: ScoreProxy::FailureRate,
            temperature: 1.0,
            staleness_coef: 0.0,
            fresh: 0.0,
            prioritization: Prioritization::Power,
            ..LevelPlrParams::default()
        });
        let eps = [episode(0, false, 0.0), episode(0, true, 1.0), episode(1, false, 0.0)];
        let w = f.update(&lv, &eps, None).unwrap().weights.unwrap();
        assert!((w[0] - 1.0 / 3.0).abs() < 1e-12 && (w[1] - 2.0 / 3.0).abs() < 1e-12, "{w:?}");
    }

    #[test]
    fn the_lowest_scores_make_way_for_new_levels_and_refilled_slots_start_again() {
        // Eight slots, a quarter kept for new levels: once six are scored, the worst go.
        let mut s = plr(LevelPlrParams::default());
        let mut lv = levels(8);
        let w = s.update(&lv, &[], None).unwrap();
        assert_eq!(w.weights, Some(vec![1.0; 8]), "nothing seen: uniform");
        let eps: Vec<_> = (0..7).map(|i| episode(i, true, 1.0)).collect();
        let scores = [0.5, 0.1, 0.9, 0.05, 0.7, 0.3, 0.2];
        lv[3].in_play = 2;
        let plan = s.update(&lv, &eps, Some(&scores)).unwrap();
        // One unseen slot of the two kept: one refill, the lowest score not in play (slot 3 is).
        assert_eq!(plan.refill, vec![1]);
        let w = plan.weights.unwrap();
        assert!((w[7] - 0.2).abs() < 1e-12, "the unseen slot has 1 − p: {w:?}");
        // The refilled slot is unseen again, at its new generation; old episodes on it are
        // ignored.
        lv[1].generation = 1;
        lv[3].in_play = 0;
        let plan = s.update(&lv, &[episode(1, false, 0.0)], Some(&[5.0])).unwrap();
        let w = plan.weights.unwrap();
        assert!((w[1] - 0.1).abs() < 1e-12 && (w[7] - 0.1).abs() < 1e-12, "{w:?}");
        assert!(plan.refill.is_empty(), "two unseen slots again");
    }
}
