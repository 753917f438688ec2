//! Many answers at once: `verify_batch` and the reward plugins' scores, each one call into Rust
//! with the GIL released, the answers verified on all cores (as `floe_verify_answers` does).

use std::collections::HashMap;
use std::sync::Mutex;

use floe_plugin_api::traits::check_rewards;
use floe_plugin_api::{PluginSpec, RewardFn, VerdictRecord};
use floe_plugin_registry as registry;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use rayon::prelude::*;

use crate::convert::py_to_json;
use crate::errors::{bad_input, plugin};
use crate::instances::Instance;

/// One instance argument: an `Instance` (borrowed) or its JSON text (parsed off the GIL).
pub(crate) enum Source<'a> {
    Object(&'a floe_core::Instance),
    Json(String),
}

pub(crate) fn sources<'a>(items: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<Source<'a>>> {
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            if let Ok(inst) = item.cast::<Instance>() {
                Ok(Source::Object(&inst.get().inner))
            } else if let Ok(text) = item.cast::<PyString>() {
                Ok(Source::Json(text.extract::<String>()?))
            } else if item.is_instance_of::<PyDict>() {
                Ok(Source::Json(py_to_json(item)?))
            } else {
                Err(bad_input(format!("instances[{n}]: expected an Instance, its JSON text or a dict")))
            }
        })
        .collect()
}

/// The instances of a batch: those given as objects borrowed, those given as JSON parsed once per
/// distinct text (a GRPO batch repeats each prompt's instance once per completion), in parallel.
pub(crate) struct Resolved<'a> {
    parsed: Vec<floe_core::Instance>,
    refs: Vec<Ref<'a>>,
}

enum Ref<'a> {
    Object(&'a floe_core::Instance),
    Parsed(usize),
}

impl Resolved<'_> {
    pub(crate) fn len(&self) -> usize {
        self.refs.len()
    }

    pub(crate) fn get(&self, n: usize) -> &floe_core::Instance {
        match self.refs[n] {
            Ref::Object(i) => i,
            Ref::Parsed(k) => &self.parsed[k],
        }
    }
}

