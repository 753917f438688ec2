//! Batched plan verification: N plans, each an instance index into the pool and per-agent move
//! codes padded to a fixed length, verified in one call with exactly the single-plan verifier's
//! results ([`mod@crate::verify`]): both run the same verification kernel.

use std::cell::RefCell;
use std::sync::Arc;

use rayon::prelude::*;

use bytemuck::{Pod, Zeroable};

use crate::error::EngineError;
use crate::failure::{FailureKind, NONE};
use crate::moves::Move;
use crate::pool::InstancePool;
use crate::rules::{Occupancy, PAIRWISE_MAX_AGENTS};
use crate::verify::kernel::{self, Board, Lane, Steps};
use crate::verify::PartialCredit;
use crate::words::{unpack_dims, unpack_rc};

/// One plan's result from batched verification: the same information as [`crate::Verdict`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct VerifyOut {
    /// 1 if valid.
    pub valid: u32,
    /// 1 if valid and of optimal sum of costs.
    pub optimal: u32,
    /// [`crate::FailureKind`] code, 0 for none.
    pub kind: u32,
    /// Agent at fault, or [`NONE`].
    pub agent: u32,
    /// Time of the failure, or [`NONE`].
    pub time: u32,
    /// Sum of costs of a valid plan, or [`NONE`].
    pub soc: u32,
    /// Makespan of a valid plan, or [`NONE`].
    pub makespan: u32,
    /// The optimum, or [`NONE`] if unknown.
    pub optimal_soc: u32,
}

impl Default for VerifyOut {
    fn default() -> Self {
        Self {
            valid: 0,
            optimal: 0,
            kind: 0,
            agent: NONE,
            time: NONE,
            soc: NONE,
            makespan: NONE,
            optimal_soc: NONE,
        }
    }
}

impl VerifyOut {
    /// The batched form of a single-plan verdict.
    #[must_use]
    pub fn from_verdict(v: &crate::Verdict) -> Self {
        let f = v.failure.as_ref();
        Self {
            valid: u32::from(v.valid),
            optimal: u32::from(v.optimal),
            kind: f.map_or(0, |f| f.kind as u32),
            agent: f.and_then(|f| f.agent).map_or(NONE, |a| a as u32),
            time: f.and_then(|f| f.time).unwrap_or(NONE),
            soc: v.soc.unwrap_or(NONE),
            makespan: v.makespan.unwrap_or(NONE),
            optimal_soc: v.optimal_soc.unwrap_or(NONE),
        }
    }
}

/// Marks the end of an agent's moves (and the padding after it).
pub const END: u8 = 255;

/// Plans packed for batched verification: `moves[(n · K + a) · T + t]` is agent `a`'s move code at
/// step `t + 1` of plan `n` (0..=4, or [`END`]); `agents[n]` is the number of agents the plan
/// covers (a plan for the wrong number is `wrong_agent_count`); any other code is a
/// `parse_error`.
///
/// A batch is built by [`PlanBatch::push`] or [`PlanBatch::from_arrays`], which check its shape;
/// the pool's instance indices are checked when it is verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanBatch {
    /// Agent slots per plan, K.
    pub(crate) max_agents: usize,
    /// Move slots per agent, T.
    pub(crate) max_len: usize,
    pub(crate) instance: Vec<u32>,
    pub(crate) agents: Vec<u32>,
    pub(crate) moves: Vec<u8>,
}

impl PlanBatch {
    /// An empty batch with K agent slots and T move slots.
    #[must_use]
    pub fn new(max_agents: usize, max_len: usize) -> Self {
        Self { max_agents, max_len, instance: Vec::new(), agents: Vec::new(), moves: Vec::new() }
    }

    /// A batch from flat arrays in the layout above: `instance` and `agents` with one entry per
    /// plan, `moves` with `K · T` per plan. Move codes are not checked here: a code other than
    /// 0..=4 and [`END`] makes that plan a `parse_error`, as documented.
    ///
    /// # Errors
    /// K over 255, lengths that do not match, a plan for more than K agents.
    pub fn from_arrays(
        max_agents: usize,
        max_len: usize,
        instance: Vec<u32>,
        agents: Vec<u32>,
        moves: Vec<u8>,
    ) -> Result<Self, EngineError> {
        if max_agents > 255 {
            return Err(EngineError::Invalid(format!(
                "K = {max_agents} agent slots: at most 255 agents per plan"
            )));
        }
        let n = instance.len();
        if agents.len() != n {
            return Err(EngineError::BufferSize {
                what: "plan batch agents",
                expected: n,
                got: agents.len(),
            });
        }
        let expected = n.checked_mul(max_agents).and_then(|x| x.checked_mul(max_len));
        if expected != Some(moves.len()) {
            return Err(EngineError::BufferSize {
                what: "plan batch moves",
                expected: expected.unwrap_or(usize::MAX),
                got: moves.len(),
            });
        }
        if let Some(i) = agents.iter().position(|&a| a as usize > max_agents) {
            return Err(EngineError::Invalid(format!(
                "plan {i} is for {} agents, more than K = {max_agents}",
                agents[i]
            )));
        }
        Ok(Self { max_agents, max_len, instance, agents, moves })
    }

