//! The round protocol from Python: `drive_rounds` runs floe-rounds' driver (the one `floe train`
//! runs) over a trainee written in Python, so that a language model in TRL or verl gets the same
//! stages, seeds, designs, validation count and run folder as floe's own policy.
//!
//! A Python trainee is any object with these methods (the driver calls them with the GIL held,
//! and holds no lock of its own meanwhile):
//!
//! | method | what |
//! |---|---|
//! | `describe() -> str` | one line on what is trained |
//! | `restore(folder, saved) -> dict or None` | a resumed run: load the model saved after `saved`'s last stage (`saved`: the run state of `state.json`, or None) and return the state to continue from (`saved`), or None to start anew |
//! | `warm_start() -> dict or None` | the supervised warm start, when it has one: `{"steps": [...], "train_s": s}`; the driver then validates it as the stage `warm start` |
//! | `train(round) -> dict` | one round: `round` is `{"round", "config", "instances", "replayed", "seed", "trainer_seed", "grpo_steps"}` (the data's seed, the seed its trainer takes, the steps taken before); returns `{"samples": [[index, reward, valid], ...], "steps": [...], "grpo_steps": n, "train_s": s, "abs_advantage": {size: [sum, n]}, "figures": {...}}`, every key optional |
//! | `answer(instances) -> list[str]` | greedy answers in the paper's format |
//! | `save(stage, folder, state)` | saves the model after `stage` (`"untrained"`, `"warm start"`, `"round 2"`) |
//! | `details() -> dict` | what the engineer's module T reports of the trainee (`full` detail) |

use std::sync::{Arc, Mutex};

use floe_core::progress::Progress;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{EngineerReply, EnvEngineer, PluginError};
use floe_plugin_registry as registry;
use floe_rounds::design::Designers;
use floe_rounds::{
    Answer, Protocol, RoundData, RoundsError, RunFolder, RunState, Session, Stage, Trained, Trainee,
};
use pyo3::prelude::*;

use crate::errors::{bad_input, config_text, failed, registry as registry_error};
use crate::instances::{json_to_py, py_to_json, Instance};
use crate::rounds::{from_py, Engineer};
use crate::settings::RoundsConfig;

/// A Python exception inside the driver, kept whole to be raised again.
#[derive(Debug)]
struct Raised(PyErr);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for Raised {}

fn raised(e: PyErr) -> RoundsError {
    RoundsError::Trainee(Box::new(Raised(e)))
}

/// The driver's error as a Python exception: a trainee's own exception as it was raised.
pub(crate) fn to_py(e: RoundsError) -> PyErr {
    match e {
        RoundsError::Trainee(inner) => match inner.downcast::<Raised>() {
            Ok(r) => r.0,
            Err(other) => failed(other.to_string()),
        },
        RoundsError::Input(m) => config_text(m),
        RoundsError::Config(e) => crate::errors::config(e),
        RoundsError::Plugin(e) => crate::errors::plugin(e),
        other => failed(other.to_string()),
    }
}

fn to_json(value: &Bound<'_, PyAny>) -> Result<serde_json::Value, RoundsError> {
    let text = py_to_json(value).map_err(raised)?;
    serde_json::from_str(&text)
        .map_err(|e| RoundsError::Input(format!("the trainee returned {text:.80}: {e}")))
}

/// A Python object as the driver's trainee.
struct PyTrainee {
    obj: Py<PyAny>,
    /// An exception a Python engineer's model raised: the run stops at the next call.
    engineer_raised: Option<Arc<Mutex<Option<PyErr>>>>,
}

impl PyTrainee {
    fn call(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
    ) -> Result<serde_json::Value, RoundsError> {
        Python::attach(|py| {
            let args = args(py).map_err(raised)?;
            let out = self
                .obj
                .bind(py)
                .call_method1(method, pyo3::types::PyTuple::new(py, args).map_err(raised)?)
                .map_err(raised)?;
            to_json(&out)
        })
    }

    fn check_engineer(&self) -> Result<(), RoundsError> {
        match self.engineer_raised.as_ref().and_then(|r| r.lock().ok()?.take()) {
            Some(e) => Err(raised(e)),
            None => Ok(()),
        }
    }
}

