//! The level-sampling driver under arbitrary calls and buffers, as a C host can make them: the
//! bytes choose a sequence of steps, driver calls (`start`, `after_step`, `update`, `record`,
//! `decide` with the pool's records in or out of order, `apply` of a decision the bytes write),
//! refills and weights, each with buffers whose lengths and contents the bytes edit, and a
//! sampler whose plans the bytes write (garbage included). Two engines with two samplers run
//! side by side: a call is made on the first; refused, everything it could change (the engine's
//! state, weights and pool, the buffers, the kept episodes, the totals, the levels drawn) must
//! equal the twin's, which never saw it; accepted, the twin takes the same call and must give
//! the same answer. Any panic is a bug.

use std::sync::Arc;

use floe_core::engine::{CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers};
use floe_levels::{Decision, LevelSource, LevelSpace, Levels};
use floe_plugin_api::{EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};

const ENVS: usize = 5;
const SLOTS: usize = 4;

/// The input, read a byte or a word at a time; zeros once it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn word(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

/// A sampler whose plan is a pure function of the bytes it was made with and what it is given,
/// so that the twins' samplers answer alike whatever each saw before.
struct Fuzzed {
    key: [u8; 8],
}

impl LevelSampler for Fuzzed {
    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        let mut h =
            u64::from_le_bytes(self.key) ^ (episodes.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for l in levels {
            h = (h ^ u64::from(l.generation) ^ u64::from(l.in_play) << 8).wrapping_mul(0x100_0000_01b3);
        }
        h ^= scores.map_or(0, |s| s.len() as u64) << 32;
        let bit = |i: u32| h >> i & 1 == 1;
        if bit(0) && bit(1) && bit(2) {
            return Err(PluginError::Failed("the fuzzed sampler fails".into()));
        }
        let weights = bit(3).then(|| {
            (0..levels.len())
                .map(|i| match (h >> (8 + 2 * i)) & 7 {
                    0 => 0.0,
                    1 if bit(4) => f64::NAN,
                    2 if bit(5) => -1.0,
                    3 if bit(6) => f64::MAX,
                    k => k as f64,
                })
                .chain(bit(7).then_some(1.0))
                .collect()
        });
        let refill = (0..(h >> 40 & 3) as u32)
            .map(|i| (h >> (44 + 4 * i)) as u32 % (levels.len() as u32 + 1))
            .collect();
        Ok(LevelPlan { weights, refill, config: None, edits: Vec::new() })
    }
}

/// One engine with its sampler and its last outputs.
struct Side {
    engine: CpuEngine,
    out: StepBuffers,
    levels: Levels,
}

fn space() -> LevelSpace {
    LevelSpace { agents: [1, 2], size: [3, 4], hole_ratio: [0.0, 0.2], wait_ratio: [0.0, 0.0], solve: false }
}

impl Side {
    fn new(key: [u8; 8], update_every: u32, reset: bool) -> Side {
        let mut source = LevelSource::new(space(), 7).expect("the space is valid");
        let levels = source.draw(SLOTS).expect("levels of the space");
        let pool =
            Arc::new(InstancePool::with_room(&levels, Optima::AsStored, space().room()).expect("a pool"));
        let cfg =
            EnvConfig { num_envs: ENVS, mode: CollisionMode::Soft, episode_limit: 4, ..EnvConfig::default() };
        let mut engine = CpuEngine::new(cfg, pool).expect("an engine");
        let mut out = StepBuffers::new(&engine.sizes());
        if reset {
            engine.reset(3, out.view()).expect("a reset");
        }
        let levels = Levels::new("fuzzed", Box::new(Fuzzed { key }), source, update_every);
        Side { engine, out, levels }
    }
}

/// Everything a refused call must leave as it was, compared with the twin's.
fn same(a: &Side, b: &Side, what: &str) {
    assert_eq!(a.engine.state().ok(), b.engine.state().ok(), "{what}: the state");
    assert_eq!(a.engine.weights(), b.engine.weights(), "{what}: the weights");
    for i in 0..SLOTS {
        assert_eq!(a.engine.pool().grid(i), b.engine.pool().grid(i), "{what}: slot {i}");
        assert_eq!(a.engine.pool().generation(i), b.engine.pool().generation(i), "{what}: slot {i}");
    }
    assert!(same_bits(&a.out, &b.out), "{what}: the buffers");
    assert_eq!(a.levels.pending(), b.levels.pending(), "{what}: the kept episodes");
    assert_eq!(
        a.levels.pending_first_play(),
        b.levels.pending_first_play(),
        "{what}: their first-play marks"
    );
    assert_eq!(a.levels.first_play(), b.levels.first_play(), "{what}: the last step's first-play marks");
    assert_eq!(a.levels.totals(), b.levels.totals(), "{what}: the totals");
    assert_eq!(a.levels.played(), b.levels.played(), "{what}: the shapes played");
    assert_eq!(a.levels.source().drawn(), b.levels.source().drawn(), "{what}: the levels drawn");
    assert_eq!(a.levels.engine().is_some(), b.levels.engine().is_some(), "{what}: the binding");
}

