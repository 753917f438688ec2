//! Step rewards from a reward plugin: [`RewardedEngine`] wraps any [`Engine`] (either backend)
//! and, after each step, hands a [`RewardFn`]'s `step_rewards` one [`StepOutcome`] per agent in
//! play, then writes the plugin's rewards in place of the engine's own ([`RewardWeights`]).
//! Everything else a step writes (observations, events, flags, info) is the engine's, but for
//! each episode's return in `info`, which sums the plugin's rewards.
//! `floe_plugin_registry::open_engine` builds one from an engine spec's `step_reward`, which is
//! how the C API and Python reach it.
//!
//! # A step's outcomes
//! - **Which agents:** every agent slot that held an agent in play when the step began (not
//!   padding, not an agent that left its episode earlier), environment-major, then by agent: the
//!   order of [`RewardedEngine::outcome_slots`]. Every other slot's reward is 0.
//! - **Distances:** shortest-path distances (in moves, over frozen cells) from the agent's cell
//!   to its goal, before and after the step; [`UNKNOWN`] where the goal cannot be reached, and
//!   after a step that dropped the agent into a hole. Each pool instance's distance maps are
//!   computed the first time an environment plays it and kept.
//! - **Flags** ([`step_flags_of`]), from the engine's [`event`] bits and the action:
//!   `CONFLICT` or `BLOCKED` is [`step_flags::COLLIDED`], `HOLE` is [`step_flags::FELL_IN_HOLE`],
//!   `REACHED` is [`step_flags::REACHED_GOAL`], `OFF_GRID` is [`step_flags::OUT_OF_BOUNDS`], and
//!   action 0 is [`step_flags::WAITED`].
//! - **Episodes that end** in the step are scored on their last step (the cell after the move,
//!   before the same-step reset); the next step starts from the new episode's cells.
//!
//! The agents' cells are followed through the events (a `MOVED` agent took its action's move),
//! so a step costs the engine's step, one pass over the agent slots, the plugin's call, and, in
//! a step where some episode ended, one [`Engine::state`] to read the new episodes' starts.
//!
//! [`RewardWeights`]: floe_core::engine::RewardWeights

use std::fmt;
use std::sync::Arc;

use floe_core::engine::{
    event, BufferSizes, Engine, EngineError, EnvConfig, EnvState, InstancePool, Refilled, StepBuffersMut,
};
use floe_core::grid::{Pos, UNREACHABLE};
use floe_core::Instance;
use floe_core::Move;

use crate::records::{step_flags, StepOutcome, UNKNOWN};
use crate::traits::RewardFn;

// An unreachable cell's distance is the outcome's unknown one.
const _: () = assert!(UNREACHABLE == UNKNOWN);

/// A slot that holds no agent in play.
const GONE: u32 = u32::MAX;

/// The [`step_flags`] of an agent's step with engine events `events` and action `action`.
#[must_use]
pub fn step_flags_of(events: u32, action: u8) -> u32 {
    let mut flags = 0;
    for (ev, flag) in [
        (event::CONFLICT | event::BLOCKED, step_flags::COLLIDED),
        (event::HOLE, step_flags::FELL_IN_HOLE),
        (event::REACHED, step_flags::REACHED_GOAL),
        (event::OFF_GRID, step_flags::OUT_OF_BOUNDS),
    ] {
        if events & ev != 0 {
            flags |= flag;
        }
    }
    if action == 0 {
        flags |= step_flags::WAITED;
    }
    flags
}

/// An environment as the outcomes need it: the pool instance it plays, its grid's width and its
/// agent count.
#[derive(Debug, Clone, Copy)]
struct Playing {
    instance: usize,
    width: u32,
    agents: usize,
}

/// An engine whose rewards come from a reward plugin's `step_rewards` (see the module docs).
pub struct RewardedEngine {
    inner: Box<dyn Engine>,
    reward: Box<dyn RewardFn>,
    /// Per pool instance, once played: each agent's distance to its goal from every cell,
    /// agent-major ([`UNKNOWN`] where the goal cannot be reached).
    distances: Vec<Option<Box<[u32]>>>,
    /// Per environment, since the last reset (empty before the first).
    envs: Vec<Playing>,
    /// Per agent slot: its cell (row · width + column), or [`GONE`].
    cells: Vec<u32>,
    outcomes: Vec<StepOutcome>,
    slots: Vec<usize>,
    scores: Vec<f32>,
    /// Per environment, the running episode's return in the plugin's rewards.
    returns: Vec<f32>,
}