fn state_value(state: &RunState) -> serde_json::Value {
    serde_json::to_value(state).unwrap_or_default()
}

impl Trainee for PyTrainee {
    fn describe(&self) -> String {
        Python::attach(|py| {
            self.obj
                .bind(py)
                .call_method0("describe")
                .and_then(|d| d.extract::<String>())
                .unwrap_or_else(|_| "a trainee written in Python".into())
        })
    }

    fn restore(
        &mut self,
        folder: &RunFolder,
        saved: Option<RunState>,
    ) -> Result<Option<RunState>, RoundsError> {
        let root = folder.root().display().to_string();
        let saved = saved.as_ref().map(state_value);
        let out = self.call("restore", |py| {
            let saved = match &saved {
                Some(s) => json_to_py(py, s)?,
                None => py.None().into_bound(py),
            };
            Ok(vec![root.into_pyobject(py)?.into_any(), saved])
        })?;
        if out.is_null() {
            return Ok(None);
        }
        serde_json::from_value(out)
            .map(Some)
            .map_err(|e| RoundsError::Input(format!("restore: not a run state: {e}")))
    }

    fn warm_start(&mut self, session: &mut Session<'_>) -> Result<bool, RoundsError> {
        let out = self.call("warm_start", |_| Ok(vec![]))?;
        if out.is_null() {
            return Ok(false);
        }
        record_steps(session, &out)?;
        Ok(true)
    }

    fn train(&mut self, round: &RoundData<'_>, session: &mut Session<'_>) -> Result<Trained, RoundsError> {
        self.check_engineer()?;
        let arg = serde_json::json!({
            "round": round.round, "config": round.config, "replayed": round.replayed,
            "seed": round.seed, "trainer_seed": round.trainer_seed(),
            "grpo_steps": session.state.grpo_steps,
        });
        let instances: Vec<Instance> =
            round.instances.iter().map(|i| Instance { inner: i.clone() }).collect();
        let out = self.call("train", |py| {
            let d = json_to_py(py, &arg)?;
            d.set_item("instances", instances)?;
            Ok(vec![d])
        })?;
        record_steps(session, &out)?;
        if let Some(n) = out.get("grpo_steps").and_then(serde_json::Value::as_u64) {
            session.state.grpo_steps += n;
        }
        let bad = |m: &str| RoundsError::Input(format!("train: {m}"));
        let mut trained = Trained::default();
        for s in out.get("samples").and_then(|s| s.as_array()).into_iter().flatten() {
            let (i, r, v) = (
                s.get(0).and_then(serde_json::Value::as_u64),
                s.get(1).and_then(serde_json::Value::as_f64),
                s.get(2).and_then(serde_json::Value::as_bool),
            );
            match (i, r, v) {
                (Some(i), Some(r), Some(v)) if (i as usize) < round.instances.len() => {
                    trained.samples.push((i as u32, r as f32, v));
                }
                _ => return Err(bad(&format!("a sample {s} is not [index, reward, valid]"))),
            }
        }
        for (size, pair) in out.get("abs_advantage").and_then(|a| a.as_object()).into_iter().flatten() {
            let size: u32 = size.parse().map_err(|_| bad("abs_advantage is keyed by map size"))?;
            let (sum, n) = (
                pair.get(0).and_then(serde_json::Value::as_f64),
                pair.get(1).and_then(serde_json::Value::as_u64),
            );
            match (sum, n) {
                (Some(sum), Some(n)) => {
                    trained.abs_advantage.insert(size, (sum, n as u32));
                }
                _ => return Err(bad("abs_advantage's values are [sum, count]")),
            }
        }
        if let Some(f) = out.get("figures").and_then(|f| f.as_object()) {
            trained.figures = f.clone();
        }
        Ok(trained)
    }

