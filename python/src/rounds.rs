//! The call between rounds, from Python: a history (or an engineer's context) in, the next round's
//! configuration out, from a curriculum or an environment engineer (built in or from a library,
//! resolved by the same registry as `floe train`), and the next round's instances from that
//! configuration.
//!
//! An engineer's context is assembled from the history by floe-rounds'
//! [`ContextOptions::assemble`] and its configuration clamped by [`DesignLimits::clamp`], the
//! calls `floe train` makes between rounds, with the trainer's defaults.

use std::sync::{Arc, Mutex};

use floe_llm::{Complete, Completion, LlmEngineer, NoReply, Request};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{Curriculum as CurriculumFn, EnvEngineer, History, RoundConfig};
use floe_plugin_registry as registry;
use floe_rounds::context::{ContextInput, ContextOptions};
use floe_rounds::design::{default_round0, run_limits, Asked};
use pyo3::prelude::*;

use crate::batch::spec;
use crate::convert::{from_py, json_to_py, py_to_json};
use crate::errors::{bad_input, config, failed, plugin, registry as registry_error};
use crate::instances::Instance;

fn parse_history(value: &Bound<'_, PyAny>) -> PyResult<History> {
    History::from_json(&py_to_json(value)?).map_err(config)
}

fn config_value(c: &RoundConfig) -> serde_json::Value {
    serde_json::to_value(c).unwrap_or_default()
}

/// A curriculum plugin (`fixed`, `difficulty-scaling`, `plr`, `sec`, `frontier`, `schedule`, or one in a library):
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

/// A Python callable as a language model of floe-llm's [`LlmEngineer`]: it is called with the
/// request as a dict (`system`, `user`, `schema`, `grammar`, `seed`) and returns a reply text
/// or a list of them (proposals). An exception it raises is kept, ends the engineer's attempts,
/// and is raised again to the caller once the engineer returns: a failing model is an error of
/// the caller's, not an unusable reply.
struct PyModel {
    complete: Py<PyAny>,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Complete for PyModel {
    fn complete(&mut self, request: &Request) -> Result<Completion, NoReply> {
        let asked = Python::attach(|py| -> PyResult<Vec<String>> {
            let arg = json_to_py(
                py,
                &serde_json::json!({
                    "system": request.system, "user": request.user, "schema": request.schema,
                    "grammar": request.grammar, "seed": request.seed,
                }),
            )?;
            let out = self.complete.bind(py).call1((arg,))?;
            match out.extract::<String>() {
                Ok(text) => Ok(vec![text]),
                Err(_) => Ok(out.extract::<Vec<String>>()?),
            }
        });
        match asked {
            Ok(replies) => Ok(Completion { replies, notes: Vec::new() }),
            Err(e) => {
                let message = format!("the model raised {e}");
                if let Ok(mut slot) = self.raised.lock() {
                    *slot = Some(e);
                }
                Err(NoReply::last(message))
            }
        }
    }
}

/// An environment engineer (`rules`, `endpoint`, one in a library, or a Python model through
/// `Engineer.from_model`): `design(context)` answers a context text (as `floe train` assembles
/// it, or the engineer's own format) with the next round's configuration.
#[pyclass(module = "floe._floe", frozen)]
pub struct Engineer {
    /// The engineer as a plugin spec (its parameters left out): what the context is assembled
    /// for ([`ContextOptions::for_engineer`]).
    spec: floe_plugin_api::PluginSpec,
    inner: Mutex<Box<dyn EnvEngineer>>,
    /// A Python model's exception, raised again after the engineer returns.
    raised: Option<Arc<Mutex<Option<PyErr>>>>,
}

impl Engineer {
    /// The reply to `context` within `limits`, as the round driver asks it: an exception the
    /// Python model raised stays in its slot (see [`Engineer::raised_slot`]) and ends this
    /// reply.
    pub(crate) fn design_now(
        &self,
        context: &str,
        limits: &DesignLimits,
    ) -> Result<floe_plugin_api::EngineerReply, floe_plugin_api::PluginError> {
        let mut e = self.inner.lock().map_err(|_| {
            floe_plugin_api::PluginError::Failed("the engineer failed in an earlier call".into())
        })?;
        e.design(context, limits)
    }

