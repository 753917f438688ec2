//! A language-model run's settings as Python sees them: `floe.rounds.RunSettings`, which wraps
//! floe-rounds' [`floe_rounds::RunSettings`] (where the settings, their defaults and their checks
//! are written): built from keywords, a dict or a JSON file, each setting an attribute,
//! `replace(**changes)` for a changed copy.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};

use floe_core::text::write_answer;
use floe_rounds::data::{trainer_seed, warm_start_data, warm_start_seed};

use crate::convert::from_py;
use crate::convert::json_to_py;
use crate::errors::{config_text, failed};
use crate::instances::Instance;

/// A language-model run's settings (floe-rounds' `RunSettings`): every setting an attribute.
///
/// Raises `floe.ConfigError` naming the bad setting.
#[pyclass(module = "floe._floe", name = "RunSettings", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    s: floe_rounds::RunSettings,
    /// The settings as one JSON object, written once (the settings never change): what each
    /// attribute read, `to_dict` and `repr` give.
    value: Value,
}

impl RunSettings {
    /// The settings, read.
    pub(crate) fn settings(&self) -> &floe_rounds::RunSettings {
        &self.s
    }

    /// Wraps checked settings.
    pub(crate) fn of(s: floe_rounds::RunSettings) -> Self {
        let value = s.to_value();
        Self { s, value }
    }

    /// Settings from a JSON object, checked.
    pub(crate) fn from_json(v: Value) -> PyResult<Self> {
        Ok(Self::of(floe_rounds::RunSettings::from_value(v).map_err(crate::errors::rounds)?))
    }

    /// A copy with the settings of the JSON object `changes` changed, checked again.
    pub(crate) fn with(&self, changes: Value) -> PyResult<Self> {
        Ok(Self::of(self.s.with(changes).map_err(crate::errors::rounds)?))
    }
}

fn dict_value(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Value> {
    kwargs.map_or(Ok(json!({})), |k| from_py("settings", k.as_any()))
}

#[pymethods]
impl RunSettings {
    #[new]
    #[pyo3(signature = (**settings))]
    fn new(settings: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Self::from_json(dict_value(settings)?)
    }

    /// Settings from a dict (or JSON text).
    #[staticmethod]
    fn from_dict(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::from_json(from_py("settings", data)?)
    }

    /// Settings from a JSON file.
    #[staticmethod]
    pub(crate) fn from_file(path: &str) -> PyResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| config_text(format!("{path}: {e}")))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| config_text(format!("{path}: {e}")))?;
        let s = floe_rounds::RunSettings::from_value(v).map_err(|e| config_text(format!("{path}: {e}")))?;
        Ok(Self::of(s))
    }

    /// The settings as JSON-ready data, every setting present (the run folder's `config.json`
    /// records them).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.value)
    }

    /// A copy with the given settings changed, checked again.
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        self.with(dict_value(changes)?)
    }

    /// The run's reward as a plugin spec (`name`, `params`, `library`).
    fn reward_spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &spec_value(&self.s.reward_spec()))
    }

    /// The warm start's data, as every trainee's are drawn (`floe train`'s too,
    /// `floe_rounds::data::warm_start_data`): `warm_start.samples` instances of its `config`
    /// (else `round0`, else floe's round-0 default within the design limits) from the run's
    /// seed, each with its optimal plan written in the form `warm_start.answer` names. Returns
    /// `(trainer seed, [(instance, plan), ...])`, the seed the supervised trainer takes; no pairs
    /// without a warm start.
    fn warm_start_data(&self, py: Python<'_>) -> PyResult<(u64, Vec<(Instance, String)>)> {
        let seed = self.s.seed;
        let trainer = trainer_seed(warm_start_seed(seed));
        let Some((w, config)) = self.s.warm_start_config().map_err(crate::errors::rounds)? else {
            return Ok((trainer, Vec::new()));
        };
        let form = w.form().map_err(crate::errors::rounds)?;
        let samples = w.samples;
        let rows = py
            .detach(|| -> Result<Vec<(floe_core::Instance, String)>, String> {
                let data = warm_start_data(&config, samples, seed, &floe_core::progress::Silent)
                    .map_err(|e| e.to_string())?;
                data.into_iter()
                    .map(|inst| {
                        let moves = optimal_moves(&inst)?;
                        let text = write_answer(&inst, &moves, form)?;
                        Ok((inst, text))
                    })
                    .collect()
            })
            .map_err(failed)?;
        Ok((trainer, rows.into_iter().map(|(inner, text)| (Instance { inner }, text)).collect()))
    }

    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.value.get(name) {
            Some(v) => json_to_py(py, v),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "RunSettings has no setting {name:?}"
            ))),
        }
    }

    fn __repr__(&self) -> String {
        format!("RunSettings({})", self.value)
    }
}

/// A plugin spec as Python reads it: `{"name", "params", "library"}`, every key present.
pub(crate) fn spec_value(spec: &floe_plugin_api::PluginSpec) -> Value {
    json!({"name": spec.name, "params": spec.params, "library": spec.library})
}

/// The moves of a generated instance's optimal plan.
fn optimal_moves(inst: &floe_core::Instance) -> Result<Vec<Vec<floe_core::Move>>, String> {
    let plan = inst.optimal.as_ref().ok_or("a warm-start instance without its optimal plan")?;
    plan.moves
        .iter()
        .map(|m| {
            floe_core::moves::parse_moves(m).map_err(|(i, c)| format!("optimal plan: bad move {c:?} at {i}"))
        })
        .collect()
}