    fn answer(
        &mut self,
        instances: &[floe_core::Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<Answer>, RoundsError> {
        answers(&self.obj, instances.iter(), progress)
    }

    fn save(&mut self, stage: Stage, folder: &RunFolder, state: &RunState) -> Result<(), RoundsError> {
        let (stage, root, state) =
            (stage.to_string(), folder.root().display().to_string(), state_value(state));
        self.call("save", |py| {
            Ok(vec![
                stage.into_pyobject(py)?.into_any(),
                root.into_pyobject(py)?.into_any(),
                json_to_py(py, &state)?,
            ])
        })?;
        Ok(())
    }

    fn details(&self) -> serde_json::Value {
        Python::attach(|py| {
            self.obj.bind(py).call_method0("details").ok().and_then(|d| to_json(&d).ok()).unwrap_or_default()
        })
    }
}

/// A Python trainee's `answer(instances)`: one text per instance, each an [`Answer::Text`].
fn answers<'a>(
    trainee: &Py<PyAny>,
    instances: impl ExactSizeIterator<Item = &'a floe_core::Instance>,
    progress: &dyn Progress,
) -> Result<Vec<Answer>, RoundsError> {
    let n = instances.len();
    let wrapped: Vec<Instance> = instances.map(|i| Instance { inner: i.clone() }).collect();
    let texts: Vec<String> = Python::attach(|py| {
        let out = trainee.bind(py).call_method1("answer", (wrapped,)).map_err(raised)?;
        out.extract::<Vec<String>>().map_err(|e| RoundsError::Input(format!("answer: a list of texts: {e}")))
    })?;
    if texts.len() != n {
        return Err(RoundsError::Input(format!("answer: {} texts for {n} instances", texts.len())));
    }
    progress.advance(n as u64, "");
    Ok(texts.into_iter().map(Answer::Text).collect())
}

/// Steps and training time a trainee reports: `steps` to `steps.jsonl`, `train_s` counted.
fn record_steps(session: &mut Session<'_>, out: &serde_json::Value) -> Result<(), RoundsError> {
    for line in out.get("steps").and_then(|s| s.as_array()).into_iter().flatten() {
        session.step_line(line)?;
    }
    if let Some(s) = out.get("train_s").and_then(serde_json::Value::as_f64) {
        session.add_training(s);
    }
    Ok(())
}

/// A Python engineer (`floe.Engineer`) as the driver's.
struct SharedEngineer(Py<Engineer>);

impl EnvEngineer for SharedEngineer {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        self.0.get().design_now(context, limits)
    }
}

/// The driver's lines to a Python callable (`say`), one per stage and per line.
struct Say(Option<Py<PyAny>>);

impl Say {
    fn say(&self, text: &str) {
        Python::attach(|py| match &self.0 {
            Some(f) => {
                if let Err(e) = f.bind(py).call1((text,)) {
                    e.print(py);
                }
            }
            None => eprintln!("{text}"),
        });
    }
}

impl Progress for Say {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn end(&self, summary: &str) {
        self.say(summary);
    }
    fn line(&self, text: &str) {
        self.say(text);
    }
}

/// Runs `config`'s rounds (a `floe.rounds.RoundsConfig`) over `trainee` (see the module's table
/// of its methods) into the run folder `out`: the same driver, seeds, designs and files as `floe
/// train`. `settings` is what the folder's `config.json` records (a resumed run must give the
/// same).
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
#[pyo3(signature = (trainee, config, out, settings=None, *, engineer=None, resume=false, overwrite=false, say=None))]
#[allow(clippy::too_many_arguments)]
pub fn drive_rounds<'py>(
    py: Python<'py>,
    trainee: Py<PyAny>,
    config: &RoundsConfig,
    out: String,
    settings: Option<&Bound<'py, PyAny>>,
    engineer: Option<Py<Engineer>>,
    resume: bool,
    overwrite: bool,
    say: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let settings = settings.map_or(Ok(serde_json::Value::Null), |s| from_py("settings", s))?;
    let run = Run { config, out, settings, resume, overwrite };
    let state = drive(py, &trainee, run, engineer, &Say(say))?;
    json_to_py(py, &state_value(&state))
}

/// One run of [`drive`]: its settings, its folder and what `config.json` records.
struct Run<'a> {
    config: &'a RoundsConfig,
    out: String,
    settings: serde_json::Value,
    resume: bool,
    overwrite: bool,
}