    /// Agent slots per plan, K.
    #[must_use]
    pub fn max_agents(&self) -> usize {
        self.max_agents
    }

    /// Move slots per agent, T.
    #[must_use]
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Each plan's pool instance.
    #[must_use]
    pub fn instances(&self) -> &[u32] {
        &self.instance
    }

    /// Each plan's agent count.
    #[must_use]
    pub fn agent_counts(&self) -> &[u32] {
        &self.agents
    }

    /// The packed move codes (`N · K · T`).
    #[must_use]
    pub fn moves(&self) -> &[u8] {
        &self.moves
    }

    /// Number of plans.
    #[must_use]
    pub fn len(&self) -> usize {
        self.instance.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.instance.is_empty()
    }

    /// Appends a plan for pool instance `instance`.
    ///
    /// # Errors
    /// More agents than K or more moves than T.
    pub fn push(&mut self, instance: u32, plan: &[Vec<Move>]) -> Result<(), EngineError> {
        if plan.len() > self.max_agents {
            return Err(EngineError::Invalid(format!(
                "a plan for {} agents exceeds K = {}",
                plan.len(),
                self.max_agents
            )));
        }
        if let Some(long) = plan.iter().find(|m| m.len() > self.max_len) {
            return Err(EngineError::Invalid(format!(
                "a plan of {} moves exceeds T = {}",
                long.len(),
                self.max_len
            )));
        }
        self.instance.push(instance);
        self.agents.push(plan.len() as u32);
        for a in 0..self.max_agents {
            let m = plan.get(a).map_or(&[][..], Vec::as_slice);
            self.moves.extend(m.iter().map(|&mv| mv as u8));
            self.moves.extend(std::iter::repeat_n(END, self.max_len - m.len()));
        }
        Ok(())
    }

    pub(crate) fn check(&self, pool: &InstancePool) -> Result<(), EngineError> {
        let n = self.len();
        if self.agents.len() != n || self.moves.len() != n * self.max_agents * self.max_len {
            return Err(EngineError::BufferSize {
                what: "plan batch moves",
                expected: n * self.max_agents * self.max_len,
                got: self.moves.len(),
            });
        }
        if let Some(i) = self.instance.iter().position(|&i| i as usize >= pool.len()) {
            return Err(EngineError::Invalid(format!(
                "plan {i} names instance {} of {}",
                self.instance[i],
                pool.len()
            )));
        }
        if self.max_agents > 255 {
            return Err(EngineError::Invalid("at most 255 agents per plan".into()));
        }
        Ok(())
    }
}

/// A batched plan as the verification kernel reads it: move codes (checked to be 0..=4) and
/// each agent's number of moves.
struct Codes<'a, const N: usize> {
    plan: &'a [u8],
    t_max: usize,
    len: [u32; N],
}

impl<const N: usize> Steps for Codes<'_, N> {
    const JUMPS: bool = false;

    #[inline(always)]
    fn next(&self, a: usize, t: u32, row: i64, col: i64) -> Option<(i64, i64)> {
        if t > self.len[a] {
            return None;
        }
        let (dr, dc) = Move::DELTAS[usize::from(self.plan[a * self.t_max + t as usize - 1])];
        Some((row + dr, col + dc))
    }
}

thread_local! {
    /// Scratch of plans with more than [`crate::rules::PAIRWISE_MAX_AGENTS`] agents.
    static OCCUPANCY: RefCell<Occupancy> = RefCell::new(Occupancy::default());
}

/// Verifies plan `n` of the batch.
pub(crate) fn verify_one(pool: &InstancePool, batch: &PlanBatch, n: usize) -> (VerifyOut, PartialCredit) {
    // Per-agent arrays live on the stack; small agent counts get small arrays.
    match unpack_dims(pool.dims[batch.instance[n] as usize]).2 {
        0..=4 => verify_with::<4>(pool, batch, n),
        5..=16 => verify_with::<16>(pool, batch, n),
        _ => verify_with::<256>(pool, batch, n),
    }
}

