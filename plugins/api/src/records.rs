//! The per-item records that cross both ABIs in batches (slices, never one call per item). They
//! are `#[repr(C)]` with explicit reserved fields, so the C header (`floe_plugin.h`) declares
//! the same structs, and abi_stable checks their layout when a Rust library loads.

use abi_stable::StableAbi;
use floe_core::engine::NONE;
use floe_core::verify::VerifyOut;
use floe_core::{Check, FailureKind, Instance, PartialCredit, Plan, Verdict};

use crate::error::PluginError;

/// The value of an unknown count in a record.
pub const UNKNOWN: u32 = u32::MAX;

/// One verified plan, as a reward function sees it.
///
/// `failure` is 0 for a valid plan, else the [`FailureKind`] code (1 `parse_error` … 8
/// `goal_not_reached`). The partial-credit fields are filled when the host knows them and are
/// [`UNKNOWN`] otherwise: [`VerdictRecord::from_verdict`] knows only what a [`Verdict`] says;
/// [`VerdictRecord::from_results`] takes them from the verification kernel's [`PartialCredit`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, StableAbi)]
pub struct VerdictRecord {
    /// 0 valid, else the failure kind's code.
    pub failure: u8,
    /// 1 when the plan is valid and its sum of costs is the optimum, else 0.
    pub optimal: u8,
    /// Always 0.
    pub reserved: [u8; 2],
    /// Agents of the instance.
    pub num_agents: u32,
    /// Agents on their goals at the end of the plan (all for a valid plan); [`UNKNOWN`] when
    /// the plan was not simulated to its end.
    pub agents_on_goal: u32,
    /// Time steps simulated before the first failure (the legal prefix); the whole plan when
    /// valid or when only `goal_not_reached` failed; 0 for `parse_error`, `wrong_agent_count`.
    pub legal_steps: u32,
    /// The plan's length in steps (its longest agent's); [`UNKNOWN`] when not known.
    pub horizon: u32,
    /// Sum of costs of a valid plan, else [`UNKNOWN`].
    pub soc: u32,
    /// The optimal sum of costs, when known, else [`UNKNOWN`].
    pub optimal_soc: u32,
}

impl VerdictRecord {
    /// The record of a [`Verdict`]. With its partial credit (verified with
    /// [`floe_core::Check::with_credit`]) the record is exact; without it, the horizon is known
    /// only when the failure is `goal_not_reached` (it is reported at the last step), and agents
    /// on goal only for a valid plan.
    #[must_use]
    pub fn from_verdict(verdict: &Verdict, num_agents: u32) -> Self {
        if let Some(credit) = &verdict.credit {
            return Self::from_results(&VerifyOut::from_verdict(verdict), credit, num_agents);
        }
        let (failure, legal_steps, horizon) = match &verdict.failure {
            None => (0, verdict.makespan.unwrap_or(UNKNOWN), UNKNOWN),
            Some(f) => {
                let t = f.time;
                let legal = match f.kind {
                    FailureKind::ParseError | FailureKind::WrongAgentCount => 0,
                    FailureKind::GoalNotReached => t.unwrap_or(UNKNOWN),
                    _ => t.map_or(UNKNOWN, |t| t.saturating_sub(1)),
                };
                let horizon = match f.kind {
                    FailureKind::GoalNotReached => t.unwrap_or(UNKNOWN),
                    _ => UNKNOWN,
                };
                (f.kind as u8, legal, horizon)
            }
        };
        VerdictRecord {
            failure,
            optimal: u8::from(verdict.valid && verdict.optimal),
            reserved: [0; 2],
            num_agents,
            agents_on_goal: if verdict.valid { num_agents } else { UNKNOWN },
            legal_steps,
            horizon,
            soc: verdict.soc.filter(|_| verdict.valid).unwrap_or(UNKNOWN),
            optimal_soc: verdict.optimal_soc.unwrap_or(UNKNOWN),
        }
    }

    /// The record of a verified plan whose verdict came without its credit: the plan is run
    /// again through the verification kernel for it ([`floe_core::verify`] with
    /// [`floe_core::Check::with_credit`]). A caller that verifies can ask for the credit in the
    /// first place and use [`VerdictRecord::from_verdict`].
    #[must_use]
    pub fn from_plan(instance: &Instance, plan: &Plan, verdict: &Verdict) -> Self {
        let again = floe_core::verify(instance, plan, Check::against(verdict.optimal_soc).with_credit());
        Self::from_results(
            &VerifyOut::from_verdict(verdict),
            &again.credit.unwrap_or_default(),
            instance.num_agents() as u32,
        )
    }

    /// The record of a plan from a batched verifier's result and the partial credit the same run
    /// of the verification kernel gave ([`floe_core::verify::verify_batch`] with a credit slice).
    #[must_use]
    pub fn from_results(o: &VerifyOut, credit: &PartialCredit, num_agents: u32) -> Self {
        let known = |v: u32| if v == NONE { UNKNOWN } else { v };
        VerdictRecord {
            failure: o.kind as u8,
            optimal: u8::from(o.valid == 1 && o.optimal == 1),
            reserved: [0; 2],
            num_agents,
            agents_on_goal: known(credit.agents_on_goal),
            legal_steps: known(credit.legal_steps),
            horizon: known(credit.horizon),
            soc: if o.valid == 1 { o.soc } else { UNKNOWN },
            optimal_soc: known(o.optimal_soc),
        }
    }