    /// Where a Python model's exception waits to be raised again, for an engineer on a Python
    /// model.
    pub(crate) fn raised_slot(&self) -> Option<Arc<Mutex<Option<PyErr>>>> {
        self.raised.clone()
    }

    /// The exception a Python model raised during the last call, if any.
    fn reraise(&self) -> PyResult<()> {
        match self.raised.as_ref().and_then(|r| r.lock().ok()?.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for Engineer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engineer").field("name", &self.spec.name).finish_non_exhaustive()
    }
}

#[pymethods]
impl Engineer {
    #[new]
    #[pyo3(signature = (name, params=None, library=None))]
    fn new(name: &str, params: Option<&Bound<'_, PyAny>>, library: Option<String>) -> PyResult<Self> {
        let given = spec(name, params, library)?;
        let inner = registry::engineer(&given).map_err(registry_error)?;
        let spec = floe_plugin_api::PluginSpec { params: serde_json::Value::Null, ..given };
        Ok(Self { spec, inner: Mutex::new(inner), raised: None })
    }

    /// A language-model engineer on a Python model, with floe's own engineer around it (as the
    /// `embedded` and `endpoint` engineers): `complete(request)` is called with a dict of
    /// `system` and `user` (the chat messages: the user's is the context), `schema` (the reply's
    /// JSON schema, derived from the configuration type and the design limits written in the
    /// context), `grammar` (the same as a GBNF grammar) and `seed` (from `seed`, the context and
    /// the attempt), and returns the reply text, or a list of texts (proposals: the one needing
    /// the fewest corrections is kept). Each reply is read strictly and clamped into the limits;
    /// an unusable one is asked again, `retries` more times, before the engineer gives up (and
    /// `next_config` keeps the previous configuration). An exception raised by `complete` stops
    /// the attempts and is raised from `design` or `next_config`.
    #[staticmethod]
    #[pyo3(signature = (complete, *, retries=2, seed=0, name="model"))]
    pub(crate) fn from_model(
        complete: Bound<'_, PyAny>,
        retries: u32,
        seed: u64,
        name: &str,
    ) -> PyResult<Self> {
        if !complete.is_callable() {
            return Err(bad_input("Engineer.from_model: complete must be callable"));
        }
        let raised = Arc::new(Mutex::new(None));
        let model = PyModel { complete: complete.unbind(), raised: Arc::clone(&raised) };
        Ok(Self {
            spec: floe_plugin_api::PluginSpec::builtin(name),
            inner: Mutex::new(Box::new(LlmEngineer::new(model, retries, seed))),
            raised: Some(raised),
        })
    }

    #[getter]
    pub(crate) fn name(&self) -> &str {
        &self.spec.name
    }

    /// The engineer's reply to `context`, designed within `limits` (a dict of
    /// `rounds.design_limits`, the engineer's to read as a value; floe's defaults when not
    /// given): `{"config", "rationale", "notes", "replies"}` (the configuration validated;
    /// `replies`: a language-model engineer's raw replies in order). Nothing is clamped here:
    /// `next_config` does that, as `floe train` does.
    ///
    /// Raises `floe.ConfigError` for bad limits.
    #[pyo3(signature = (context, *, limits=None))]
    fn design<'py>(
        &self,
        py: Python<'py>,
        context: String,
        limits: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limits = read_limits(limits, true)?;
        let reply = py.detach(|| {
            let mut e = self.inner.lock().map_err(|_| failed("the engineer failed in an earlier call"))?;
            Ok::<_, PyErr>(e.design(&context, &limits))
        })?;
        self.reraise()?;
        let reply = reply.map_err(plugin)?;
        reply.config.validate().map_err(config)?;
        json_to_py(
            py,
            &serde_json::json!({
                "config": config_value(&reply.config), "rationale": reply.rationale,
                "notes": reply.notes, "replies": reply.raw,
            }),
        )
    }

