//! What a run folder holds, asked from Python: where a stage's model and a trainer's files go,
//! which model a resumed run continues from, the run's record and its state (floe-rounds'
//! [`RunFolder`], where the folder is written and read).

use floe_rounds::folder::Trainer;
use floe_rounds::{RunFolder, RunState, Stage};
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::convert::json_to_py;
use crate::errors::{bad_input, rounds as rounds_error};
use crate::trainee::state_value;

fn stage(name: String) -> PyResult<Stage> {
    Stage::try_from(name).map_err(bad_input)
}

/// Where a Hugging Face trainee keeps its model in the run folder `out` after `stage` (as
/// `save` names it: `"round 2"`, `"warm start"`): `round-<r>/`, `warm-start/`; None for a stage
/// before training (`"untrained"`).
///
/// Raises `floe.BadInput` for a name that is no stage.
#[pyfunction]
pub fn model_folder(out: String, stage: String) -> PyResult<Option<String>> {
    Ok(RunFolder::new(out).model_dir(self::stage(stage)?).map(|p| p.display().to_string()))
}

/// Where the trainer `trainer` (`"trl"`, `"verl"`) keeps its files in the run folder `out`: of
/// `stage` (`"round 2"`: `<trainer>/round-2/`, `"warm start"`: `<trainer>/warm-start/`; None for
/// a stage before training), or without a stage its own folder (`<trainer>/`).
///
/// Raises `floe.BadInput` for a name that is no stage or no trainer.
#[pyfunction]
#[pyo3(signature = (out, trainer, stage=None))]
pub fn trainer_folder(out: String, trainer: &str, stage: Option<String>) -> PyResult<Option<String>> {
    let trainer: Trainer = trainer.parse().map_err(|e: floe_rounds::RoundsError| bad_input(e.to_string()))?;
    let folder = RunFolder::new(out);
    let path = match stage {
        Some(s) => folder.trainer_dir(trainer, self::stage(s)?),
        None => Some(folder.trainer_root(trainer)),
    };
    Ok(path.map(|p| p.display().to_string()))
}

/// The model folder a run resumed in the run folder `out` continues from, `saved` being the
/// run state `restore` gets (its `rounds_done` and `warm_start_done`): its last finished
/// round's model, else its warm start's when that folder is there; None: the run's own model.
#[pyfunction]
#[pyo3(signature = (out, saved=None))]
pub fn resume_model(out: String, saved: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(saved) = saved.filter(|s| !s.is_none()) else { return Ok(None) };
    let v: serde_json::Value = from_py("saved", saved)?;
    let state = RunState {
        rounds_done: v["rounds_done"].as_u64().unwrap_or_default() as u32,
        warm_start_done: v["warm_start_done"].as_bool().unwrap_or_default(),
        ..RunState::default()
    };
    Ok(RunFolder::new(out).resume_model_dir(&state).map(|p| p.display().to_string()))
}

/// The record a language model's run folder `out` was started with (its `config.json`: `model`,
/// `trainer`, `settings`, `verl`, …), or None.
///
/// Raises `floe.ConfigError` for a file that is not such a record.
#[pyfunction]
pub fn run_record<'py>(py: Python<'py>, out: String) -> PyResult<Bound<'py, PyAny>> {
    match floe_rounds::RunRecord::read(&RunFolder::new(out)).map_err(rounds_error)? {
        Some(r) => json_to_py(py, &r.to_value()),
        None => Ok(py.None().into_bound(py)),
    }
}

/// The run state of the run folder `out` (its `state.json`: rounds done, history, designs,
/// evaluations, …), or None.
///
/// Raises `floe.ConfigError` for a file that is not a run state.
#[pyfunction]
pub fn run_state<'py>(py: Python<'py>, out: String) -> PyResult<Bound<'py, PyAny>> {
    match RunFolder::new(out).read_state().map_err(rounds_error)? {
        Some(s) => json_to_py(py, &state_value(&s)),
        None => Ok(py.None().into_bound(py)),
    }
}
