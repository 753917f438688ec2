//! ACCEL's edits of a level (Parker-Holder et al., "Evolving Curricula with Regret-Based
//! Environment Design", 2022; jaxued's `make_level_mutator`): a few small changes to a level the
//! agent already plays, kept only when the level stays solvable, with its CBS optimum computed
//! again.
//!
//! Each of the `edits` is one of, drawn alike among those the level allows:
//! - **flip** a cell that is no agent's start or goal: a hole becomes frozen, a frozen cell a
//!   hole;
//! - **move a start**: an agent's start to a frozen cell that is no start or goal;
//! - **move a goal**: an agent's goal to a frozen cell that is no start or goal.
//!
//! The edited level is solved by CBS (with the generator's node limit); an attempt whose level
//! has no plan, or none found within the limit, is drawn again from the next attempt's stream,
//! up to `max_attempts`. The draws come from counter-based streams of `(seed, attempt)`: the same
//! level and seed give the same edited level on every machine. The result carries its optimal
//! plan and whether it needs a wait, as the generator's levels do.

use serde::{Deserialize, Serialize};

use crate::generator::{needs_wait, GeneratorConfig};
use crate::grid::{Cell, Pos};
use crate::instance::Instance;
use crate::rng::Rng;
use crate::solver::{solve, SolverConfig};

/// A stream tag of the edits' draws.
const TAG: u64 = 0xacce1;

/// How a level is edited (serde; defaults in brackets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MutateConfig {
    /// Edits made to the level \[2\]: at least 1.
    pub edits: u32,
    /// The seed of the draws \[0\].
    pub seed: u64,
    /// Attempts, each a new set of edits, before giving up \[16\]: at least 1.
    pub max_attempts: u32,
    /// CBS's node limit for each attempt's solve \[the generator's, 5,000\].
    pub max_nodes: u64,
}

impl Default for MutateConfig {
    fn default() -> Self {
        MutateConfig { edits: 2, seed: 0, max_attempts: 16, max_nodes: GeneratorConfig::default().max_nodes }
    }
}

/// One edit of a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edit {
    /// The cell at `pos` flipped: `hole` is what it became.
    Flip { pos: Pos, hole: bool },
    /// Agent `agent`'s start moved to `to`.
    MoveStart { agent: usize, to: Pos },
    /// Agent `agent`'s goal moved to `to`.
    MoveGoal { agent: usize, to: Pos },
}

/// An edited level, the edits that made it, and the attempt that kept it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    pub instance: Instance,
    pub edits: Vec<Edit>,
    pub attempt: u32,
}

/// Why a level could not be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MutateError {
    /// A setting out of range.
    #[error("mutation: {0}")]
    Config(String),
    /// The level itself is not valid.
    #[error("mutation: the level is not valid: {0}")]
    Instance(#[from] crate::InstanceError),
    /// No edit is possible: every cell is a start or a goal.
    #[error("mutation: the level has no cell that is not a start or a goal, so nothing can be edited")]
    NoRoom,
    /// No attempt kept the level solvable.
    #[error(
        "mutation: no {edits} edits of the level kept it solvable (a plan found within {max_nodes} CBS nodes) in \
         {attempts} attempts with seed {seed}: make fewer edits, allow more attempts or nodes, or edit another level"
    )]
    Unsolvable { edits: u32, attempts: u32, seed: u64, max_nodes: u64 },
}

/// `instance` edited as `cfg` says (see the module's notes).
///
/// # Errors
/// [`MutateError::Config`] for no edits or no attempts; [`MutateError::Instance`] for a level
/// that is not valid; [`MutateError::NoRoom`] for a level with no cell free to edit;
/// [`MutateError::Unsolvable`] when no attempt kept it solvable.
pub fn mutate(instance: &Instance, cfg: &MutateConfig) -> Result<Mutation, MutateError> {
    if cfg.edits == 0 {
        return Err(MutateError::Config("edits is 0: make at least one".into()));
    }
    if cfg.max_attempts == 0 {
        return Err(MutateError::Config("max_attempts is 0: allow at least one".into()));
    }
    instance.validate()?;
    let solver = SolverConfig { max_nodes: cfg.max_nodes, ..SolverConfig::default() };
    for attempt in 0..cfg.max_attempts {
        let mut rng = Rng::from_counters(&[cfg.seed, u64::from(attempt), TAG]);
        let mut level = instance.clone();
        let mut edits = Vec::with_capacity(cfg.edits as usize);
        for _ in 0..cfg.edits {
            edits.push(edit(&mut level, &mut rng).ok_or(MutateError::NoRoom)?);
        }
        if level.validate().is_err() {
            continue;
        }
        let Ok(solution) = solve(&level, &solver) else {
            continue;
        };
        let Ok((flag, wait_free)) = needs_wait(&level, &solution, cfg.max_nodes) else {
            continue;
        };
        let stored = wait_free.as_ref().unwrap_or(&solution);
        level.optimal = Some(stored.to_optimal_plan(&level.grid));
        level.needs_wait = Some(flag);
        level.id = instance.id.as_ref().map(|id| format!("{id}+edit{}-{attempt}", cfg.seed));
        return Ok(Mutation { instance: level, edits, attempt });
    }
    Err(MutateError::Unsolvable {
        edits: cfg.edits,
        attempts: cfg.max_attempts,
        seed: cfg.seed,
        max_nodes: cfg.max_nodes,
    })
}