    /// The next round's configuration from the history of rounds, as `floe train` gets it from
    /// an engineer: the context assembled from the history (see `engineer_context`, same
    /// arguments), the engineer asked, its configuration clamped into the design limits; an
    /// unusable reply leaves the last round's configuration standing.
    ///
    /// Returns `{"config", "source", "rationale", "notes", "context", "limits", "reply",
    /// "replies"}`: `source` is `"engineer"` or `"previous"`, `notes` say what was clamped or
    /// why the previous configuration stood, `context` is the text the engineer read and
    /// `limits` the design limits it was given (as `floe train` files them in `context.md` and
    /// `limits.json`), `reply` its raw reply as `floe train` files it in `reply.txt` and
    /// `replies` a language-model engineer's raw replies, one an item, as it files them in
    /// `reply-1.txt`, ….
    ///
    /// Raises `floe.BadInput` for an empty history (round 0 is not the engineer's), and
    /// `floe.ConfigError` for a bad history, limits or context options.
    #[pyo3(signature = (history, *, rounds=3, epochs=2, samples=1536, previous_rationale=None, hyperparameters=None, limits=None, context=None, replay=false))]
    #[allow(clippy::too_many_arguments)]
    fn next_config<'py>(
        &self,
        py: Python<'py>,
        history: &Bound<'py, PyAny>,
        rounds: u32,
        epochs: u32,
        samples: usize,
        previous_rationale: Option<String>,
        hyperparameters: Option<&Bound<'py, PyAny>>,
        limits: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
        replay: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = DesignArgs::read(
            history,
            rounds,
            epochs,
            samples,
            previous_rationale,
            hyperparameters,
            limits,
            context,
            replay,
            Some(self),
        )?;
        let previous = a.history.last().map(|l| l.config.clone()).ok_or_else(|| {
            bad_input("the history has no finished round for the engineer to read (round 0's configuration is the curriculum's or the default)")
        })?;
        let text = a.context_text()?;
        let r = a.history.next_round();
        let asked = py.detach(|| {
            let mut e = self.inner.lock().map_err(|_| failed("the engineer failed in an earlier call"))?;
            Ok::<_, PyErr>(floe_rounds::design::ask_engineer(e.as_mut(), r, &text, &a.limits, previous))
        })?;
        self.reraise()?;
        let Asked { config: c, design, adopted } = asked;
        c.validate().map_err(config)?;
        json_to_py(
            py,
            &serde_json::json!({
                "config": config_value(&c), "source": design.source, "rationale": design.rationale,
                "notes": design.notes, "context": text, "limits": a.limits,
                "reply": adopted.raw.unwrap_or_default(), "replies": adopted.replies,
            }),
        )
    }

    fn __repr__(&self) -> String {
        format!("Engineer({:?})", self.spec.name)
    }
}

/// The design limits of a dict of `rounds.design_limits` (floe's defaults for `None`) as a run
/// applies them ([`run_limits`]: without `replay`, as in a run with nothing to choose instances to
/// replay, `max_replay_fraction` is 0), validated.
fn read_limits(limits: Option<&Bound<'_, PyAny>>, replay: bool) -> PyResult<DesignLimits> {
    let l = match limits {
        Some(l) => from_py("limits", l)?,
        None => DesignLimits::default(),
    };
    let l = run_limits(&l, replay);
    l.validate().map_err(config)?;
    Ok(l)
}

/// What `floe train` knows when it assembles an engineer's context, read from Python.
struct DesignArgs {
    history: History,
    rounds: u32,
    epochs: u32,
    samples: usize,
    previous_rationale: Option<String>,
    hyperparameters: serde_json::Value,
    limits: DesignLimits,
    options: ContextOptions,
}