fn verify_with<const N: usize>(
    pool: &InstancePool,
    batch: &PlanBatch,
    n: usize,
) -> (VerifyOut, PartialCredit) {
    let p = batch.instance[n] as usize;
    let (w, h, k) = unpack_dims(pool.dims[p]);
    let k = k as usize;
    let opt = pool.optimal_soc[p];
    let unread = |kind: FailureKind| {
        (VerifyOut { kind: kind as u32, optimal_soc: opt, ..VerifyOut::default() }, PartialCredit::default())
    };
    if batch.agents[n] as usize != k {
        return unread(FailureKind::WrongAgentCount);
    }
    let (kk, t_max) = (batch.max_agents, batch.max_len);
    let plan = &batch.moves[n * kk * t_max..(n + 1) * kk * t_max];
    let mut codes = Codes { plan, t_max, len: [0; N] };
    let mut horizon = 0;
    for a in 0..k {
        let m = &plan[a * t_max..(a + 1) * t_max];
        let l = m.iter().position(|&c| c == END).unwrap_or(t_max);
        if m[..l].iter().any(|&c| c > 4) {
            return unread(FailureKind::ParseError);
        }
        codes.len[a] = l as u32;
        horizon = horizon.max(l as u32);
    }
    let mut lanes = [Lane::default(); N];
    let lanes = &mut lanes[..k];
    for (a, lane) in lanes.iter_mut().enumerate() {
        let (sr, sc) = unpack_rc(pool.starts[p * pool.max_agents + a]);
        let (gr, gc) = unpack_rc(pool.goals[p * pool.max_agents + a]);
        *lane = Lane::new(sr, sc, w, gr * w + gc);
    }
    let board = Board { width: w, height: h, is_hole: |c| pool.is_hole(p, c) };
    let outcome = if k > PAIRWISE_MAX_AGENTS {
        OCCUPANCY.with_borrow_mut(|occ| {
            occ.fit((w * h) as usize);
            kernel::run(&board, &codes, horizon, lanes, occ)
        })
    } else {
        kernel::run(&board, &codes, horizon, lanes, &mut Occupancy::default())
    };
    let credit =
        PartialCredit::new(outcome.fault.map(|f| (f.kind, f.time)), horizon, outcome.on_goal, k as u32);
    let out = match outcome.fault {
        Some(f) => VerifyOut {
            kind: f.kind as u32,
            agent: f.agent as u32,
            time: f.time,
            optimal_soc: opt,
            ..VerifyOut::default()
        },
        None => VerifyOut {
            valid: 1,
            optimal: u32::from(opt != NONE && outcome.soc == opt),
            kind: 0,
            agent: NONE,
            time: NONE,
            soc: outcome.soc,
            makespan: outcome.makespan,
            optimal_soc: opt,
        },
    };
    (out, credit)
}

/// Verifies every plan of the batch on the CPU (rayon), writing one [`VerifyOut`] per plan,
/// and, when `credit` is given, each plan's [`PartialCredit`] (agents on goal, legal steps,
/// horizon) from the same run of the verification kernel.
///
/// # Errors
/// A malformed batch (sizes, instance indices) or an output of the wrong length.
pub fn verify_batch(
    pool: &InstancePool,
    batch: &PlanBatch,
    out: &mut [VerifyOut],
    credit: Option<&mut [PartialCredit]>,
) -> Result<(), EngineError> {
    batch.check(pool)?;
    let credit_len = credit.as_ref().map_or(batch.len(), |c| c.len());
    for (what, got) in [("verify output", out.len()), ("partial credit output", credit_len)] {
        if got != batch.len() {
            return Err(EngineError::BufferSize { what, expected: batch.len(), got });
        }
    }
    match credit {
        None => out.par_chunks_mut(1024).enumerate().for_each(|(chunk, o)| {
            for (i, slot) in o.iter_mut().enumerate() {
                *slot = verify_one(pool, batch, chunk * 1024 + i).0;
            }
        }),
        Some(credit) => {
            out.par_chunks_mut(1024).zip(credit.par_chunks_mut(1024)).enumerate().for_each(
                |(chunk, (o, c))| {
                    for (i, (slot, credit)) in o.iter_mut().zip(c).enumerate() {
                        (*slot, *credit) = verify_one(pool, batch, chunk * 1024 + i);
                    }
                },
            );
        }
    }
    Ok(())
}

/// A batched plan verifier over one instance pool: [`CpuVerifier`], or the GPU's
/// `engine::gpu::GpuVerifier`. Both write the same records for the same batch.
pub trait Verifier {
    /// Verifies every plan of the batch, writing one [`VerifyOut`] per plan.
    ///
    /// # Errors
    /// A malformed batch (sizes, instance indices), an output of the wrong length, or the
    /// backend's own error (a GPU device error).
    fn verify(&self, batch: &PlanBatch, out: &mut [VerifyOut]) -> Result<(), EngineError>;
}