/// One edit of `level`, drawn alike among the kinds it allows; None when it allows none.
fn edit(level: &mut Instance, rng: &mut Rng) -> Option<Edit> {
    let grid = &level.grid;
    let taken: std::collections::HashSet<Cell> =
        level.agents.iter().flat_map(|a| [grid.cell(a.start), grid.cell(a.goal)]).collect();
    let free: Vec<Cell> = (0..grid.cells()).filter(|c| !taken.contains(c)).collect();
    if free.is_empty() {
        return None;
    }
    let frozen: Vec<Cell> = free.iter().copied().filter(|&c| !grid.is_hole(c)).collect();
    // Kinds 0 (flip), 1 (move a start), 2 (move a goal): flips need a free cell, moves a free
    // frozen one.
    let kinds = if frozen.is_empty() { 1 } else { 3 };
    let pick = |rng: &mut Rng, cells: &[Cell]| cells[rng.below(cells.len() as u32) as usize];
    match rng.below(kinds) {
        0 => {
            let c = pick(rng, &free);
            let hole = !grid.is_hole(c);
            let pos = grid.pos(c);
            level.grid.set_hole(c, hole);
            Some(Edit::Flip { pos, hole })
        }
        kind => {
            let agent = rng.below(level.agents.len() as u32) as usize;
            let to = grid.pos(pick(rng, &frozen));
            if kind == 1 {
                level.agents[agent].start = to;
                Some(Edit::MoveStart { agent, to })
            } else {
                level.agents[agent].goal = to;
                Some(Edit::MoveGoal { agent, to })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::generate;

    fn level(size: u32, agents: usize, seed: u64) -> Instance {
        let cfg = GeneratorConfig::default().size(size).agents(agents).hole_ratio(0.2).count(1).seed(seed);
        generate(&cfg).unwrap().remove(0)
    }

    /// The edits are what the result differs by, the result is solvable with the optimum CBS
    /// gives it, and the same seed gives the same level.
    #[test]
    fn edits_are_applied_solved_again_and_repeat_for_a_seed() {
        let mut changed = 0;
        for seed in 0..20 {
            let base = level(6, 3, seed);
            let cfg = MutateConfig { edits: 3, seed, ..MutateConfig::default() };
            let m = mutate(&base, &cfg).unwrap();
            assert_eq!(m.edits.len(), 3);
            assert_eq!(mutate(&base, &cfg).unwrap(), m, "seed {seed}: the same level again");
            // Replaying the edits on the level gives the result's grid, starts and goals.
            let mut replayed = base.clone();
            for e in &m.edits {
                match *e {
                    Edit::Flip { pos, hole } => {
                        let c = replayed.grid.cell(pos);
                        assert_ne!(replayed.grid.is_hole(c), hole, "a flip changes the cell");
                        replayed.grid.set_hole(c, hole);
                    }
                    Edit::MoveStart { agent, to } => replayed.agents[agent].start = to,
                    Edit::MoveGoal { agent, to } => replayed.agents[agent].goal = to,
                }
            }
            assert_eq!((&replayed.grid, &replayed.agents), (&m.instance.grid, &m.instance.agents));
            m.instance.validate().unwrap();
            let soc = solve(&m.instance, &SolverConfig::default()).unwrap().soc;
            let optimal = m.instance.optimal.as_ref().expect("solved");
            assert_eq!(optimal.soc, soc, "seed {seed}");
            let plan = crate::Plan::from_move_strings(&optimal.moves).unwrap();
            let verdict =
                crate::verify(&m.instance, crate::Answer::Plan(&plan), crate::Check::against(Some(soc)));
            assert!(verdict.valid && verdict.optimal, "seed {seed}: its stored plan is valid and optimal");
            changed += usize::from(m.instance.grid != base.grid || m.instance.agents != base.agents);
        }
        assert!(changed >= 18, "the edits change the level: {changed} of 20");
    }

    #[test]
    fn a_level_no_edit_keeps_solvable_and_bad_settings_are_errors() {
        let base = level(5, 2, 1);
        let e = mutate(&base, &MutateConfig { edits: 0, ..MutateConfig::default() }).unwrap_err();
        assert!(e.to_string().contains("edits is 0"), "{e}");
        let e = mutate(&base, &MutateConfig { max_attempts: 0, ..MutateConfig::default() }).unwrap_err();
        assert!(e.to_string().contains("max_attempts is 0"), "{e}");
        // A 1×5 corridor with one free cell between two agents that must swap: every edit
        // leaves them unable to pass.
        let corridor = Instance::from_json(
            r#"{"grid": ["FFFFF"], "agents": [{"start": [0, 0], "goal": [0, 4]}, {"start": [0, 4], "goal": [0, 0]}]}"#,
        )
        .unwrap();
        let e = mutate(&corridor, &MutateConfig { edits: 1, max_attempts: 8, ..MutateConfig::default() })
            .unwrap_err();
        assert!(
            e.to_string().contains("no 1 edits of the level kept it solvable")
                && e.to_string().contains("8 attempts"),
            "{e}"
        );
    }
}