/// Whether two sets of buffers hold the same bytes (a NaN reward equals itself here).
fn same_bits(x: &StepBuffers, y: &StepBuffers) -> bool {
    let f = |v: &[f32]| v.iter().map(|r| r.to_bits()).collect::<Vec<_>>();
    let g = |v: &[floe_core::engine::EnvInfo]| v.iter().map(info_words).collect::<Vec<_>>();
    x.obs == y.obs
        && x.final_obs == y.final_obs
        && f(&x.rewards) == f(&y.rewards)
        && x.events == y.events
        && x.terminated == y.terminated
        && x.truncated == y.truncated
        && g(&x.info) == g(&y.info)
}

/// An `info` record's words (its return as bits).
fn info_words(i: &floe_core::engine::EnvInfo) -> [u32; 8] {
    [
        i.episode_steps,
        i.outcome,
        i.failure_kind,
        i.failure_agent,
        i.instance,
        i.generation,
        i.episode_return.to_bits(),
        i.agents_on_goal,
    ]
}

/// `out` edited as the bytes say: an array made shorter or longer, a byte of the observations
/// flipped, a flag or an `info` field or a reward overwritten.
fn edit(out: &StepBuffers, input: &mut Input<'_>) -> StepBuffers {
    let mut o = out.clone();
    for _ in 0..(input.byte() % 3) {
        let (what, at) = (input.byte(), input.byte() as usize);
        match what % 9 {
            0 => resize(&mut o, at % 7, -1),
            1 => resize(&mut o, at % 7, 1),
            2 if !o.obs.is_empty() => {
                let i = at % o.obs.len();
                o.obs[i] ^= 1 << (input.byte() % 8);
            }
            3 if !o.terminated.is_empty() => {
                let i = at % o.terminated.len();
                o.terminated[i] = input.byte() % 3;
            }
            4 if !o.truncated.is_empty() => {
                let i = at % o.truncated.len();
                o.truncated[i] = input.byte() % 3;
            }
            5..=7 if !o.info.is_empty() => {
                let n = o.info.len();
                let info = &mut o.info[at % n];
                let v = input.word();
                match input.byte() % 8 {
                    0 => info.episode_steps = v,
                    1 => info.outcome = v % 5,
                    2 => info.failure_kind = v,
                    3 => info.failure_agent = v,
                    4 => info.instance = if v & 1 == 0 { v % 6 } else { v },
                    5 => info.generation = v % 3,
                    6 => info.episode_return = f32::from_bits(v),
                    _ => info.agents_on_goal = v % 4,
                }
            }
            8 if !o.rewards.is_empty() => {
                let i = at % o.rewards.len();
                o.rewards[i] = f32::from_bits(input.word());
            }
            _ => {}
        }
    }
    o
}

/// Array `which` of `o` one element shorter (`by` −1) or longer (1).
fn resize(o: &mut StepBuffers, which: usize, by: i32) {
    fn go<T: Default + Clone>(v: &mut Vec<T>, by: i32) {
        if by < 0 {
            v.pop();
        } else {
            v.push(T::default());
        }
    }
    match which {
        0 => go(&mut o.obs, by),
        1 => go(&mut o.final_obs, by),
        2 => go(&mut o.rewards, by),
        3 => go(&mut o.events, by),
        4 => go(&mut o.terminated, by),
        5 => go(&mut o.truncated, by),
        _ => go(&mut o.info, by),
    }
}

/// A call on `side` with buffers `out`, as the bytes chose it (`episodes`, `scores`, `slots`,
/// `weights` are its arguments where it takes them); `Ok` carries what it answered, printed.
fn call(
    kind: u8,
    side: &mut Side,
    out: &mut StepBuffers,
    episodes: &[EpisodeRecord],
    scores: &[f32],
    slots: &[usize],
    weights: &[f64],
) -> Result<String, String> {
    let Side { engine, levels, .. } = side;
    let r = match kind % 10 {
        0 => levels.start(engine, out.view()).map(|a| format!("{a:?}")),
        1 | 2 => levels.after_step(engine, out.view()).map(|a| format!("{a:?}")),
        3 => levels.update(engine, None, None, out.view()).map(|a| format!("{a:?}")),
        4 => levels.update(engine, Some(episodes), Some(scores), out.view()).map(|a| format!("{a:?}")),
        5 => levels.record(engine, &out.view()).map(|()| "recorded".to_string()),
        6 => {
            let new = LevelSource::new(space(), u64::from(kind)).and_then(|mut s| s.draw(slots.len()));
            let new = new.map_err(|e| e.to_string())?;
            return engine
                .refill(slots, &new, out.view())
                .map(|r| format!("{r:?}"))
                .map_err(|e| e.to_string());
        }
        7 => return engine.set_weights(Some(weights)).map(|()| "weights".into()).map_err(|e| e.to_string()),
        8 => {
            // The pool's records, two of them swapped when the slots say so (out of order: refused).
            let mut records = Levels::levels(engine).map_err(|e| e.to_string())?;
            if let [i, j] = *slots {
                if i < records.len() && j < records.len() {
                    records.swap(i, j);
                }
            }
            levels.decide(&records, Some(episodes), Some(scores)).map(|d| d.to_json())
        }
        _ => {
            // A decision the bytes write: the weights given (kept when their count is odd), the
            // slots to refill, and a level for each (one too many with a weight too many).
            let n = slots.len() + usize::from(weights.len() > SLOTS);
            let new = LevelSource::new(space(), 9).and_then(|mut s| s.draw(n)).map_err(|e| e.to_string())?;
            let decision = Decision {
                weights: weights.len().is_multiple_of(2).then(|| weights.to_vec()),
                refill: slots.to_vec(),
                levels: new,
                episodes: episodes.len(),
            };
            Levels::apply(engine, &decision, out.view()).map(|a| format!("{a:?}"))
        }
    };
    r.map_err(|e| e.to_string())
}