impl DesignArgs {
    #[allow(clippy::too_many_arguments)]
    fn read(
        history: &Bound<'_, PyAny>,
        rounds: u32,
        epochs: u32,
        samples: usize,
        previous_rationale: Option<String>,
        hyperparameters: Option<&Bound<'_, PyAny>>,
        limits: Option<&Bound<'_, PyAny>>,
        context: Option<&Bound<'_, PyAny>>,
        replay: bool,
        engineer: Option<&Engineer>,
    ) -> PyResult<Self> {
        let history = parse_history(history)?;
        let hyperparameters = match hyperparameters {
            Some(h) => from_py("hyperparameters", h)?,
            None => serde_json::Value::Null,
        };
        let limits = read_limits(limits, replay)?;
        let given: Option<ContextOptions> = context.map(|c| from_py("context", c)).transpose()?;
        let options = match engineer {
            Some(e) => ContextOptions::for_engineer(given, &e.spec).map_err(config)?,
            None => given.unwrap_or_default(),
        };
        options.validate().map_err(config)?;
        Ok(Self { history, rounds, epochs, samples, previous_rationale, hyperparameters, limits, options })
    }

    fn context_text(&self) -> PyResult<String> {
        let input = ContextInput {
            history: &self.history,
            round: self.history.next_round(),
            rounds: self.rounds,
            epochs: self.epochs,
            samples: self.samples,
            previous_rationale: self.previous_rationale.as_deref(),
            hyperparameters: self.hyperparameters.clone(),
            limits: &self.limits,
        };
        self.options.assemble(&input).map_err(config)
    }
}

/// The context `floe train` gives an environment engineer before the round after `history`:
/// the modules F, G, H, S, T of `context` (a dict of the training configuration's
/// `rounds.context`: `preset`, `training_details`, `guidelines`, `template`, `history_json`;
/// the defaults when None), with `rounds`, `epochs` and `samples` of the run (module T),
/// `previous_rationale` (module S), `hyperparameters` (T in `full` detail) and `limits` (a dict
/// of `rounds.design_limits`; `max_replay_fraction` is 0 unless `replay`, as in a run with no
/// curriculum to choose replayed instances).
///
/// Raises `floe.ConfigError` for a bad history, limits or options, or an unreadable file.
#[pyfunction]
#[pyo3(signature = (history, *, rounds=3, epochs=2, samples=1536, previous_rationale=None, hyperparameters=None, limits=None, context=None, replay=false))]
#[allow(clippy::too_many_arguments)]
pub fn engineer_context(
    history: &Bound<'_, PyAny>,
    rounds: u32,
    epochs: u32,
    samples: usize,
    previous_rationale: Option<String>,
    hyperparameters: Option<&Bound<'_, PyAny>>,
    limits: Option<&Bound<'_, PyAny>>,
    context: Option<&Bound<'_, PyAny>>,
    replay: bool,
) -> PyResult<String> {
    DesignArgs::read(
        history,
        rounds,
        epochs,
        samples,
        previous_rationale,
        hyperparameters,
        limits,
        context,
        replay,
        None,
    )?
    .context_text()
}

/// Round 0's configuration when no curriculum or given configuration chooses it, as `floe
/// train` makes it for an engineer alone: floe's round-0 default (sizes 3 to 10, 2 agents, hole
/// ratio 0.2, wait ratio 0.5, equal shares) clamped into `limits` (a dict of
/// `rounds.design_limits`; `max_replay_fraction` 0 unless `replay`). Returns `(config, notes)`,
/// the notes saying what was clamped.
///
/// Raises `floe.ConfigError` for bad limits or a default that cannot be made to fit them.
#[pyfunction]
#[pyo3(signature = (*, limits=None, replay=false))]
pub fn round0_config<'py>(
    py: Python<'py>,
    limits: Option<&Bound<'py, PyAny>>,
    replay: bool,
) -> PyResult<(Bound<'py, PyAny>, Vec<String>)> {
    let (c, notes) = default_round0(&read_limits(limits, replay)?).map_err(crate::errors::rounds)?;
    Ok((json_to_py(py, &config_value(&c))?, notes))
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