/// The CPU's batched verifier ([`verify_batch`] over its pool).
#[derive(Debug, Clone)]
pub struct CpuVerifier {
    pool: Arc<InstancePool>,
}

impl CpuVerifier {
    /// A verifier of plans over `pool`'s instances.
    #[must_use]
    pub fn new(pool: Arc<InstancePool>) -> Self {
        CpuVerifier { pool }
    }
}

impl Verifier for CpuVerifier {
    fn verify(&self, batch: &PlanBatch, out: &mut [VerifyOut]) -> Result<(), EngineError> {
        verify_batch(&self.pool, batch, out, None)
    }
}

/// The benches' verification workload (`benches/engine.rs`, `examples/workload.rs`): `plans`
/// plans over 32 solved 3-agent 8×8 instances, their optimal plans cut to 16 steps, every fourth
/// with one agent's moves reversed (mostly invalid).
///
/// # Panics
/// Never for these settings (the generator and the pool accept them).
#[cfg(feature = "testing")]
#[must_use]
pub fn verification_workload(plans: usize) -> (InstancePool, PlanBatch) {
    use crate::generator::{generate, GeneratorConfig};
    let insts = generate(
        &GeneratorConfig::default().size(8).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(32).seed(1),
    )
    .expect("generates");
    let pool = InstancePool::new(&insts, crate::pool::Optima::AsStored).expect("pool");
    let mut batch = PlanBatch::new(3, 16);
    for n in 0..plans {
        let i = n % insts.len();
        let Ok(crate::Plan::Moves(mut plan)) =
            crate::Plan::from_move_strings(&insts[i].optimal.as_ref().expect("solved").moves)
        else {
            unreachable!("move strings")
        };
        if n % 4 == 3 {
            plan[n % 3].reverse();
        }
        for m in &mut plan {
            m.truncate(16);
        }
        batch.push(i as u32, &plan).expect("fits");
    }
    (pool, batch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{generate, GeneratorConfig};
    use crate::pool::Optima;
    use crate::rng::Rng;
    use crate::verify::{verify, Check};
    use crate::Plan;

    /// The batch gives the single verifier's results and partial credit for valid, broken,
    /// short and long plans, with few agents (every pair compared) and many (occupancy).
    #[test]
    fn batch_credit_is_the_single_verifiers() {
        let mut rng = Rng::from_counters(&[3]);
        for (side, agents) in [(4, 3), (8, 10)] {
            let insts = generate(
                &GeneratorConfig::default()
                    .size(side)
                    .agents(agents)
                    .hole_ratio(0.1)
                    .wait_ratio(0.5)
                    .count(6)
                    .seed(9),
            )
            .expect("generates");
            let pool = InstancePool::new(&insts, Optima::AsStored).expect("pool");
            let mut batch = PlanBatch::new(agents, 24);
            let mut plans = Vec::new();
            for (i, inst) in insts.iter().enumerate() {
                let Ok(Plan::Moves(opt)) =
                    Plan::from_move_strings(&inst.optimal.as_ref().expect("solved").moves)
                else {
                    unreachable!("move strings")
                };
                for trial in 0..12 {
                    let mut moves = opt.clone();
                    match trial % 4 {
                        0 => {}
                        1 => moves.iter_mut().for_each(|m| m.truncate(m.len() / 2)),
                        2 => {
                            moves[trial % agents] = (0..6).map(|_| Move::ALL[rng.below(5) as usize]).collect()
                        }
                        _ => moves.iter_mut().for_each(|m| m.push(Move::ALL[rng.below(5) as usize])),
                    }
                    moves.iter_mut().for_each(|m| m.truncate(24));
                    batch.push(i as u32, &moves).expect("fits");
                    plans.push((i, moves));
                }
            }
            let mut out = vec![VerifyOut::default(); batch.len()];
            let mut credit = vec![PartialCredit::default(); batch.len()];
            verify_batch(&pool, &batch, &mut out, Some(&mut credit)).expect("verifies");
            let mut without = vec![VerifyOut::default(); batch.len()];
            verify_batch(&pool, &batch, &mut without, None).expect("verifies");
            assert_eq!(without, out);
            let mut kinds = std::collections::BTreeSet::new();
            for ((i, moves), (o, c)) in plans.iter().zip(out.iter().zip(&credit)) {
                let inst = &insts[*i];
                let v = verify(
                    inst,
                    &Plan::Moves(moves.clone()),
                    Check::against(inst.optimal.as_ref().map(|o| o.soc)).with_credit(),
                );
                assert_eq!((*o, Some(*c)), (VerifyOut::from_verdict(&v), v.credit), "{moves:?}");
                kinds.insert(o.kind);
            }
            assert!(kinds.len() >= 3, "too few outcomes: {kinds:?}");
        }
    }
}