/// What a run of the target did: calls accepted and refused, steps, sampler calls that
/// refilled slots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriverRun {
    /// Calls the driver or the engine took.
    pub accepted: usize,
    /// Calls refused (each compared with the twin).
    pub refused: usize,
    /// Engine steps.
    pub steps: usize,
    /// Accepted calls that refilled a slot.
    pub refills: usize,
    /// `decide` and `apply` calls taken, and refused.
    pub decisions: [usize; 2],
}

/// The driver target: see the module's docs.
pub fn level_driver(data: &[u8]) {
    level_driver_run(data);
}

/// [`level_driver`], saying what the run did.
pub fn level_driver_run(data: &[u8]) -> DriverRun {
    let mut run = DriverRun::default();
    let mut input = Input(data);
    let key = [input.byte(), input.byte(), input.byte(), input.byte(), input.byte(), input.byte(), 0, 0];
    let update_every = u32::from(input.byte() % 4);
    let reset = input.byte() % 8 != 0;
    let mut a = Side::new(key, update_every, reset);
    let mut b = Side::new(key, update_every, reset);
    let mut op = 0;
    while !input.done() && op < 48 {
        op += 1;
        let kind = input.byte();
        if kind % 4 == 0 && a.engine.was_reset() {
            // A step of both engines, with the same actions.
            let actions: Vec<u8> = (0..a.out.rewards.len()).map(|_| input.byte() % 5).collect();
            a.engine.step(&actions, a.out.view()).expect("a step with the engine's buffers");
            b.engine.step(&actions, b.out.view()).expect("a step with the engine's buffers");
            same(&a, &b, "a step");
            run.steps += 1;
            continue;
        }
        let kind = kind >> 2;
        let mut buf_a = edit(&a.out, &mut input);
        let mut buf_b = buf_a.clone();
        let mut episodes: Vec<EpisodeRecord> = a.levels.pending().to_vec();
        if input.byte() % 2 == 1 && !episodes.is_empty() {
            let i = input.byte() as usize % episodes.len();
            episodes[i].instance = input.word() % 6;
            episodes[i].generation = input.word() % 3;
        }
        let scores: Vec<f32> = (0..episodes.len() + usize::from(input.byte() % 5 == 0))
            .map(|_| f32::from_bits(input.word()))
            .collect();
        let slots: Vec<usize> = (0..input.byte() % 3).map(|_| input.byte() as usize % (SLOTS + 1)).collect();
        let weights: Vec<f64> = (0..SLOTS + usize::from(input.byte() % 5 == 0))
            .map(|_| f64::from(input.word() as i32) / 7.0)
            .collect();
        let what = format!("call {} at op {op}", kind % 10);
        match call(kind, &mut a, &mut buf_a, &episodes, &scores, &slots, &weights) {
            Err(_) => {
                // Refused: nothing it could change has changed, the buffers it was lent included.
                assert!(same_bits(&buf_a, &buf_b), "{what}: the refused call's buffers");
                same(&a, &b, &what);
                run.refused += 1;
                run.decisions[1] += usize::from(kind % 10 >= 8);
            }
            Ok(answer) => {
                run.accepted += 1;
                run.decisions[0] += usize::from(kind % 10 >= 8);
                run.refills += usize::from(answer.contains("refilled: 1") || answer.contains("refilled: 2"));
                let twin = call(kind, &mut b, &mut buf_b, &episodes, &scores, &slots, &weights);
                assert_eq!(twin.as_ref(), Ok(&answer), "{what}: the twin's answer");
                assert!(same_bits(&buf_a, &buf_b), "{what}: the buffers");
                if buf_a.obs.len() == a.out.obs.len()
                    && buf_a.rewards.len() == a.out.rewards.len()
                    && buf_a.info.len() == a.out.info.len()
                    && buf_a.terminated.len() == a.out.terminated.len()
                    && buf_a.truncated.len() == a.out.truncated.len()
                    && buf_a.final_obs.len() == a.out.final_obs.len()
                    && buf_a.events.len() == a.out.events.len()
                {
                    a.out = buf_a;
                    b.out = buf_b;
                }
                same(&a, &b, &what);
            }
        }
    }
    run
}