impl fmt::Debug for RewardedEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RewardedEngine").field("inner", &self.inner).finish_non_exhaustive()
    }
}

/// Every agent's distance to its goal from every cell of pool instance `i`, agent-major.
fn distance_maps(pool: &InstancePool, i: usize) -> Box<[u32]> {
    let grid = pool.grid(i);
    let (_, _, agents) = pool.dims(i);
    (0..agents as usize)
        .flat_map(|a| {
            let (row, col) = pool.goal(i, a);
            grid.distances_from(grid.cell(Pos::new(row, col)))
        })
        .collect()
}

/// The cell an agent on `cell` reaches with action `action` on a grid `width` wide, when the
/// engine says it moved (so the move stays on the grid).
fn moved(cell: u32, action: u8, width: u32) -> u32 {
    let (dr, dc) = Move::from_code(action).map_or((0, 0), Move::delta);
    let to = i64::from(cell) + dr * i64::from(width) + dc;
    u32::try_from(to).unwrap_or(cell)
}

impl RewardedEngine {
    /// `inner`'s steps rewarded by `reward`. `inner` may have been reset already: the
    /// environments are read from it at the next reset, or now if it was.
    #[must_use]
    pub fn new(inner: Box<dyn Engine>, reward: Box<dyn RewardFn>) -> Self {
        let instances = inner.pool().len();
        let num_envs = inner.config().num_envs;
        let mut engine = Self {
            inner,
            reward,
            distances: vec![None; instances],
            envs: Vec::new(),
            cells: Vec::new(),
            outcomes: Vec::new(),
            slots: Vec::new(),
            scores: Vec::new(),
            returns: vec![0.0; num_envs],
        };
        if let Ok(state) = engine.inner.state() {
            if state.envs.iter().any(|e| e.agents > 0) {
                engine.read(&state, |_| true);
            }
        }
        engine
    }

    /// The last step's outcomes, in the order they were scored (empty before the first step).
    #[must_use]
    pub fn outcomes(&self) -> &[StepOutcome] {
        &self.outcomes
    }

    /// The agent slot (`env · K + agent`, an index into the step's rewards) of each of
    /// [`RewardedEngine::outcomes`].
    #[must_use]
    pub fn outcome_slots(&self) -> &[usize] {
        &self.slots
    }

    /// Reads the environments `which` selects, and their agents' cells, from `state`.
    fn read(&mut self, state: &EnvState, which: impl Fn(usize) -> bool) {
        let k = self.inner.pool().max_agents();
        self.envs.resize(state.envs.len(), Playing { instance: 0, width: 1, agents: 0 });
        self.cells.resize(state.agents.len(), GONE);
        for (e, rec) in state.envs.iter().enumerate().filter(|&(e, _)| which(e)) {
            self.envs[e] =
                Playing { instance: rec.instance as usize, width: rec.width, agents: rec.agents as usize };
            for (a, ag) in state.agents[e * k..(e + 1) * k].iter().enumerate() {
                let in_play = a < rec.agents as usize && ag.active != 0;
                self.cells[e * k + a] = if in_play { ag.row * rec.width + ag.col } else { GONE };
            }
        }
    }

    /// The outcomes of the step just taken with `actions`, whose events are in `events`, and
    /// the agents' cells after it (before any reset).
    fn follow(&mut self, actions: &[u8], events: &[u32]) {
        let k = self.inner.pool().max_agents();
        let pool = Arc::clone(self.inner.pool());
        let Self { distances, envs, cells, outcomes, slots, .. } = self;
        outcomes.clear();
        slots.clear();
        for (e, env) in envs.iter().enumerate() {
            let maps = distances[env.instance].get_or_insert_with(|| distance_maps(&pool, env.instance));
            let area = maps.len() / env.agents.max(1);
            for a in 0..env.agents {
                let slot = e * k + a;
                let here = cells[slot];
                if here == GONE {
                    continue;
                }
                let (ev, act) = (events[slot], actions[slot]);
                let dist = &maps[a * area..(a + 1) * area];
                let dropped = ev & event::INACTIVE != 0;
                let there = if ev & event::MOVED != 0 { moved(here, act, env.width) } else { here };
                outcomes.push(StepOutcome {
                    prev_distance: dist[here as usize],
                    new_distance: if dropped { UNKNOWN } else { dist[there as usize] },
                    flags: step_flags_of(ev, act),
                });
                slots.push(slot);
                cells[slot] = if dropped { GONE } else { there };
            }
        }
    }
}

