//! The round protocol from Python: `drive_rounds` runs floe-rounds' driver (the one `floe train`
//! runs) over a trainee written in Python ([`crate::trainee`]), so that a language model in TRL
//! or verl gets the same stages, seeds, designs, validation count and run folder as floe's own
//! policy; and the seeds and defaults every trainee shares.

use std::path::{Component, PathBuf};

use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{EngineerReply, EnvEngineer, PluginError};
use floe_plugin_registry as registry;
use floe_rounds::design::Designers;
use floe_rounds::folder::Trainer;
use floe_rounds::settings::{EngineerChoice, OwnModel};
use floe_rounds::{RunRecord, RunState};
use pyo3::prelude::*;
use serde_json::{Map, Value};

use crate::convert::from_py;
use crate::convert::json_to_py;
use crate::errors::{bad_input, registry as registry_error, rounds as rounds_error};
use crate::rounds::Engineer;
use crate::settings::RunSettings;
use crate::trainee::{state_value, Lines, PyTrainee};

/// A Python engineer (`floe.Engineer`) as the driver's.
struct SharedEngineer(Py<Engineer>);

impl EnvEngineer for SharedEngineer {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        self.0.get().design_now(context, limits)
    }
}

/// `path` made absolute and normal, as Python's `os.path.abspath` makes it: the model a run
/// records.
pub(crate) fn absolute(path: &str) -> String {
    let p = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.display().to_string()
}

/// One run: its folder, what its `config.json` records (its settings among it), how it starts.
pub(crate) struct Run {
    pub(crate) out: PathBuf,
    /// What `config.json` records: the run's settings; its `rounds`, when given, are the ones run.
    pub(crate) record: RunRecord,
    pub(crate) resume: bool,
    pub(crate) overwrite: bool,
    /// Stop once this round is finished and saved.
    pub(crate) stop_after: Option<u32>,
}

/// The engineer a run's settings name when it is one of the trainee's own models: `self` asks
/// the trainee's `current_model()`, `base` its `base_model()` (each a model and its tokenizer),
/// through `floe.rounds.engineers.ModelEngineer` with the settings' sampling and constraint,
/// inside floe's language-model engineer (`Engineer.from_model`). None for any other.
fn model_engineer(
    py: Python<'_>,
    s: &floe_rounds::RunSettings,
    trainee: &Py<PyAny>,
) -> PyResult<Option<Py<Engineer>>> {
    let EngineerChoice::Model(own) = s.engineer_choice() else { return Ok(None) };
    let method = match own {
        OwnModel::Current => "current_model",
        OwnModel::Base => "base_model",
    };
    let source = trainee.bind(py).getattr(method)?;
    let options = pyo3::types::PyDict::new(py);
    options.set_item("max_tokens", s.engineer_max_tokens)?;
    options.set_item("temperature", s.engineer_temperature)?;
    options.set_item(
        "constraint",
        json_to_py(py, &serde_json::to_value(s.engineer_constraint).unwrap_or_default())?,
    )?;
    let model =
        py.import("floe.rounds.engineers")?.getattr("ModelEngineer")?.call((source,), Some(&options))?;
    let engineer = Engineer::from_model(model, s.engineer_retries, s.seed, own.name())?;
    Ok(Some(Py::new(py, engineer)?))
}

/// Runs `run` over `trainee` (its engineer `engineer` when given, else the one its settings
/// name), the driver's lines to `lines`; returns the final state.
pub(crate) fn drive(
    py: Python<'_>,
    trainee: &Py<PyAny>,
    run: Run,
    engineer: Option<Py<Engineer>>,
    lines: &Lines,
) -> PyResult<RunState> {
    if run.record.trainer == Some(Trainer::Verl) {
        crate::verl::check_verl(&run.record.settings, run.record.verl.as_ref().unwrap_or(&Map::new()))?;
    }
    // A given engineer designs even where the settings name none.
    let mut settings = run.record.settings.clone();
    if let Some(e) = &engineer {
        if settings.engineer_choice() == EngineerChoice::Fixed {
            settings =
                settings.with(serde_json::json!({"engineer": e.get().name()})).map_err(rounds_error)?;
        }
    }
    let engineer = match engineer {
        Some(e) => Some(e),
        None => model_engineer(py, &settings, trainee)?,
    };
    let protocol = settings.protocol(&run.record).map_err(rounds_error)?;
    let curriculum = protocol
        .rounds
        .curriculum
        .as_ref()
        .map(registry::curriculum_with_replays)
        .transpose()
        .map_err(registry_error)?;
    let engineer_raised = engineer.as_ref().and_then(|e| e.get().raised_slot());
    let engineer: Option<Box<dyn EnvEngineer>> = match (engineer, &protocol.rounds.engineer) {
        (Some(e), Some(_)) => Some(Box::new(SharedEngineer(e))),
        (Some(_), None) => return Err(bad_input("an engineer was given but rounds.engineer names none")),
        (None, Some(spec)) => Some(registry::engineer(spec).map_err(registry_error)?),
        (None, None) => None,
    };
    let designers = Designers {
        curriculum_replays: curriculum.as_ref().is_some_and(|(_, r)| *r),
        curriculum: curriculum.map(|(c, _)| c),
        engineer,
    };
    let mut t = PyTrainee { obj: trainee.clone_ref(py), engineer_raised };
    let opts = floe_rounds::RunOptions {
        resume: run.resume,
        overwrite: run.overwrite,
        stop_after: run.stop_after,
        ..floe_rounds::RunOptions::new(run.out)
    };
    let state = py.detach(|| floe_rounds::run(&mut t, &protocol, designers, &opts, lines));
    // An exception the engineer's model raised ends the run as the model's.
    t.check_engineer().map_err(rounds_error)?;
    state.map_err(rounds_error)
}

