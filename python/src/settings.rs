//! The settings of a language-model run of the round protocol (`python -m floe.rounds`,
//! `python -m floe.verl`, `floe.rounds.experiment`), read from one JSON object and checked here:
//! the protocol's part (rounds, prompts, designers, limits, context, validation set, reward),
//! which becomes floe-rounds' `RoundsConfig` and `ValidationConfig` ([`RoundsConfig::protocol`],
//! the sections `floe train` reads), and the language model's own (its engineer's sampling, the
//! warm start, TRL's `GRPOConfig` arguments), which the Python trainees read.
//!
//! Python sees it as `floe.rounds.RoundsConfig`: built from keywords or a dict, each setting an
//! attribute, `replace(**changes)` for a changed copy.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use floe_core::text::{write_answer, AnswerForm};
use floe_plugin_api::RoundConfig;

use crate::errors::{bad_input, config_text, failed};
use crate::instances::{json_to_py, Instance};
use crate::rounds::from_py;

/// How a warm start's plans may be written (`floe.write_answer`'s forms).
const ANSWERS: [&str; 3] = ["words", "letters", "coordinates"];

/// TRL arguments floe sets itself for each round (the epochs, the round's seed).
const TRL_OWN: [&str; 3] = ["output_dir", "num_train_epochs", "seed"];

/// The engineers that are the trainee's own models.
const MODEL_ENGINEERS: [&str; 2] = ["self", "base"];

/// A run's settings; defaults in brackets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct Settings {
    /// Rounds [3]: round 0 on `round0`, each later one on the designer's configuration.
    pub(crate) rounds: u32,
    /// Passes of GRPO over a round's prompts [2] (TRL's `num_train_epochs`).
    pub(crate) epochs: u32,
    /// Training prompts per round [256], shared among map sizes by `data_ratio`.
    pub(crate) samples: usize,
    /// The run's seed [1]: round r's prompts come from `floe.round_seed(seed, r)` (`floe
    /// train`'s), its GRPO from the trainer's seed of the same.
    pub(crate) seed: u64,
    /// Round 0's configuration [floe's round-0 default clamped into `design_limits`].
    round0: Option<Value>,
    /// What the designer may design (`rounds.design_limits` of `floe train`) [its defaults].
    design_limits: Value,
    /// How the engineer's context is assembled (`rounds.context`) [V6].
    context: Option<Value>,
    /// The fixed validation set (`floe train`'s `validation`) [its defaults].
    validation: Value,
    /// A curriculum [none]: `fixed`, `difficulty-scaling`, `plr`, `sec`, `frontier` or a plugin
    /// in `curriculum_library`, with `curriculum_params`. Alone (engineer `fixed`) it designs
    /// every round; beside an engineer it gives round 0 (unless `round0` does) and chooses the
    /// replayed instances, as in `floe train`.
    curriculum: Option<String>,
    curriculum_params: Option<Value>,
    curriculum_library: Option<String>,
    /// Tokens a validation answer may take [the trainer's completion length].
    validation_max_tokens: Option<u32>,
    /// Validation prompts answered in one batch [16].
    eval_batch: usize,
    /// The reward plugin [floe-rounds' default, `floe train`'s], its parameters [the default's
    /// when `reward` is not set, else the plugin's own] and library.
    reward: Option<String>,
    reward_params: Option<Value>,
    reward_library: Option<String>,
    /// A system message before each prompt [none].
    system: Option<String>,
    /// The environment engineer [`self`]: `self` (the trainee's current checkpoint), `base`
    /// (the round-0 model), `fixed` (none: the curriculum designs every round; without one,
    /// round 0's configuration is kept, the paper's "GRPO on a fixed configuration"), an
    /// `http(s)://` URL (floe's `endpoint` engineer) or a floe engineer plugin's name.
    pub(crate) engineer: String,
    /// Parameters of an endpoint or plugin engineer (for a URL: `model`, `api_key_env`, …).
    engineer_params: Option<Value>,
    engineer_library: Option<String>,
    /// A model engineer's attempts after an unusable reply [2], tokens a reply may take [640],
    /// sampling temperature [0.7; 0: greedy], and what constrains its tokens [`schema`: the
    /// reply's JSON schema; `grammar`: floe's GBNF grammar; `none`].
    pub(crate) engineer_retries: u32,
    pub(crate) engineer_max_tokens: u32,
    pub(crate) engineer_temperature: f64,
    pub(crate) engineer_constraint: String,
    /// A supervised warm start before round 0 [none]: `steps`, `samples` (instances), `config`
    /// (their generator configuration [`round0`, else the round-0 default]), `learning_rate`
    /// [1e-4], `batch_size` [8], `answer` (`words` [default], `letters` or `coordinates`).
    /// Validated after it as the stage `warm start`.
    warm_start: Option<Value>,
    /// TRL's `GRPOConfig` arguments over floe's defaults (`output_dir`, `num_train_epochs` and
    /// `seed` are floe's).
    pub(crate) trl: serde_json::Map<String, Value>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rounds: 3,
            epochs: 2,
            samples: 256,
            seed: 1,
            round0: None,
            design_limits: json!({}),
            context: None,
            validation: json!({}),
            curriculum: None,
            curriculum_params: None,
            curriculum_library: None,
            validation_max_tokens: None,
            eval_batch: 16,
            reward: None,
            reward_params: None,
            reward_library: None,
            system: None,
            engineer: "self".into(),
            engineer_params: None,
            engineer_library: None,
            engineer_retries: 2,
            engineer_max_tokens: 640,
            engineer_temperature: 0.7,
            engineer_constraint: "schema".into(),
            warm_start: None,
            trl: serde_json::Map::new(),
        }
    }
}