    /// The failure kind, `None` when the plan is valid.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] for a code outside 0..=8.
    pub fn failure_kind(&self) -> Result<Option<FailureKind>, PluginError> {
        match self.failure {
            0 => Ok(None),
            c => FailureKind::from_code(u32::from(c))
                .map(Some)
                .ok_or_else(|| PluginError::BadInput(format!("failure code {c} is outside 0..=8"))),
        }
    }

    /// Checks the record's invariants: a known failure code; `optimal` only for a valid plan;
    /// counts no larger than their totals where both are known.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] naming the broken rule.
    pub fn check(&self) -> Result<(), PluginError> {
        self.failure_kind()?;
        let bad = |m: String| Err(PluginError::BadInput(m));
        if self.optimal > 1 || (self.optimal == 1 && self.failure != 0) {
            return bad(format!("optimal = {} with failure code {}", self.optimal, self.failure));
        }
        if self.agents_on_goal != UNKNOWN && self.agents_on_goal > self.num_agents {
            return bad(format!("{} agents on goal of {}", self.agents_on_goal, self.num_agents));
        }
        if self.legal_steps != UNKNOWN && self.horizon != UNKNOWN && self.legal_steps > self.horizon {
            return bad(format!("{} legal steps of a {}-step plan", self.legal_steps, self.horizon));
        }
        Ok(())
    }
}

/// Event flags of a [`StepOutcome`].
pub mod step_flags {
    /// The agent was in a vertex or swap conflict in this step (soft mode: its move was blocked
    /// by one).
    pub const COLLIDED: u32 = 1;
    /// The agent's move led into a hole (with holes as walls it stayed where it was).
    pub const FELL_IN_HOLE: u32 = 2;
    /// The agent arrived on its goal in this step, for the first time in the episode (the
    /// engine's `REACHED`: a return to the goal after leaving it does not set it).
    pub const REACHED_GOAL: u32 = 4;
    /// The agent tried to leave the grid.
    pub const OUT_OF_BOUNDS: u32 = 8;
    /// The agent waited.
    pub const WAITED: u32 = 16;
    /// Every defined flag.
    pub const ALL: u32 = COLLIDED | FELL_IN_HOLE | REACHED_GOAL | OUT_OF_BOUNDS | WAITED;
}

/// One agent's step, for stepwise (shaped) rewards. A batch is a flat slice of these, in the
/// order the host chooses (e.g. environment-major, then agent).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, StableAbi)]
pub struct StepOutcome {
    /// Shortest-path distance to the goal before the step ([`UNKNOWN`] if unreachable).
    pub prev_distance: u32,
    /// Shortest-path distance to the goal after the step ([`UNKNOWN`] if unreachable).
    pub new_distance: u32,
    /// A bit set of [`step_flags`].
    pub flags: u32,
}

impl StepOutcome {
    /// Whether a flag is set.
    #[must_use]
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Checks that only defined flags are set.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] for undefined flag bits.
    pub fn check(&self) -> Result<(), PluginError> {
        if self.flags & !step_flags::ALL != 0 {
            return Err(PluginError::BadInput(format!("undefined step flags {:#x}", self.flags)));
        }
        Ok(())
    }
}

/// A generated instance that may be replayed, with a summary of its past rewards.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, StableAbi)]
pub struct ReplayRecord {
    /// The host's key for the instance (e.g. its generator seed or index in a buffer).
    pub id: u64,
    /// Map size.
    pub size: u32,
    /// Agents.
    pub agents: u32,
    /// The last round it was trained on (for staleness).
    pub last_round: u32,
    /// Rollouts scored on it so far; 0 = never played.
    pub samples: u32,
    /// Mean reward of those rollouts.
    pub mean_reward: f32,
    /// Standard deviation of those rewards.
    pub reward_std: f32,
    /// Share of those rollouts that were valid plans.
    pub success_rate: f32,
    /// Always 0.
    pub reserved: u32,
}

impl ReplayRecord {
    /// Checks the record against a request: finite statistics, `success_rate` in `[0, 1]`,
    /// `reward_std` non-negative, `last_round` not after the request's round.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] naming the record.
    pub fn check(&self, request: &ReplayRequest) -> Result<(), PluginError> {
        let bad = |m: String| Err(PluginError::BadInput(format!("replay record {}: {m}", self.id)));
        if !(self.mean_reward.is_finite() && self.reward_std.is_finite() && self.success_rate.is_finite()) {
            return bad("non-finite statistics".into());
        }
        if !(0.0..=1.0).contains(&self.success_rate) {
            return bad(format!("success_rate {} is outside [0, 1]", self.success_rate));
        }
        if self.reward_std < 0.0 {
            return bad(format!("reward_std {} is negative", self.reward_std));
        }
        if self.last_round > request.round {
            return bad(format!(
                "last_round {} is after the current round {}",
                self.last_round, request.round
            ));
        }
        Ok(())
    }
}

