//! The fixed validation set of a run and the count of its answers, for a Python caller that
//! runs its own loop: both are floe-rounds' (`data::validation_set`, `report::count`), the ones
//! the round driver uses for every trainee.

use floe_rounds::report::count;
use floe_rounds::{RoundsError, ValidationConfig};
use pyo3::prelude::*;

use crate::batch::{records_of, sources};
use crate::convert::json_to_py;
use crate::errors::bad_input;
use crate::instances::{generate_error, wrap, Instance};

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
    let v = ValidationConfig { sizes, agents, per_cell, hole_ratio, wait_ratio, seed };
    v.validate().map_err(|e| bad_input(e.to_string()))?;
    let made = py.detach(|| floe_rounds::data::validation_set(&v));
    Ok(wrap(made.map_err(|e| match e {
        RoundsError::Generate(g) => generate_error(g),
        other => bad_input(other.to_string()),
    })?))
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
    let (recs, insts) = py.detach(|| records_of(&src, &answers)).map_err(bad_input)?;
    let refs: Vec<&floe_core::Instance> = insts.iter().collect();
    let (report, _) = count(&refs, &recs);
    let cells: Vec<serde_json::Value> = report
        .cells
        .iter()
        .map(|c| {
            serde_json::json!({
                "agents": c.agents, "size": c.size, "instances": c.instances, "valid": c.valid,
                "optimal": c.optimal, "failures": c.failures,
            })
        })
        .collect();
    json_to_py(py, &serde_json::json!({"cells": cells, "per_size": report.size_results()}))
}
