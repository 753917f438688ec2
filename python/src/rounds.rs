//! The call between rounds, from Python: a history (or an engineer's context) in, the next round's
//! configuration out, from a curriculum or an environment engineer (built in or from a library, resolved by the same
//! registry as `floe train`), and the next round's instances from that configuration.

use std::sync::Mutex;

use floe_plugin_api::{Curriculum as CurriculumFn, EnvEngineer, History, RoundConfig};
use floe_plugin_host::registry;
use pyo3::prelude::*;

use crate::batch::spec;
use crate::errors::{bad_input, config, failed, plugin, registry as registry_error};
use crate::instances::{json_to_py, py_to_json, Instance};

fn parse_history(value: &Bound<'_, PyAny>) -> PyResult<History> {
    History::from_json(&py_to_json(value)?).map_err(config)
}

fn config_value(c: &RoundConfig) -> serde_json::Value {
    serde_json::to_value(c).unwrap_or_default()
}

/// A curriculum plugin (`fixed`, `difficulty-scaling`, `plr`, `sec`, or one in a library):
/// `next_config(history)` gives the configuration of round `history.next_round()`.
#[pyclass(module = "floe._floe", frozen)]
pub struct Curriculum {
    name: String,
    inner: Mutex<Box<dyn CurriculumFn>>,
}

impl std::fmt::Debug for Curriculum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Curriculum").field("name", &self.name).finish_non_exhaustive()
    }
}

#[pymethods]
impl Curriculum {
    #[new]
    #[pyo3(signature = (name, params=None, library=None))]
    fn new(name: &str, params: Option<&Bound<'_, PyAny>>, library: Option<String>) -> PyResult<Self> {
        let inner = registry::curriculum(&spec(name, params, library)?).map_err(registry_error)?;
        Ok(Self { name: name.to_owned(), inner: Mutex::new(inner) })
    }

    /// The next round's configuration (a dict: `sizes`, `agents`, …) from the history of rounds
    /// (a dict or JSON text in floe's `History` form; `{"rounds": []}` before the first round).
    /// The configuration is validated before it is returned.
    fn next_config<'py>(&self, py: Python<'py>, history: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let h = parse_history(history)?;
        let c = py.detach(|| -> PyResult<RoundConfig> {
            let mut cur =
                self.inner.lock().map_err(|_| failed("the curriculum failed in an earlier call"))?;
            cur.next_config(&h).map_err(plugin)
        })?;
        c.validate().map_err(config)?;
        json_to_py(py, &config_value(&c))
    }

    fn __repr__(&self) -> String {
        format!("Curriculum({:?})", self.name)
    }
}

/// An environment engineer (`rules`, `endpoint`, or one in a library): `design(context)` answers
/// a context text (as `floe train` assembles it, or the engineer's own format) with the next
/// round's configuration.
#[pyclass(module = "floe._floe", frozen)]
pub struct Engineer {
    name: String,
    inner: Mutex<Box<dyn EnvEngineer>>,
}

impl std::fmt::Debug for Engineer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engineer").field("name", &self.name).finish_non_exhaustive()
    }
}

#[pymethods]
impl Engineer {
    #[new]
    #[pyo3(signature = (name, params=None, library=None))]
    fn new(name: &str, params: Option<&Bound<'_, PyAny>>, library: Option<String>) -> PyResult<Self> {
        let inner = registry::engineer(&spec(name, params, library)?).map_err(registry_error)?;
        Ok(Self { name: name.to_owned(), inner: Mutex::new(inner) })
    }

    /// The engineer's reply to `context`: `{"config", "rationale", "notes"}` (the configuration
    /// validated).
    fn design<'py>(&self, py: Python<'py>, context: String) -> PyResult<Bound<'py, PyAny>> {
        let reply = py.detach(|| {
            let mut e = self.inner.lock().map_err(|_| failed("the engineer failed in an earlier call"))?;
            e.design(&context).map_err(plugin)
        })?;
        reply.config.validate().map_err(config)?;
        json_to_py(
            py,
            &serde_json::json!({"config": config_value(&reply.config), "rationale": reply.rationale, "notes": reply.notes}),
        )
    }

    fn __repr__(&self) -> String {
        format!("Engineer({:?})", self.name)
    }
}

/// The instances of one round: `samples` prompts shared among the configuration's sizes and
/// agent counts as in training, generated with their optimal plans from `seed`.
#[pyfunction]
#[pyo3(signature = (config, samples, seed=0))]
pub fn round_instances(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    samples: usize,
    seed: u64,
) -> PyResult<Vec<Instance>> {
    if samples == 0 {
        return Err(bad_input("samples must be at least 1"));
    }
    let round = RoundConfig::from_json(&py_to_json(config)?).map_err(self::config)?;
    let made = py.detach(|| -> PyResult<Vec<floe_core::Instance>> {
        let mut all = Vec::new();
        for g in round.generator_configs(samples, seed) {
            all.extend(floe_core::generate(&g).map_err(|e| failed(e.to_string()))?);
        }
        Ok(all)
    })?;
    Ok(made.into_iter().map(|inner| Instance { inner }).collect())
}