/// A warm start's settings, as checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Read to check the settings; the Python trainee reads the values.
struct WarmStart {
    steps: u64,
    samples: u64,
    #[serde(default)]
    config: Option<Value>,
    #[serde(default)]
    learning_rate: Option<f64>,
    #[serde(default)]
    batch_size: Option<u64>,
    #[serde(default)]
    answer: Option<String>,
}

impl Settings {
    /// The settings of a JSON object; unknown keys and wrong types are refused by name.
    fn from_value(value: Value) -> Result<Self, String> {
        let mut known = Self::names();
        known.sort();
        let Value::Object(m) = &value else {
            return Err(format!("a JSON object of settings, not {value:.40}"));
        };
        let unknown: Vec<&str> = m.keys().filter(|k| !known.contains(k)).map(String::as_str).collect();
        if !unknown.is_empty() {
            return Err(format!("unknown settings: {} (known: {})", unknown.join(", "), known.join(", ")));
        }
        let s: Settings = serde_json::from_value(value.clone()).map_err(|e| {
            // Name the setting: the first that fails alone.
            let bad = m.iter().find(|(k, v)| serde_json::from_value::<Settings>(json!({ *k: v })).is_err());
            match bad {
                Some((k, v)) => format!("{k} {v:.60}: {e}"),
                None => format!("settings: {e}"),
            }
        })?;
        s.check()?;
        Ok(s)
    }