impl Engine for RewardedEngine {
    fn backend(&self) -> String {
        self.inner.backend()
    }

    fn config(&self) -> &EnvConfig {
        self.inner.config()
    }

    fn pool(&self) -> &Arc<InstancePool> {
        self.inner.pool()
    }

    fn sizes(&self) -> BufferSizes {
        self.inner.sizes()
    }

    fn reset(&mut self, seed: u64, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        self.inner.reset(seed, out)?;
        let state = self.inner.state()?;
        self.read(&state, |_| true);
        self.returns = vec![0.0; state.envs.len()];
        Ok(())
    }

    fn reset_to(&mut self, env: usize, instance: usize, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        self.inner.reset_to(env, instance, out)?;
        let state = self.inner.state()?;
        self.read(&state, |e| e == env);
        self.returns[env] = 0.0;
        Ok(())
    }

    /// The engine's step, then the outcomes scored by the plugin into `out.rewards`.
    ///
    /// # Errors
    /// The engine's; [`EngineError::StepReward`] when the plugin fails, after the step has
    /// happened (every output but the rewards is the step's; the rewards are the engine's own).
    fn step(&mut self, actions: &[u8], mut out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        self.inner.step(actions, out.reborrow())?;
        self.follow(actions, out.events);
        let ended = |e: usize| out.terminated[e] != 0 || out.truncated[e] != 0;
        if (0..self.envs.len()).any(ended) {
            let state = self.inner.state()?;
            self.read(&state, ended);
        }
        self.scores.clear();
        self.scores.resize(self.outcomes.len(), 0.0);
        self.reward
            .step_rewards(&self.outcomes, &mut self.scores)
            .map_err(|e| EngineError::StepReward(e.to_string()))?;
        if let Some(bad) = self.scores.iter().find(|r| !r.is_finite()) {
            return Err(EngineError::StepReward(format!("the plugin wrote the reward {bad}")));
        }
        out.rewards.fill(0.0);
        for (&slot, &r) in self.slots.iter().zip(&self.scores) {
            out.rewards[slot] = r;
        }
        // Each episode's return in the plugin's rewards, summed as the engine sums its own.
        let k = self.inner.pool().max_agents();
        for (e, ret) in self.returns.iter_mut().enumerate() {
            *ret = out.rewards[e * k..(e + 1) * k].iter().fold(*ret, |sum, &r| sum + r);
            out.info[e].episode_return = *ret;
            if ended(e) {
                *ret = 0.0;
            }
        }
        Ok(())
    }

    fn set_weights(&mut self, weights: Option<&[f64]>) -> Result<(), EngineError> {
        self.inner.set_weights(weights)
    }

    fn weights(&self) -> Option<&[f64]> {
        self.inner.weights()
    }

    /// The engine's refill; the refilled slots' distance maps are made again when played.
    fn refill(
        &mut self,
        slots: &[usize],
        levels: &[Instance],
        out: StepBuffersMut<'_>,
    ) -> Result<Refilled, EngineError> {
        let before = self.inner.state()?;
        let done = self.inner.refill(slots, levels, out)?;
        for &s in slots {
            self.distances[s] = None;
        }
        let state = self.inner.state()?;
        let moved = |e: usize| slots.contains(&(before.envs[e].instance as usize));
        self.read(&state, moved);
        for (e, ret) in self.returns.iter_mut().enumerate() {
            if moved(e) {
                *ret = 0.0;
            }
        }
        Ok(done)
    }

    fn id(&self) -> floe_core::engine::EngineId {
        self.inner.id()
    }

    fn was_reset(&self) -> bool {
        self.inner.was_reset()
    }

    /// The engine's check, with the returns of the plugin's rewards (as `info` holds them).
    fn check_outputs(&self, out: &StepBuffersMut<'_>, returns: Option<&[f32]>) -> Result<(), EngineError> {
        self.inner.check_outputs(out, Some(returns.unwrap_or(&self.returns)))
    }

    fn state(&self) -> Result<EnvState, EngineError> {
        self.inner.state()
    }