/// Runs `settings`' rounds (a `floe.rounds.RunSettings`) over `trainee` (see
/// `floe.rounds.Trainee`) into the run folder `out`: the same driver, seeds, designs and files as
/// `floe train`. The folder's `config.json` records the settings, and `model` (made absolute),
/// `trainer` (`"trl"`, `"verl"`) and `verl` (verl's overrides) when given; a resumed run must
/// record the same. A verl run's settings and overrides are checked first (no TRL arguments, no
/// key the driver sets, a positive `trainer.save_freq`, a batch of prompts a round).
///
/// The rounds after round 0 are designed by `engineer` (a `floe.Engineer`) when given, else by
/// the one the settings name (`self` and `base` ask the trainee's `current_model()` or
/// `base_model()` through `floe.rounds.ModelEngineer`; a URL is floe's `endpoint` engineer),
/// else by the curriculum. `resume` continues the run in `out`; `overwrite` starts anew in a
/// folder that holds a run (refused without it). `say` receives the driver's lines (standard
/// error without it).
///
/// Returns the final run state (a dict). Raises the trainee's own exceptions as they were
/// raised, `floe.ConfigError` for bad settings or a folder holding another run.
#[pyfunction]
#[pyo3(signature = (trainee, settings, out, *, model=None, trainer=None, verl=None, engineer=None, resume=false, overwrite=false, say=None))]
#[allow(clippy::too_many_arguments)]
pub fn drive_rounds<'py>(
    py: Python<'py>,
    trainee: Py<PyAny>,
    settings: &RunSettings,
    out: String,
    model: Option<String>,
    trainer: Option<String>,
    verl: Option<&Bound<'py, PyAny>>,
    engineer: Option<Py<Engineer>>,
    resume: bool,
    overwrite: bool,
    say: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let trainer = trainer.map(|t| t.parse::<Trainer>()).transpose().map_err(rounds_error)?;
    let verl: Option<Map<String, Value>> = verl.map(|v| from_py("verl", v)).transpose()?;
    let record = RunRecord {
        model: model.as_deref().map(absolute),
        trainer,
        verl,
        engineer: engineer.as_ref().map(|e| format!("given: {}", e.get().name())),
        ..RunRecord::of(settings.settings().clone())
    };
    let run = Run { out: out.into(), record, resume, overwrite, stop_after: None };
    let state = drive(py, &trainee, run, engineer, &Lines(say))?;
    json_to_py(py, &state_value(&state))
}

/// The seed of round `r`'s newly generated instances in a run seeded `seed` (floe train's and
/// every trainee's).
#[pyfunction]
pub fn round_seed(seed: u64, r: u32) -> u64 {
    floe_rounds::data::round_seed(seed, r)
}

/// The seed of the warm start's instances in a run seeded `seed` (every trainee's, `floe
/// train`'s too).
#[pyfunction]
pub fn warm_start_seed(seed: u64) -> u64 {
    floe_rounds::data::warm_start_seed(seed)
}

/// The seed a trainer of its own (TRL's `seed`, verl's `data.seed`) takes for a stage whose
/// data came from `data_seed`: its low 31 bits.
#[pyfunction]
pub fn trainer_seed(data_seed: u64) -> u64 {
    floe_rounds::data::trainer_seed(data_seed)
}

/// The reward a run of the round protocol gets when its settings name none (floe train's
/// too): `{"name", "params", "library"}`.
#[pyfunction]
pub fn default_reward<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &crate::settings::spec_value(&floe_rounds::RoundsConfig::default().reward))
}
