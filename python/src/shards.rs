//! Work in shards, for `floe.ray` (or any scheduler): the generator configurations of a suite
//! and of a round's training set, one configuration's instances by slot range, and the verdicts
//! of many answers as the lines `floe verify` prints. Every instance slot draws from its own
//! stream, so shards made apart and concatenated in order are exactly the single-process output.

use floe_core::generator::{generate_slots as generate_core, GeneratorConfig};
use floe_core::suite::{SuiteCell, SuiteConfig};
use floe_core::verify::{verify, Answer, Check};
use floe_core::PlanForm;
use floe_plugin_api::RoundConfig;
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::batch::{instances_of, sources};
use crate::convert::{json_to_py, py_to_json};
use crate::errors::{bad_input, config};
use crate::instances::{generate_error, wrap, Instance};

fn generator_config(value: &Bound<'_, PyAny>) -> PyResult<GeneratorConfig> {
    serde_json::from_str(&py_to_json(value)?).map_err(|e| bad_input(format!("generator configuration: {e}")))
}

/// Instances `start..stop` of a generator configuration (a dict as `suite_cells` and
/// `round_configs` give: `width`, `height`, `agents`, `hole_ratio`, `wait_ratio`, `count`,
/// `seed`, `max_attempts`, `max_nodes`): exactly those slots of generating all `count`.
///
/// Raises `floe.BadInput` for a bad configuration or range, `floe.Failed` when a slot could not
/// be generated.
#[pyfunction]
#[pyo3(signature = (config, start=0, stop=None))]
pub fn generate_slots(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    start: usize,
    stop: Option<usize>,
) -> PyResult<Vec<Instance>> {
    let cfg = generator_config(config)?;
    let stop = stop.unwrap_or(cfg.count);
    let made = py.detach(|| generate_core(&cfg, start..stop)).map_err(generate_error)?;
    Ok(wrap(made))
}

/// A suite cell's file name and generator configuration.
type Cell<'py> = (String, Bound<'py, PyAny>);

/// The suite's cells as `floe suite` lays them out (same arguments as `suite`), without
/// generating: `(file_name, generator configuration)` in the suite's order, plus the manifest
/// `suite.json` that `suite(out=...)` writes, once each cell holds `count` instances.
///
/// Raises `floe.BadInput` for a layout the suite refuses.
#[pyfunction]
#[pyo3(signature = (*, agents=vec![3, 4, 5], min_size=0, max_size=10, wait_ratios=vec![0.25, 0.5, 0.75], per_cell=50, hole_ratio=0.1, seed=0))]
#[allow(clippy::too_many_arguments)]
pub fn suite_cells<'py>(
    py: Python<'py>,
    agents: Vec<usize>,
    min_size: u32,
    max_size: u32,
    wait_ratios: Vec<f64>,
    per_cell: usize,
    hole_ratio: f64,
    seed: u64,
) -> PyResult<(Vec<Cell<'py>>, String)> {
    let config = SuiteConfig { agents, min_size, max_size, wait_ratios, per_cell, hole_ratio, seed };
    config.validate().map_err(generate_error)?;
    let mut cells = Vec::new();
    let mut layout = Vec::new();
    for g in config.cells() {
        let cell =
            SuiteCell { agents: g.agents, size: g.width, wait_ratio: g.wait_ratio, instances: Vec::new() };
        layout.push((cell, g.count));
        let value = serde_json::to_value(&g).map_err(|e| bad_input(e.to_string()))?;
        cells.push((layout.last().map(|(c, _)| c.file_name()).unwrap_or_default(), json_to_py(py, &value)?));
    }
    let manifest = floe_core::suite::manifest(&config, layout.iter().map(|(c, n)| (c, *n)));
    Ok((cells, manifest))
}

/// The generator configurations of one round's training set (what `round_instances` generates
/// and concatenates, in order): `samples` prompts shared among the configuration's sizes and
/// agent counts, from `seed`.
///
/// Raises `floe.ConfigError` for a bad configuration, `floe.BadInput` for `samples` 0.
#[pyfunction]
#[pyo3(signature = (config, samples, seed=0))]
pub fn round_configs<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    samples: usize,
    seed: u64,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if samples == 0 {
        return Err(bad_input("samples must be at least 1"));
    }
    let round = RoundConfig::from_json(&py_to_json(config)?).map_err(self::config)?;
    round
        .generator_configs(samples, seed)
        .iter()
        .map(|g| json_to_py(py, &serde_json::to_value(g).unwrap_or_default()))
        .collect()
}

/// The verdicts of `answers[n]` (free text in the paper's format) against `instances[n]`, each
/// the line of JSON `floe verify` prints for it (no newline), computed on all cores with the GIL
/// released.
///
/// Raises `floe.BadInput` for unequal lengths or an unreadable instance.
#[pyfunction]
pub fn verdict_lines(
    py: Python<'_>,
    instances: Vec<Bound<'_, PyAny>>,
    answers: Vec<String>,
) -> PyResult<Vec<String>> {
    let src = sources(&instances)?;
    py.detach(|| -> Result<Vec<String>, String> {
        let insts = instances_of(&src, answers.len())?;
        Ok((0..insts.len())
            .into_par_iter()
            .map(|n| {
                let inst = insts.get(n);
                verify(
                    inst,
                    Answer::Written(&answers[n], PlanForm::Text),
                    Check::against(floe_core::solver::optimum(inst)),
                )
                .to_json_value()
                .to_string()
            })
            .collect())
    })
    .map_err(bad_input)
}