/// The engineer a run's settings name when it is one of the trainee's own models: `self` asks
/// the trainee's `current_model()`, `base` its `base_model()` (each a model and its tokenizer),
/// through `floe.rounds.engineers.ModelEngineer` with the settings' sampling and constraint,
/// inside floe's language-model engineer (`Engineer.from_model`). None for any other.
fn model_engineer(
    py: Python<'_>,
    config: &RoundsConfig,
    trainee: &Py<PyAny>,
) -> PyResult<Option<Py<Engineer>>> {
    if !config.model_engineer() {
        return Ok(None);
    }
    let s = config.settings();
    let source =
        trainee.bind(py).getattr(if s.engineer == "self" { "current_model" } else { "base_model" })?;
    let options = pyo3::types::PyDict::new(py);
    options.set_item("max_tokens", s.engineer_max_tokens)?;
    options.set_item("temperature", s.engineer_temperature)?;
    options.set_item("constraint", &s.engineer_constraint)?;
    let model =
        py.import("floe.rounds.engineers")?.getattr("ModelEngineer")?.call((source,), Some(&options))?;
    let engineer = Engineer::from_model(model, s.engineer_retries, s.seed, &s.engineer)?;
    Ok(Some(Py::new(py, engineer)?))
}

/// [`drive_rounds`]' run, its state as the driver returns it.
fn drive(
    py: Python<'_>,
    trainee: &Py<PyAny>,
    run: Run<'_>,
    engineer: Option<Py<Engineer>>,
    progress: &Say,
) -> PyResult<RunState> {
    // A given engineer designs even where the settings name none.
    let config = match &engineer {
        Some(e) if !run.config.designs() => {
            run.config.with(serde_json::json!({"engineer": e.get().name()}))?
        }
        _ => run.config.clone(),
    };
    let engineer = match engineer {
        Some(e) => Some(e),
        None => model_engineer(py, &config, trainee)?,
    };
    let p = config.protocol_value(run.settings)?;
    let get = |k: &str| p.get(k).cloned().unwrap_or_default();
    let protocol = Protocol {
        seed: serde_json::from_value(get("seed")).map_err(|e| config_text(format!("seed: {e}")))?,
        rounds: serde_json::from_value(get("rounds")).map_err(|e| config_text(format!("rounds: {e}")))?,
        validation: serde_json::from_value(get("validation"))
            .map_err(|e| config_text(format!("validation: {e}")))?,
        settings: get("settings"),
    };
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
        out_dir: run.out.into(),
        resume: run.resume,
        overwrite: run.overwrite,
        cancel: None,
        stop_after: None,
    };
    let state = py.detach(|| floe_rounds::run(&mut t, &protocol, designers, &opts, progress));
    // An exception the engineer's model raised ends the run as the model's.
    t.check_engineer().map_err(to_py)?;
    state.map_err(to_py)
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
    let spec = floe_rounds::RoundsConfig::default().reward;
    json_to_py(py, &serde_json::json!({"name": spec.name, "params": spec.params, "library": spec.library}))
}

/// One design of the rounds after round 0 in an experiment: `engineer` (`fixed`: none) and a
/// curriculum.
#[pyclass(module = "floe._floe", frozen)]
#[derive(Debug, Clone, serde::Serialize)]
pub struct Contender {
    name: String,
    engineer: String,
    curriculum: Option<String>,
    curriculum_params: serde_json::Value,
}

#[pymethods]
impl Contender {
    #[new]
    #[pyo3(signature = (name, engineer="fixed".to_string(), curriculum=None, curriculum_params=None))]
    fn new(
        name: String,
        engineer: String,
        curriculum: Option<String>,
        curriculum_params: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params =
            curriculum_params.map_or(Ok(serde_json::Value::Null), |p| from_py("curriculum_params", p))?;
        Ok(Self { name, engineer, curriculum, curriculum_params: params })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[getter]
    fn engineer(&self) -> &str {
        &self.engineer
    }

    #[getter]
    fn curriculum(&self) -> Option<&str> {
        self.curriculum.as_deref()
    }

    #[getter]
    fn curriculum_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.curriculum_params)
    }

    /// `base` with this contender's designers and `seed`.
    fn config(&self, base: &RoundsConfig, seed: u64) -> PyResult<RoundsConfig> {
        base.with(serde_json::json!({
            "seed": seed,
            "engineer": self.engineer,
            "curriculum": self.curriculum,
            "curriculum_params": self.curriculum_params,
        }))
    }

    fn __repr__(&self) -> String {
        format!("Contender({})", serde_json::to_value(self).unwrap_or_default())
    }
}