    fn global_state(&self, out: &mut [u8]) -> Result<(), EngineError> {
        self.inner.global_state(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use floe_core::engine::{CollisionMode, CpuEngine, HoleRule, Optima, StepBuffers};
    use floe_core::generator::{generate, GeneratorConfig};
    use floe_core::Instance;

    use super::*;
    use crate::error::PluginError;

    /// Scores each outcome as its progress (prev − new, 0 when unknown) plus 10 × its flags,
    /// and keeps every batch it was given.
    struct Progress(Arc<Mutex<Vec<Vec<StepOutcome>>>>);

    impl RewardFn for Progress {
        fn step_rewards(&mut self, steps: &[StepOutcome], out: &mut [f32]) -> Result<(), PluginError> {
            self.0.lock().unwrap().push(steps.to_vec());
            for (s, o) in steps.iter().zip(out.iter_mut()) {
                let known = s.prev_distance != UNKNOWN && s.new_distance != UNKNOWN;
                let progress = if known { s.prev_distance as f32 - s.new_distance as f32 } else { 0.0 };
                *o = progress + 10.0 * s.flags as f32;
            }
            Ok(())
        }
    }

    struct Broken;

    impl RewardFn for Broken {}

    fn board() -> Arc<InstancePool> {
        // 3×3 with a hole in the middle; agent 0 from the top left to the top right, agent 1
        // from the bottom left to the bottom right.
        let inst = Instance::from_json(
            r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]},
                {"start": [2, 0], "goal": [2, 2]}]}"#,
        )
        .unwrap();
        Arc::new(InstancePool::new(&[inst], Optima::AsStored).unwrap())
    }

    fn rewarded(
        pool: &Arc<InstancePool>,
        cfg: EnvConfig,
    ) -> (RewardedEngine, Arc<Mutex<Vec<Vec<StepOutcome>>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let inner = Box::new(CpuEngine::new(cfg, Arc::clone(pool)).unwrap());
        (RewardedEngine::new(inner, Box::new(Progress(Arc::clone(&seen)))), seen)
    }

    #[test]
    fn flags_come_from_the_events_and_the_action() {
        assert_eq!(step_flags_of(event::MOVED, 4), 0);
        assert_eq!(step_flags_of(0, 0), step_flags::WAITED);
        assert_eq!(step_flags_of(event::BLOCKED, 1), step_flags::COLLIDED);
        assert_eq!(
            step_flags_of(event::CONFLICT | event::OFF_GRID, 3),
            step_flags::COLLIDED | step_flags::OUT_OF_BOUNDS
        );
        assert_eq!(step_flags_of(event::HOLE | event::INACTIVE, 2), step_flags::FELL_IN_HOLE);
        assert_eq!(
            step_flags_of(event::MOVED | event::REACHED | event::AT_GOAL, 4),
            step_flags::REACHED_GOAL
        );
        assert_eq!(step_flags_of(event::AT_GOAL, 0), step_flags::WAITED);
    }

    #[test]
    fn outcomes_by_hand_replace_the_engines_rewards() {
        let pool = board();
        let cfg = EnvConfig { num_envs: 1, mode: CollisionMode::Soft, ..EnvConfig::default() };
        let (mut env, seen) = rewarded(&pool, cfg);
        let mut out = StepBuffers::new(&env.sizes());
        env.reset(0, out.view()).unwrap();
        // Agent 0 right (2 -> 1), agent 1 up (2 -> 3, around the hole).
        env.step(&[4, 1], out.view()).unwrap();
        let want = [
            StepOutcome { prev_distance: 2, new_distance: 1, flags: 0 },
            StepOutcome { prev_distance: 2, new_distance: 3, flags: 0 },
        ];
        assert_eq!(env.outcomes(), want);
        assert_eq!(env.outcome_slots(), [0, 1]);
        assert_eq!(out.rewards, [1.0, -1.0]);
        // Agent 0 into the hole (it drops out), agent 1 off the grid (a wait in soft mode).
        env.step(&[2, 3], out.view()).unwrap();
        let hole = step_flags::FELL_IN_HOLE;
        let off = step_flags::OUT_OF_BOUNDS;
        assert_eq!(
            env.outcomes(),
            [
                StepOutcome { prev_distance: 1, new_distance: UNKNOWN, flags: hole },
                StepOutcome { prev_distance: 3, new_distance: 3, flags: off },
            ]
        );
        assert_eq!(out.rewards, [10.0 * hole as f32, 10.0 * off as f32]);
        // Agent 0 is out: only agent 1 is scored, and agent 0's slot gets 0.
        env.step(&[0, 2], out.view()).unwrap();
        assert_eq!(env.outcomes(), [StepOutcome { prev_distance: 3, new_distance: 2, flags: 0 }]);
        assert_eq!(env.outcome_slots(), [1]);
        assert_eq!(out.rewards, [0.0, 1.0]);
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn a_failing_plugin_is_an_error_after_the_step() {
        let pool = board();
        let cfg = EnvConfig { num_envs: 1, ..EnvConfig::default() };
        let inner = Box::new(CpuEngine::new(cfg, Arc::clone(&pool)).unwrap());
        let mut env = RewardedEngine::new(inner, Box::new(Broken));
        let mut out = StepBuffers::new(&env.sizes());
        assert!(matches!(env.step(&[0, 0], out.view()), Err(EngineError::NotReset(_))));
        env.reset(0, out.view()).unwrap();
        let e = env.step(&[4, 4], out.view()).unwrap_err();
        assert!(matches!(&e, EngineError::StepReward(m) if m.contains("step rewards")), "{e}");
        assert_eq!(env.state().unwrap().envs[0].step, 1, "the step happened");
    }

    /// Over random rollouts in every mode, with episodes ending and resetting, each step's
    /// outcomes equal the distances of the cells the engine's state shows before and after it.
    #[test]
    fn outcomes_follow_the_state_through_resets() {
        let levels = generate(
            &GeneratorConfig::default().size(5).agents(3).hole_ratio(0.2).wait_ratio(0.5).count(6).seed(11),
        )
        .unwrap();
        let pool = Arc::new(InstancePool::new(&levels, Optima::AsStored).unwrap());
        // The distances straight from the grid, as u32 (the engine keeps them as u16).
        let distance = |inst: usize, a: usize, row: u32, col: u32| {
            let grid = pool.grid(inst);
            let (goal_row, goal_col) = pool.goal(inst, a);
            grid.distances_from(grid.cell(Pos::new(goal_row, goal_col)))
                [grid.cell(Pos::new(row, col)) as usize]
        };
        let modes = [
            (CollisionMode::Strict, HoleRule::Drop),
            (CollisionMode::Soft, HoleRule::Drop),
            (CollisionMode::Soft, HoleRule::Block),
        ];
        for (mode, holes) in modes {
            let cfg = EnvConfig { num_envs: 8, mode, holes, episode_limit: 12, ..EnvConfig::default() };
            let (mut env, _) = rewarded(&pool, cfg);
            let mut out = StepBuffers::new(&env.sizes());
            env.reset(3, out.view()).unwrap();
            let (k, mut ended, mut scored) = (pool.max_agents(), 0, 0);
            for t in 0..200u32 {
                let before = env.state().unwrap();
                let actions: Vec<u8> =
                    (0..8 * k as u32).map(|i| ((i * 7 + t * 13 + t * t) % 5) as u8).collect();
                env.step(&actions, out.view()).unwrap();
                let after = env.state().unwrap();
                let mut want = Vec::new();
                for (e, rec) in before.envs.iter().enumerate() {
                    let inst = rec.instance as usize;
                    let done = out.terminated[e] != 0 || out.truncated[e] != 0;
                    ended += usize::from(done);
                    for a in 0..rec.agents as usize {
                        let (b, n) = (before.agents[e * k + a], after.agents[e * k + a]);
                        if b.active == 0 {
                            continue;
                        }
                        let ev = out.events[e * k + a];
                        let new = if ev & event::INACTIVE != 0 {
                            UNKNOWN
                        } else if done {
                            // The state shows the next episode: the last cell is the move's.
                            let (mut row, mut col) = (b.row, b.col);
                            if ev & event::MOVED != 0 {
                                match actions[e * k + a] {
                                    1 => row -= 1,
                                    2 => row += 1,
                                    3 => col -= 1,
                                    _ => col += 1,
                                }
                            }
                            distance(inst, a, row, col)
                        } else {
                            distance(inst, a, n.row, n.col)
                        };
                        want.push(StepOutcome {
                            prev_distance: distance(inst, a, b.row, b.col),
                            new_distance: new,
                            flags: step_flags_of(ev, actions[e * k + a]),
                        });
                    }
                }
                scored += want.len();
                assert_eq!(env.outcomes(), want, "{mode:?} {holes:?}, step {t}");
            }
            assert!(ended > 20 && scored > 1000, "{mode:?}: {ended} episodes ended, {scored} outcomes");
        }
    }
}
