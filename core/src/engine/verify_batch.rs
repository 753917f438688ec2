//! Batched plan verification: N plans, each an instance index into the pool and per-agent move
//! codes padded to a fixed length, verified in one call with exactly the single-plan verifier's
//! results ([`crate::verify`]).

use rayon::prelude::*;

use super::layout::{unpack_dims, unpack_rc, VerifyOut, NONE};
use super::pool::{EngineError, InstancePool};
use crate::moves::Move;
use crate::verify::FailureKind;

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

fn fail(kind: FailureKind, agent: usize, time: u32, optimal_soc: u32) -> VerifyOut {
    VerifyOut { kind: kind as u32, agent: agent as u32, time, optimal_soc, ..VerifyOut::default() }
}

/// Verifies plan `n` of the batch.
pub(crate) fn verify_one(pool: &InstancePool, batch: &PlanBatch, n: usize) -> VerifyOut {
    // Per-agent arrays live on the stack; small agent counts get small arrays.
    match unpack_dims(pool.dims[batch.instance[n] as usize]).2 {
        0..=4 => verify_with::<4>(pool, batch, n),
        5..=16 => verify_with::<16>(pool, batch, n),
        _ => verify_with::<256>(pool, batch, n),
    }
}

fn verify_with<const N: usize>(pool: &InstancePool, batch: &PlanBatch, n: usize) -> VerifyOut {
    let p = batch.instance[n] as usize;
    let (w, h, k) = unpack_dims(pool.dims[p]);
    let k = k as usize;
    let opt = pool.optimal_soc[p];
    if batch.agents[n] as usize != k {
        return VerifyOut {
            kind: FailureKind::WrongAgentCount as u32,
            optimal_soc: opt,
            ..VerifyOut::default()
        };
    }
    let (kk, t_max) = (batch.max_agents, batch.max_len);
    let plan = &batch.moves[n * kk * t_max..(n + 1) * kk * t_max];
    let mut len = [0u32; N];
    let mut horizon = 0;
    for a in 0..k {
        let m = &plan[a * t_max..(a + 1) * t_max];
        let l = m.iter().position(|&c| c == super::verify_batch::END).unwrap_or(t_max);
        if m[..l].iter().any(|&c| c > 4) {
            return VerifyOut {
                kind: FailureKind::ParseError as u32,
                optimal_soc: opt,
                ..VerifyOut::default()
            };
        }
        len[a] = l as u32;
        horizon = horizon.max(l as u32);
    }
    let mut pos = [0u32; N];
    let mut row = [0u32; N];
    let mut col = [0u32; N];
    let mut prev = [0u32; N];
    let mut last_off = [0u32; N];
    let mut off = [false; N];
    let mut goals = [0u32; N];
    for a in 0..k {
        let (sr, sc) = unpack_rc(pool.starts[p * pool.max_agents + a]);
        let (gr, gc) = unpack_rc(pool.goals[p * pool.max_agents + a]);
        pos[a] = sr * w + sc;
        (row[a], col[a]) = (sr, sc);
        goals[a] = gr * w + gc;
        off[a] = pos[a] != goals[a];
    }
    for t in 1..=horizon {
        for a in 0..k {
            prev[a] = pos[a];
            if t > len[a] {
                continue;
            }
            let (r, c) = (row[a], col[a]);
            (row[a], col[a]) = match plan[a * t_max + t as usize - 1] {
                0 => (r, c),
                1 if r > 0 => (r - 1, c),
                2 if r + 1 < h => (r + 1, c),
                3 if c > 0 => (r, c - 1),
                4 if c + 1 < w => (r, c + 1),
                _ => return fail(FailureKind::OutOfBounds, a, t, opt),
            };
            pos[a] = row[a] * w + col[a];
            if pool.is_hole(p, pos[a]) {
                return fail(FailureKind::Hole, a, t, opt);
            }
        }
        for a in 0..k {
            if prev[a] == pos[a] {
                continue;
            }
            for b in a + 1..k {
                if prev[b] == pos[a] && pos[b] == prev[a] {
                    return fail(FailureKind::EdgeConflict, a, t, opt);
                }
            }
        }
        for a in 0..k {
            for b in a + 1..k {
                if pos[a] == pos[b] {
                    return fail(FailureKind::VertexConflict, a, t, opt);
                }
            }
        }
        for a in 0..k {
            if pos[a] != goals[a] {
                last_off[a] = t;
                off[a] = true;
            }
        }
    }
    let (mut soc, mut makespan) = (0, 0);
    for a in 0..k {
        if pos[a] != goals[a] {
            return fail(FailureKind::GoalNotReached, a, horizon, opt);
        }
        let cost = if off[a] { last_off[a] + 1 } else { 0 };
        soc += cost;
        makespan = makespan.max(cost);
    }
    VerifyOut {
        valid: 1,
        optimal: u32::from(opt != NONE && soc == opt),
        kind: 0,
        agent: NONE,
        time: NONE,
        soc,
        makespan,
        optimal_soc: opt,
    }
}

/// Verifies every plan of the batch on the CPU (rayon), writing one [`VerifyOut`] per plan.
///
/// # Errors
/// A malformed batch (sizes, instance indices) or an output of the wrong length.
pub fn verify_batch_cpu(
    pool: &InstancePool,
    batch: &PlanBatch,
    out: &mut [VerifyOut],
) -> Result<(), EngineError> {
    batch.check(pool)?;
    if out.len() != batch.len() {
        return Err(EngineError::BufferSize { what: "verify output", expected: batch.len(), got: out.len() });
    }
    out.par_chunks_mut(1024).enumerate().for_each(|(chunk, o)| {
        for (i, slot) in o.iter_mut().enumerate() {
            *slot = verify_one(pool, batch, chunk * 1024 + i);
        }
    });
    Ok(())
}
