//! The fixed validation set of a run and the count of its answers, as `floe train` makes and
//! counts them, for a trainer in Python (`floe.rounds`): the set is generated cell by cell
//! (agent count × map size) with the seeds `floe train` uses (`train/src/run/data.rs`), and the
//! verdicts are counted per cell and pooled per map size as `floe-train`'s `EvalReport` does
//! (`train/src/eval.rs`), so that the engineer's module F reads the same numbers from either.

use std::collections::BTreeMap;

use floe_core::generator::GeneratorConfig;
use floe_core::rng::hash;
use floe_core::FailureKind;
use floe_plugin_api::{FailureCounts, SizeResult};
use pyo3::prelude::*;

use crate::batch::{records_of, sources};
use crate::errors::bad_input;
use crate::instances::{generate_error, json_to_py, wrap, Instance};

/// The fixed validation set of a run whose `validation` section has these values (the
/// defaults are `floe train`'s): `per_cell` instances for each agent count × map size, in that
/// order, each cell generated from `hash(seed, agents, size)` as `floe train` does.
///
/// Raises `floe.BadInput` for settings the generator refuses, `floe.Failed` when a cell cannot
/// be filled.
#[pyfunction]
#[pyo3(signature = (*, sizes=vec![3, 4, 5, 6], agents=vec![2, 3], per_cell=100, hole_ratio=0.2, wait_ratio=0.5, seed=1))]
pub fn validation_set(
    py: Python<'_>,
    sizes: Vec<u32>,
    agents: Vec<u32>,
    per_cell: usize,
    hole_ratio: f64,
    wait_ratio: f64,
    seed: u64,
) -> PyResult<Vec<Instance>> {
    if sizes.is_empty() || agents.is_empty() || per_cell == 0 {
        return Err(bad_input("validation set: sizes, agents and per_cell must not be empty or 0"));
    }
    let made = py.detach(|| -> Result<Vec<floe_core::Instance>, floe_core::GenerateError> {
        let mut all = Vec::new();
        for &k in &agents {
            for &size in &sizes {
                let cell_seed = hash(&[seed, u64::from(k), u64::from(size)]);
                let g = GeneratorConfig::default()
                    .size(size)
                    .agents(k as usize)
                    .hole_ratio(hole_ratio)
                    .wait_ratio(wait_ratio)
                    .count(per_cell)
                    .seed(cell_seed);
                all.extend(floe_core::generate(&g)?);
            }
        }
        Ok(all)
    });
    Ok(wrap(made.map_err(generate_error)?))
}

/// One agent count × map size cell of a validation count.
struct Cell {
    agents: u32,
    size: u32,
    instances: u32,
    valid: u32,
    optimal: u32,
    failures: FailureCounts,
}

/// Counts the verdicts of `answers[n]` against `instances[n]` as `floe train` counts a
/// validation: per agent count × map side (the larger side of a rectangular map) the instances,
/// valid and optimal plans and the failures by kind, and the same pooled per map size, as the
/// history's per-size results that the engineer reads (module F).
///
/// Returns `{"cells": [{"agents", "size", "instances", "valid", "optimal", "failures"}, ...],
/// "per_size": [{"size", "valid_rate", "optimal_rate", "instances", "failures"}, ...]}`, cells
/// in (agents, size) order, failures as `{kind name: count}`.
///
/// Raises `floe.BadInput` for unequal lengths or an unreadable instance.
#[pyfunction]
pub fn validation_counts<'py>(
    py: Python<'py>,
    instances: Vec<Bound<'py, PyAny>>,
    answers: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let src = sources(&instances)?;
    let (recs, shapes) = py.detach(|| records_of(&src, &answers)).map_err(bad_input)?;
    let mut cells: BTreeMap<(u32, u32), Cell> = BTreeMap::new();
    for (r, &(agents, size)) in recs.iter().zip(&shapes) {
        let c = cells.entry((agents, size)).or_insert_with(|| Cell {
            agents,
            size,
            instances: 0,
            valid: 0,
            optimal: 0,
            failures: FailureCounts::new(),
        });
        c.instances += 1;
        c.valid += u32::from(r.failure == 0);
        c.optimal += u32::from(r.failure == 0 && r.optimal == 1);
        if let Some(kind) = FailureKind::from_code(u32::from(r.failure)) {
            *c.failures.entry(kind).or_default() += 1;
        }
    }
    let mut per_size: BTreeMap<u32, (u32, u32, u32, FailureCounts)> = BTreeMap::new();
    for c in cells.values() {
        let e = per_size.entry(c.size).or_default();
        (e.0, e.1, e.2) = (e.0 + c.instances, e.1 + c.valid, e.2 + c.optimal);
        for (k, v) in &c.failures {
            *e.3.entry(*k).or_default() += v;
        }
    }
    let rate = |x: u32, n: u32| f64::from(x) / f64::from(n.max(1));
    let per_size: Vec<SizeResult> = per_size
        .into_iter()
        .map(|(size, (n, valid, optimal, failures))| SizeResult {
            size,
            valid_rate: rate(valid, n),
            optimal_rate: rate(optimal, n),
            instances: n,
            failures,
            mean_abs_advantage: None,
        })
        .collect();
    let cells: Vec<serde_json::Value> = cells
        .into_values()
        .map(|c| {
            serde_json::json!({
                "agents": c.agents, "size": c.size, "instances": c.instances, "valid": c.valid,
                "optimal": c.optimal, "failures": c.failures,
            })
        })
        .collect();
    json_to_py(py, &serde_json::json!({"cells": cells, "per_size": per_size}))
}