/// A Python experiment's side: `make(contender, seed, folder)` makes a trainee, which a
/// contender's run then drives (or resumes) with its settings; the trainee's `answer(instances)`
/// answers the suite.
struct PyContest {
    make: Py<PyAny>,
    config: RoundsConfig,
    contenders: Vec<Py<Contender>>,
    first_seed: u64,
    say: Option<Py<PyAny>>,
}

impl PyContest {
    fn call(
        &self,
        contender: Option<usize>,
        seed: u64,
        dir: &std::path::Path,
    ) -> Result<Py<PyAny>, RoundsError> {
        Python::attach(|py| {
            let folder = dir.display().to_string();
            let Some(c) = contender.map(|c| &self.contenders[c]) else {
                return self.make.bind(py).call1((py.None(), seed, folder)).map(Bound::unbind);
            };
            let config = c.get().config(&self.config, seed)?;
            let trainee = self.make.bind(py).call1((c.clone_ref(py), seed, &folder))?.unbind();
            let settings =
                serde_json::json!({"experiment": c.get().name, "seed": seed, "settings": config.value()});
            let run = Run { config: &config, out: folder, settings, resume: true, overwrite: false };
            let say = Say(self.say.as_ref().map(|s| s.clone_ref(py)));
            drive(py, &trainee, run, None, &say)?;
            Ok(trainee)
        })
        .map_err(raised)
    }
}

impl floe_rounds::experiment::Contest for PyContest {
    type Model = Py<PyAny>;
    type Error = RoundsError;

    fn start(&mut self, dir: &std::path::Path, _: &dyn Progress) -> Result<Py<PyAny>, RoundsError> {
        self.call(None, self.first_seed, dir)
    }

    fn run(
        &mut self,
        contender: usize,
        seed: u64,
        dir: &std::path::Path,
        _: &dyn Progress,
    ) -> Result<Py<PyAny>, RoundsError> {
        self.call(Some(contender), seed, dir)
    }

