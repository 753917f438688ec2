//! A trainee written in Python as floe-rounds' [`Trainee`], and what the driver says to Python.
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
//!
//! A trainee whose settings name the `self` or `base` engineer also has `current_model()` and
//! `base_model()`, each a `(model, tokenizer)`.

use std::sync::{Arc, Mutex};

use floe_core::progress::Progress;
use floe_rounds::{Answer, RoundData, RoundsError, RunFolder, RunState, Session, Stage, Trained, Trainee};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{json_to_py, py_to_json};
use crate::errors::raised;
use crate::instances::Instance;

fn to_json(value: &Bound<'_, PyAny>) -> Result<Value, RoundsError> {
    let text = py_to_json(value).map_err(raised)?;
    serde_json::from_str(&text)
        .map_err(|e| RoundsError::Input(format!("the trainee returned {text:.80}: {e}")))
}

pub(crate) fn state_value(state: &RunState) -> Value {
    serde_json::to_value(state).unwrap_or_default()
}

/// A Python object as the driver's trainee.
pub(crate) struct PyTrainee {
    pub(crate) obj: Py<PyAny>,
    /// An exception a Python engineer's model raised: the run stops at the next call.
    pub(crate) engineer_raised: Option<Arc<Mutex<Option<PyErr>>>>,
}

impl PyTrainee {
    fn call(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
    ) -> Result<Value, RoundsError> {
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

    /// The exception the engineer's model raised, as the run's error.
    pub(crate) fn check_engineer(&self) -> Result<(), RoundsError> {
        match self.engineer_raised.as_ref().and_then(|r| r.lock().ok()?.take()) {
            Some(e) => Err(raised(e)),
            None => Ok(()),
        }
    }
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
        if let Some(n) = out.get("grpo_steps").and_then(Value::as_u64) {
            session.state.grpo_steps += n;
        }
        trained(&out, round.instances.len())
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

    fn details(&self) -> Value {
        Python::attach(|py| {
            self.obj.bind(py).call_method0("details").ok().and_then(|d| to_json(&d).ok()).unwrap_or_default()
        })
    }
}

/// What `train` returned, read: the samples (of `n` instances), the |advantage| sums, the
/// figures.
fn trained(out: &Value, n: usize) -> Result<Trained, RoundsError> {
    let bad = |m: &str| RoundsError::Input(format!("train: {m}"));
    let mut trained = Trained::default();
    for s in out.get("samples").and_then(Value::as_array).into_iter().flatten() {
        let (i, r, v) = (
            s.get(0).and_then(Value::as_u64),
            s.get(1).and_then(Value::as_f64),
            s.get(2).and_then(Value::as_bool),
        );
        match (i, r, v) {
            (Some(i), Some(r), Some(v)) if (i as usize) < n => trained.samples.push((i as u32, r as f32, v)),
            _ => return Err(bad(&format!("a sample {s} is not [index, reward, valid]"))),
        }
    }
    for (size, pair) in out.get("abs_advantage").and_then(Value::as_object).into_iter().flatten() {
        let size: u32 = size.parse().map_err(|_| bad("abs_advantage is keyed by map size"))?;
        match (pair.get(0).and_then(Value::as_f64), pair.get(1).and_then(Value::as_u64)) {
            (Some(sum), Some(n)) => {
                trained.abs_advantage.insert(size, (sum, n as u32));
            }
            _ => return Err(bad("abs_advantage's values are [sum, count]")),
        }
    }
    if let Some(f) = out.get("figures").and_then(Value::as_object) {
        trained.figures = f.clone();
    }
    Ok(trained)
}

/// A Python trainee's `answer(instances)`: one text per instance, each an [`Answer::Text`].
pub(crate) fn answers<'a>(
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
fn record_steps(session: &mut Session<'_>, out: &Value) -> Result<(), RoundsError> {
    for line in out.get("steps").and_then(Value::as_array).into_iter().flatten() {
        session.step_line(line)?;
    }
    if let Some(s) = out.get("train_s").and_then(Value::as_f64) {
        session.add_training(s);
    }
    Ok(())
}

/// The driver's lines, said to a Python callable (standard error without one): one per stage
/// and per line.
pub(crate) struct Lines(pub(crate) Option<Py<PyAny>>);

impl Lines {
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

    /// Another handle on the same callable.
    pub(crate) fn again(&self, py: Python<'_>) -> Self {
        Lines(self.0.as_ref().map(|f| f.clone_ref(py)))
    }
}

impl Progress for Lines {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64, _: &str) {}
    fn end(&self, summary: &str) {
        self.say(summary);
    }
    fn line(&self, text: &str) {
        self.say(text);
    }
}