/// What to replay: `count` instances for round `round`, drawn with randomness keyed by `seed`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, StableAbi)]
pub struct ReplayRequest {
    /// The round being configured.
    pub round: u32,
    /// Instances wanted (distinct; at most the pool's eligible records).
    pub count: u32,
    /// Seed of the draw.
    pub seed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::{verify, Check, Grid, Pos};

    fn instance() -> Instance {
        // 1x4 corridor: agent 0 from (0,0) to (0,1), agent 1 from (0,3) to (0,2).
        let grid = Grid::from_rows(&["FFFF"]).unwrap();
        let agents = vec![
            floe_core::Agent { start: Pos::new(0, 0), goal: Pos::new(0, 1) },
            floe_core::Agent { start: Pos::new(0, 3), goal: Pos::new(0, 2) },
        ];
        let mut i = Instance::new(grid, agents).unwrap();
        i.optimal = None;
        i
    }

    #[test]
    fn records_of_each_outcome() {
        let inst = instance();
        let valid = Plan::from_move_strings(&["R", "L"]).unwrap();
        let r = VerdictRecord::from_plan(&inst, &valid, &verify(&inst, &valid, Check::default()));
        assert_eq!((r.failure, r.optimal, r.agents_on_goal, r.legal_steps, r.horizon), (0, 1, 2, 1, 1));
        assert_eq!((r.soc, r.optimal_soc), (2, 2));

        // Agent 1 waits twice and never moves: goal_not_reached at t = 2, one agent on goal.
        let short = Plan::from_move_strings(&["RW", "WW"]).unwrap();
        let v = verify(&inst, &short, Check::default());
        let r = VerdictRecord::from_plan(&inst, &short, &v);
        assert_eq!(r.failure, FailureKind::GoalNotReached as u8);
        assert_eq!((r.agents_on_goal, r.legal_steps, r.horizon, r.soc), (1, 2, 2, UNKNOWN));
        let only_verdict = VerdictRecord::from_verdict(&v, 2);
        assert_eq!((only_verdict.agents_on_goal, only_verdict.horizon), (UNKNOWN, 2));

        // Both move into (0,1)/(0,2) then agent 0 steps onto agent 1's cell at t = 2.
        let clash = Plan::from_move_strings(&["RRL", "LWR"]).unwrap();
        let r = VerdictRecord::from_plan(&inst, &clash, &verify(&inst, &clash, Check::default()));
        assert_eq!(r.failure, FailureKind::VertexConflict as u8);
        assert_eq!((r.legal_steps, r.horizon, r.agents_on_goal), (1, 3, UNKNOWN));

        let wrong = Plan::from_move_strings(&["R"]).unwrap();
        let r = VerdictRecord::from_plan(&inst, &wrong, &verify(&inst, &wrong, Check::default()));
        assert_eq!(r.failure, FailureKind::WrongAgentCount as u8);
        assert_eq!((r.legal_steps, r.horizon), (0, UNKNOWN));
        for r in [r, only_verdict] {
            r.check().unwrap();
        }
    }

    #[test]
    fn checks_reject_nonsense() {
        let mut r = VerdictRecord {
            failure: 9,
            optimal: 0,
            reserved: [0; 2],
            num_agents: 2,
            agents_on_goal: UNKNOWN,
            legal_steps: 0,
            horizon: UNKNOWN,
            soc: UNKNOWN,
            optimal_soc: UNKNOWN,
        };
        assert!(r.check().is_err());
        r.failure = 3;
        r.check().unwrap();
        r.optimal = 1;
        assert!(r.check().is_err());
        r.optimal = 0;
        r.agents_on_goal = 3;
        assert!(r.check().is_err());
        assert!(StepOutcome { prev_distance: 1, new_distance: 0, flags: 64 }.check().is_err());
        let req = ReplayRequest { round: 2, count: 1, seed: 0 };
        let rec = ReplayRecord {
            id: 1,
            size: 3,
            agents: 2,
            last_round: 3,
            samples: 1,
            mean_reward: 0.5,
            reward_std: 0.1,
            success_rate: 0.5,
            reserved: 0,
        };
        assert!(rec.check(&req).is_err());
        ReplayRecord { last_round: 2, ..rec }.check(&req).unwrap();
        assert!(ReplayRecord { last_round: 2, mean_reward: f32::NAN, ..rec }.check(&req).is_err());
    }

    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(std::mem::size_of::<VerdictRecord>(), 28);
        assert_eq!(std::mem::size_of::<StepOutcome>(), 12);
        assert_eq!(std::mem::size_of::<ReplayRecord>(), 40);
        assert_eq!(std::mem::align_of::<ReplayRecord>(), 8);
        assert_eq!(std::mem::size_of::<ReplayRequest>(), 16);
    }
}