    fn outcomes(
        &mut self,
        trainee: Py<PyAny>,
        suite: &[&floe_core::Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<floe_rounds::Outcome>, RoundsError> {
        let answers = answers(&trainee, suite.iter().copied(), progress)?;
        Ok(floe_rounds::report::score_each(suite, &answers)?.1)
    }
}

/// Runs (or resumes) the paper's comparison of designs in `out` over any trainee, with
/// floe-rounds' loop, the one `floe experiment` runs for floe's own policy: every contender
/// (`contenders`, `floe.rounds.Contender`s in table order) trains from the same start with
/// `config`'s settings and each of `seeds`, the final models answer one held-out suite, and the
/// table gives valid / optimal rates with standard errors clustered by seed and instance, the
/// rounds' gain over the start, and each contender's paired difference from `fixed`.
///
/// `make_trainee(contender, seed, folder)` makes a fresh trainee from the shared start
/// (`contender` None: the start itself, whose suite outcomes are the table's `warm start` row);
/// a contender's engineer is the one its settings name. `suite` holds `floe.suite`'s settings
/// (`agents`, `max_size`, `per_cell`, …; the others its defaults). The folder: `warm/` (the
/// start's suite outcomes), `<contender>/seed-<s>/` (each run's folder, with
/// `suite-outcomes.json` once evaluated), `experiment.json` (a folder holding another
/// experiment, but for `seeds`, is refused) and `table.md`. Running it again resumes: finished
/// runs and evaluations are kept. Returns the table as Markdown.
#[pyfunction]
#[pyo3(signature = (make_trainee, config, *, out, contenders, seeds, suite, say=None))]
#[allow(clippy::too_many_arguments)]
pub fn experiment(
    py: Python<'_>,
    make_trainee: Py<PyAny>,
    config: &RoundsConfig,
    out: String,
    contenders: Vec<Py<Contender>>,
    seeds: Vec<u64>,
    suite: &Bound<'_, PyAny>,
    say: Option<Py<PyAny>>,
) -> PyResult<String> {
    let given: serde_json::Map<String, serde_json::Value> = from_py("suite", suite)?;
    let mut settings = serde_json::to_value(floe_core::suite::SuiteConfig::default()).unwrap_or_default();
    if let Some(o) = settings.as_object_mut() {
        for (k, v) in given.clone() {
            if !o.contains_key(&k) {
                return Err(config_text(format!("suite: unknown `{k}`")));
            }
            o.insert(k, v);
        }
    }
    let suite = serde_json::from_value(settings).map_err(|e| config_text(format!("suite: {e}")))?;
    let Some(&first_seed) = seeds.first() else { return Err(config_text("seeds: at least one")) };
    if contenders.is_empty() {
        return Err(config_text("contenders: at least one"));
    }
    let names: Vec<String> = contenders.iter().map(|c| c.get().name.clone()).collect();
    let record = serde_json::json!({
        "settings": config.value(),
        "contenders": contenders.iter().map(|c| serde_json::to_value(c.get()).unwrap_or_default()).collect::<Vec<_>>(),
        "suite": given,
        "seeds": seeds,
    });
    let plan = floe_rounds::experiment::Plan {
        record,
        contenders: &names,
        seeds: &seeds,
        suite,
        rounds: config.settings().rounds,
        samples: config.settings().samples,
    };
    let progress = Say(say.as_ref().map(|s| s.clone_ref(py)));
    let mut contest = PyContest { make: make_trainee, config: config.clone(), contenders, first_seed, say };
    let got = py.detach(|| floe_rounds::experiment::run(&mut contest, out.as_ref(), &plan, &progress));
    Ok(got.map_err(to_py)?.table)
}

/// Mean and standard error, in percentage points, of the paired differences `a − b` over every
/// (seed, instance) pair, the standard error clustered by seed and by instance (`floe
/// experiment`'s "all" column): `a[s][i]` is seed `s`'s outcome (True: valid, or optimal) on
/// instance `i`; a side with one seed pairs with every seed of the other (a shared start).
///
/// Raises `floe.BadInput` for sides whose seeds or instances do not pair up.
#[pyfunction]
pub fn paired_difference(a: Vec<Vec<bool>>, b: Vec<Vec<bool>>) -> PyResult<(f64, f64)> {
    floe_rounds::stats::paired_difference(&a, &b).map_err(bad_input)
}

/// Where a Hugging Face trainee keeps its model in the run folder `out` after `stage` (as
/// `save` names it: `"round 2"`, `"warm start"`): `round-<r>/`, `warm-start/`; None for a stage
/// before training (`"untrained"`).
///
/// Raises `floe.BadInput` for a name that is no stage.
#[pyfunction]
pub fn model_folder(out: String, stage: String) -> PyResult<Option<String>> {
    let stage = Stage::try_from(stage).map_err(bad_input)?;
    Ok(RunFolder::new(out).model_dir(stage).map(|p| p.display().to_string()))
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

/// The settings the run folder `out` was started with (its `config.json`), or None.
///
/// Raises `floe.ConfigError` for a file that is not JSON.
#[pyfunction]
pub fn run_settings<'py>(py: Python<'py>, out: String) -> PyResult<Bound<'py, PyAny>> {
    match RunFolder::new(out).settings().map_err(to_py)? {
        Some(v) => json_to_py(py, &v),
        None => Ok(py.None().into_bound(py)),
    }
}

/// The run state of the run folder `out` (its `state.json`: rounds done, history, designs,
/// evaluations, …), or None.
///
/// Raises `floe.ConfigError` for a file that is not a run state.
#[pyfunction]
pub fn run_state<'py>(py: Python<'py>, out: String) -> PyResult<Bound<'py, PyAny>> {
    match RunFolder::new(out).read_state().map_err(to_py)? {
        Some(s) => json_to_py(py, &state_value(&s)),
        None => Ok(py.None().into_bound(py)),
    }
}