/// Resolves `sources` for `answers` answers; an unreadable instance is an error naming its
/// (first) index.
pub(crate) fn instances_of<'a>(sources: &'a [Source<'_>], answers: usize) -> Result<Resolved<'a>, String> {
    if sources.len() != answers {
        return Err(format!("{} instances but {answers} answers", sources.len()));
    }
    let mut distinct: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<(usize, &str)> = Vec::new();
    let refs = sources
        .iter()
        .enumerate()
        .map(|(n, s)| match s {
            Source::Object(i) => Ref::Object(i),
            Source::Json(t) => Ref::Parsed(*distinct.entry(t.as_str()).or_insert_with(|| {
                texts.push((n, t.as_str()));
                texts.len() - 1
            })),
        })
        .collect();
    let parsed = texts
        .par_iter()
        .map(|&(n, t)| floe_core::Instance::from_json(t).map_err(|e| format!("instances[{n}]: {e}")))
        .collect::<Result<_, _>>()?;
    Ok(Resolved { parsed, refs })
}

/// Verdict records of `answers[n]` against instance `n`, on every core: floe-rounds' reading
/// of written answers, the one every trainee's validation goes through.
fn records(sources: &[Source<'_>], answers: &[String]) -> Result<Vec<VerdictRecord>, String> {
    let insts = instances_of(sources, answers.len())?;
    let refs: Vec<&floe_core::Instance> = (0..insts.len()).map(|n| insts.get(n)).collect();
    let texts: Vec<&str> = answers.iter().map(String::as_str).collect();
    Ok(floe_rounds::verdicts::verify_texts(&refs, &texts))
}

/// As [`records`], with the instances (for counting them per cell).
pub(crate) fn records_of(
    sources: &[Source<'_>],
    answers: &[String],
) -> Result<(Vec<VerdictRecord>, Vec<floe_core::Instance>), String> {
    let recs = records(sources, answers)?;
    let insts = instances_of(sources, answers.len())?;
    Ok((recs, (0..insts.len()).map(|n| insts.get(n).clone()).collect()))
}

fn verdicts_of(
    py: Python<'_>,
    instances: &[Bound<'_, PyAny>],
    answers: Vec<String>,
) -> PyResult<Vec<VerdictRecord>> {
    let src = sources(instances)?;
    py.detach(|| records(&src, &answers)).map_err(bad_input)
}

/// Verifies `answers[n]` (free text in the paper's format) against `instances[n]` (an
/// `Instance`, its JSON text or dict), all in one call on all cores with the GIL released.
///
/// Returns a dict of numpy arrays, one entry per answer: `valid` (bool), `optimal` (bool),
/// `failure` (uint8, 0 valid else the failure kind's code), `num_agents`, `agents_on_goal`,
/// `legal_steps`, `horizon`, `soc`, `optimal_soc` (uint32; 4294967295 where unknown). These are
/// the records the reward plugins read.
#[pyfunction]
pub fn verify_batch<'py>(
    py: Python<'py>,
    instances: Vec<Bound<'py, PyAny>>,
    answers: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let recs = verdicts_of(py, &instances, answers)?;
    let out = PyDict::new(py);
    let col = |f: fn(&VerdictRecord) -> u32| recs.iter().map(f).collect::<Vec<u32>>();
    out.set_item("valid", PyArray1::from_vec(py, recs.iter().map(|r| r.failure == 0).collect()))?;
    out.set_item("optimal", PyArray1::from_vec(py, recs.iter().map(|r| r.optimal == 1).collect()))?;
    out.set_item("failure", PyArray1::from_vec(py, recs.iter().map(|r| r.failure).collect()))?;
    out.set_item("num_agents", PyArray1::from_vec(py, col(|r| r.num_agents)))?;
    out.set_item("agents_on_goal", PyArray1::from_vec(py, col(|r| r.agents_on_goal)))?;
    out.set_item("legal_steps", PyArray1::from_vec(py, col(|r| r.legal_steps)))?;
    out.set_item("horizon", PyArray1::from_vec(py, col(|r| r.horizon)))?;
    out.set_item("soc", PyArray1::from_vec(py, col(|r| r.soc)))?;
    out.set_item("optimal_soc", PyArray1::from_vec(py, col(|r| r.optimal_soc)))?;
    Ok(out)
}

/// A reward plugin that scores verified plans, as `floe train` resolves it: a built-in by name
/// (`tiered`, …) or a plugin in a library (`library` = the path of a Rust or C plugin library),
/// with its parameters (a dict or JSON text; None for the defaults).
///
/// Raises `floe.UnknownPlugin` (a `floe.ConfigError`) for a name the built-ins or the library do
/// not have, as C's `floe_plugin_new` returns FLOE_STATUS_UNKNOWN_PLUGIN; `floe.PluginFailed` for
/// a library that does not load (naming the path and reason); `floe.ConfigError` for bad
/// parameters or a reward that scores only engine steps.
#[pyclass(module = "floe._floe", frozen)]
pub struct Reward {
    name: String,
    library: Option<String>,
    // Calls on one plugin are serialised; the library stays loaded while the plugin lives.
    inner: Mutex<Box<dyn RewardFn>>,
}

impl std::fmt::Debug for Reward {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reward")
            .field("name", &self.name)
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

pub(crate) fn spec(
    name: &str,
    params: Option<&Bound<'_, PyAny>>,
    library: Option<String>,
) -> PyResult<PluginSpec> {
    let params = match params {
        None => serde_json::Value::Null,
        Some(p) => {
            let text = py_to_json(p)?;
            serde_json::from_str(&text).map_err(|e| bad_input(format!("params: {e}")))?
        }
    };
    Ok(PluginSpec { name: name.to_owned(), params, library: library.map(Into::into) })
}

#[pymethods]
impl Reward {
    #[new]
    #[pyo3(signature = (name="tiered", params=None, library=None))]
    fn new(name: &str, params: Option<&Bound<'_, PyAny>>, library: Option<String>) -> PyResult<Self> {
        let s = spec(name, params, library.clone())?;
        let inner = registry::plan_reward(&s).map_err(crate::errors::registry)?;
        Ok(Self { name: name.to_owned(), library, inner: Mutex::new(inner) })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[getter]
    fn library(&self) -> Option<&str> {
        self.library.as_deref()
    }

    /// One reward per answer: `answers[n]` verified against `instances[n]` (as `verify_batch`)
    /// and scored by the plugin, in one call with the GIL released. Returns float32 numpy.
    fn score<'py>(
        &self,
        py: Python<'py>,
        instances: Vec<Bound<'py, PyAny>>,
        answers: Vec<String>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let src = sources(&instances)?;
        let rewards = py.detach(|| -> PyResult<Vec<f32>> {
            let recs = records(&src, &answers).map_err(bad_input)?;
            let mut out = vec![0.0f32; recs.len()];
            let mut r =
                self.inner.lock().map_err(|_| bad_input("the reward plugin failed in an earlier call"))?;
            r.verdict_rewards(&recs, &mut out).map_err(plugin)?;
            check_rewards(&out).map_err(plugin)?;
            Ok(out)
        })?;
        Ok(PyArray1::from_vec(py, rewards))
    }

    fn __repr__(&self) -> String {
        match &self.library {
            Some(l) => format!("Reward({:?}, library={l:?})", self.name),
            None => format!("Reward({:?})", self.name),
        }
    }
}