    /// The settings' names.
    fn names() -> Vec<String> {
        match serde_json::to_value(Settings::default()) {
            Ok(Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// What can be checked before anything runs (the protocol's part is checked by
    /// floe-rounds when the run starts).
    fn check(&self) -> Result<(), String> {
        if self.rounds < 1 {
            return Err("rounds: at least 1".into());
        }
        if self.epochs < 1 || self.samples < 1 || self.eval_batch < 1 {
            return Err("epochs, samples and eval_batch must be at least 1".into());
        }
        if !["schema", "grammar", "none"].contains(&self.engineer_constraint.as_str()) {
            return Err(format!(
                "engineer_constraint {:?}: one of 'schema', 'grammar', 'none'",
                self.engineer_constraint
            ));
        }
        if self.engineer_max_tokens < 1
            || self.engineer_temperature < 0.0
            || !self.engineer_temperature.is_finite()
        {
            return Err("engineer_max_tokens >= 1, engineer_temperature >= 0".into());
        }
        if self.engineer.is_empty() {
            return Err("engineer: empty; self, base, fixed, a URL or a plugin name".into());
        }
        if let Some(w) = &self.warm_start {
            let bad = |why: String| {
                format!(
                    "warm_start: steps and samples (at least 1), and optionally config, learning_rate, \
                     batch_size, answer ({}); {why}",
                    ANSWERS.join(", ")
                )
            };
            let w: WarmStart = serde_json::from_value(w.clone()).map_err(|e| bad(e.to_string()))?;
            if w.steps < 1 || w.samples < 1 {
                return Err(bad(format!("steps {}, samples {}", w.steps, w.samples)));
            }
            if let Some(a) = w.answer.filter(|a| !ANSWERS.contains(&a.as_str())) {
                return Err(bad(format!("answer {a:?}")));
            }
        }
        let own: Vec<&str> = TRL_OWN.into_iter().filter(|k| self.trl.contains_key(*k)).collect();
        if !own.is_empty() {
            return Err(format!("trl: {} are set by floe for each round (epochs, seed)", own.join(", ")));
        }
        Ok(())
    }

    fn designs(&self) -> bool {
        self.engineer != "fixed"
    }

    fn reward_spec(&self) -> Value {
        match &self.reward {
            Some(name) => json!({"name": name, "params": self.reward_params, "library": self.reward_library}),
            None => {
                let default = floe_rounds::RoundsConfig::default().reward;
                let params = self.reward_params.clone().unwrap_or(default.params);
                json!({"name": default.name, "params": params, "library": self.reward_library})
            }
        }
    }

    /// The protocol's part: `floe train`'s `rounds` and `validation` sections and the seed,
    /// with `settings` what the run folder's `config.json` records.
    fn protocol(&self, settings: Value) -> Result<Value, String> {
        let spec = |name: &str, params: &Option<Value>, library: &Option<String>| json!({"name": name, "params": params, "library": library});
        let curriculum = match (&self.curriculum, self.designs()) {
            (Some(c), _) => spec(c, &self.curriculum_params, &self.curriculum_library),
            (None, false) => {
                let fixed = match &self.round0 {
                    Some(r) => r.clone(),
                    None => serde_json::to_value(crate::rounds::round0_within(&self.design_limits)?)
                        .map_err(|e| e.to_string())?,
                };
                spec("fixed", &Some(json!({"config": fixed})), &None)
            }
            (None, true) => Value::Null,
        };
        let engineer = if !self.designs() {
            Value::Null
        } else if self.engineer.starts_with("http://") || self.engineer.starts_with("https://") {
            // floe's `endpoint` engineer at that URL.
            let mut params = json!({"model": "default"});
            if let (Value::Object(p), Some(Value::Object(given))) = (&mut params, &self.engineer_params) {
                p.extend(given.clone());
            }
            params["base_url"] = json!(self.engineer);
            spec("endpoint", &Some(params), &None)
        } else {
            spec(&self.engineer, &self.engineer_params, &self.engineer_library)
        };
        let mut rounds = json!({
            "rounds": self.rounds,
            "epochs": self.epochs,
            "samples": self.samples,
            "curriculum": curriculum,
            "engineer": engineer,
            "design_limits": self.design_limits,
            "round0": self.round0,
            "reward": self.reward_spec(),
        });
        let context = match (&self.context, self.engineer.as_str(), &self.engineer_library) {
            (Some(c), _, _) => Some(c.clone()),
            // The built-in `rules` reads the history as JSON.
            (None, "rules", None) => Some(json!({"history_json": true})),
            _ => None,
        };
        if let Some(c) = context {
            rounds["context"] = c;
        }
        Ok(json!({"seed": self.seed, "rounds": rounds, "validation": self.validation, "settings": settings}))
    }
}

/// A language-model run's settings (see the module's description): every setting an attribute.
///
/// Raises `floe.ConfigError` naming the bad setting.
#[pyclass(module = "floe._floe", name = "RoundsConfig", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub struct RoundsConfig {
    s: Settings,
}

impl RoundsConfig {
    /// The settings, read.
    pub(crate) fn settings(&self) -> &Settings {
        &self.s
    }

    /// The settings as JSON, every setting present.
    pub(crate) fn value(&self) -> Value {
        serde_json::to_value(&self.s).unwrap_or_default()
    }

    /// Settings from a JSON object, checked.
    pub(crate) fn from_json(v: Value) -> PyResult<Self> {
        Ok(Self { s: Settings::from_value(v).map_err(config_text)? })
    }

    /// The run's reward as a plugin spec (`name`, `params`, `library`).
    pub(crate) fn reward_value(&self) -> Value {
        self.s.reward_spec()
    }

    /// A copy with the settings of the JSON object `changes` changed, checked again.
    pub(crate) fn with(&self, changes: Value) -> PyResult<Self> {
        let mut v = self.value();
        if let (Value::Object(m), Value::Object(c)) = (&mut v, changes) {
            m.extend(c);
        }
        Self::from_json(v)
    }

    /// [`Settings::protocol`], refused as `floe.ConfigError`.
    pub(crate) fn protocol_value(&self, settings: Value) -> PyResult<Value> {
        self.s.protocol(settings).map_err(config_text)
    }
}

fn dict_value(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Value> {
    kwargs.map_or(Ok(json!({})), |k| from_py("settings", k.as_any()))
}

#[pymethods]
impl RoundsConfig {
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
        Ok(Self { s: Settings::from_value(v).map_err(|e| config_text(format!("{path}: {e}")))? })
    }

    /// The settings as JSON-ready data (the run folder's `config.json` records them).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.value())
    }

    /// A copy with the given settings changed, checked again.
    #[pyo3(signature = (**changes))]
    fn replace(&self, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        self.with(dict_value(changes)?)
    }

    /// Whether a designer other than the curriculum designs the rounds after round 0 (the
    /// engineer is not `fixed`).
    pub(crate) fn designs(&self) -> bool {
        self.s.designs()
    }

    /// Whether the engineer is one of the trainee's own models (`self`, `base`).
    pub(crate) fn model_engineer(&self) -> bool {
        MODEL_ENGINEERS.contains(&self.s.engineer.as_str())
    }

    /// The run's reward as a plugin spec (`name`, `params`, `library`).
    fn reward_spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.s.reward_spec())
    }

    /// The protocol's part of the settings as floe-rounds reads it (`floe train`'s `rounds`
    /// and `validation` sections, the seed), with `settings` what the run folder's
    /// `config.json` records; floe-rounds checks it when the run starts.
    fn protocol<'py>(&self, py: Python<'py>, settings: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.protocol_value(from_py("settings", settings)?)?)
    }

    /// The warm start's data, as every trainee's are drawn (`floe train`'s too):
    /// `warm_start.samples` instances of its `config` (else `round0`, else floe's round-0
    /// default within the design limits) from the run's seed, each with its optimal plan
    /// written in the form `warm_start.answer` names [`words`]. Returns `(trainer seed,
    /// [(instance, plan), ...])`, the seed the supervised trainer takes; no pairs without a
    /// warm start.
    ///
    /// Raises `floe.ConfigError` for a configuration that does not validate.
    fn warm_start_data(&self, py: Python<'_>) -> PyResult<(u64, Vec<(Instance, String)>)> {
        use floe_rounds::data::{trainer_seed, warm_start_data, warm_start_seed};
        let seed = self.s.seed;
        let Some(w) = &self.s.warm_start else {
            return Ok((trainer_seed(warm_start_seed(seed)), Vec::new()));
        };
        let config = match w.get("config").filter(|c| !c.is_null()).or(self.s.round0.as_ref()) {
            Some(c) => RoundConfig::from_json(&c.to_string()).map_err(crate::errors::config)?,
            None => crate::rounds::round0_within(&self.s.design_limits).map_err(config_text)?,
        };
        let form: AnswerForm =
            w.get("answer").and_then(Value::as_str).unwrap_or("words").parse().map_err(bad_input)?;
        let samples = w["samples"].as_u64().unwrap_or_default() as usize;
        let rows = py
            .detach(|| -> Result<Vec<(floe_core::Instance, String)>, String> {
                let data = warm_start_data(&config, samples, seed, &floe_core::progress::Silent)
                    .map_err(|e| e.to_string())?;
                data.into_iter()
                    .map(|inst| {
                        let text =
                            write_answer(&inst, &optimal_moves(&inst)?, form).map_err(|e| e.to_string())?;
                        Ok((inst, text))
                    })
                    .collect()
            })
            .map_err(failed)?;
        let rows = rows.into_iter().map(|(inner, text)| (Instance { inner }, text)).collect();
        Ok((trainer_seed(warm_start_seed(seed)), rows))
    }

    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.value().get(name) {
            Some(v) => json_to_py(py, v),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "RoundsConfig has no setting {name:?}"
            ))),
        }
    }

    fn __repr__(&self) -> String {
        format!("RoundsConfig({})", self.value())
    }
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
