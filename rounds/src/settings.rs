//! A run's settings as one typed value: [`RunSettings`], what `python -m floe.rounds`, `python
//! -m floe.verl` and `floe.rounds.experiment` read (Python's `floe.rounds.RunSettings` wraps
//! it), and [`RunRecord`], what such a run's `config.json` records.
//!
//! The protocol's part (rounds, prompts, seed, designers, design limits, context, validation set,
//! reward) becomes a [`Protocol`] here ([`RunSettings::protocol`]), typed, checked before
//! anything runs; the language model's own part (its engineer's sampling, the warm start, TRL's
//! arguments) is read by the Python trainees.
//!
//! # Defaults
//! One set: the protocol's are [`RoundsConfig`]'s and [`ValidationConfig`]'s (the ones `floe
//! train` has), but for what a language model's run sets differently on purpose, the
//! [`language_model`] preset.
//!
//! # The engineer
//! `engineer` names who designs the rounds after round 0 ([`EngineerChoice`]): `self` and `base`
//! (the trainee's own models), `fixed` (none), an `http(s)://` URL (floe's `endpoint` engineer)
//! or a plugin. The built-in `rules` reads the history as JSON
//! ([`ContextOptions::for_engineer`]).

use std::path::PathBuf;

use floe_core::text::AnswerForm;
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{PluginSpec, RoundConfig};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::config::{RoundsConfig, ValidationConfig};
use crate::context::ContextOptions;
use crate::design::{default_round0, run_limits};
use crate::driver::Protocol;
use crate::error::RoundsError;
use crate::folder::{RunFolder, Trainer};

/// What a language model's run sets differently from `floe train`'s defaults
/// ([`RoundsConfig::default`]), on purpose.
pub mod language_model {
    /// Training prompts a round: a language model's GRPO step costs thousands of times a
    /// policy's, so a round is smaller.
    pub const SAMPLES: usize = 256;
    /// The environment engineer: the trainee's current checkpoint, the paper's "from trainee
    /// to trainer". No curriculum beside it: the engineer designs every round after round 0.
    pub const ENGINEER: &str = "self";
}

/// TRL arguments floe sets itself for each round (the epochs, the output folder, the seed).
pub const TRL_OWN: [&str; 3] = ["output_dir", "num_train_epochs", "seed"];

/// Who designs the rounds after round 0, as `engineer` names it.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineerChoice {
    /// `fixed`: no engineer; the curriculum designs every round, or without one round 0's
    /// configuration stands (the paper's "GRPO on a fixed configuration").
    Fixed,
    /// `self` or `base`: one of the trainee's own models, which the trainee supplies.
    Model(OwnModel),
    /// A plugin (built in or from a library); an `http(s)://` URL is floe's `endpoint` engineer
    /// at that address.
    Plugin(PluginSpec),
}

/// Which of the trainee's models is its engineer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnModel {
    /// `self`: the current checkpoint.
    Current,
    /// `base`: the round-0 model.
    Base,
}

impl OwnModel {
    /// The name `engineer` gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            OwnModel::Current => "self",
            OwnModel::Base => "base",
        }
    }
}

impl EngineerChoice {
    /// The choice `name` makes, with the plugin's `params` and `library`.
    #[must_use]
    pub fn of(name: &str, params: Option<&Value>, library: Option<&PathBuf>) -> Self {
        let params = params.cloned().unwrap_or(Value::Null);
        match name {
            "fixed" => EngineerChoice::Fixed,
            "self" => EngineerChoice::Model(OwnModel::Current),
            "base" => EngineerChoice::Model(OwnModel::Base),
            url if url.starts_with("http://") || url.starts_with("https://") => {
                let mut p = json!({"model": "default"});
                if let (Value::Object(p), Value::Object(given)) = (&mut p, params) {
                    p.extend(given);
                }
                p["base_url"] = json!(url);
                EngineerChoice::Plugin(PluginSpec { name: "endpoint".into(), params: p, library: None })
            }
            _ => EngineerChoice::Plugin(PluginSpec { name: name.into(), params, library: library.cloned() }),
        }
    }

    /// The engineer as the rounds' settings name it (`rounds.engineer`): a model engineer by
    /// its name, which the trainee's driver replaces by the model; None for `fixed`.
    #[must_use]
    pub fn spec(&self) -> Option<PluginSpec> {
        match self {
            EngineerChoice::Fixed => None,
            EngineerChoice::Model(m) => Some(PluginSpec::builtin(m.name())),
            EngineerChoice::Plugin(spec) => Some(spec.clone()),
        }
    }
}

/// What a model engineer's tokens are constrained by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Constraint {
    /// The reply's JSON schema.
    Schema,
    /// floe's GBNF grammar of the reply.
    Grammar,
    /// Nothing.
    None,
}

/// A supervised warm start before round 0: `steps` steps of `batch_size` on `samples` optimal
/// plans of `config`, validated after it as the stage `warm start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmStart {
    /// Supervised steps (at least 1).
    pub steps: u64,
    /// Instances drawn (at least 1), each with its optimal plan
    /// ([`crate::data::warm_start_data`]).
    pub samples: usize,
    /// Their generator configuration \[`round0`, else the round-0 default within the design
    /// limits\].
    #[serde(default)]
    pub config: Option<RoundConfig>,
    /// \[1e-4\]
    #[serde(default = "WarmStart::learning_rate")]
    pub learning_rate: f64,
    /// \[8\]
    #[serde(default = "WarmStart::batch_size")]
    pub batch_size: u64,
    /// How the plans are written: `words` \[[`AnswerForm`]'s default\], `letters` or `coordinates`.
    #[serde(default = "WarmStart::answer")]
    pub answer: String,
}

impl WarmStart {
    fn learning_rate() -> f64 {
        1e-4
    }

    fn batch_size() -> u64 {
        8
    }

    fn answer() -> String {
        let form = AnswerForm::default();
        AnswerForm::ALL.iter().find(|(_, f)| *f == form).map_or_else(String::new, |(name, _)| (*name).into())
    }

    /// The form its plans are written in.
    ///
    /// # Errors
    /// A name that is no form.
    pub fn form(&self) -> Result<AnswerForm, RoundsError> {
        self.answer.parse().map_err(|e| RoundsError::Input(format!("warm_start.answer: {e}")))
    }
}

/// A run's settings (see the module's description); defaults in brackets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    /// Rounds \[`floe train`'s, 3\]: round 0 on `round0`, each later one on the designer's
    /// configuration.
    pub rounds: u32,
    /// Passes of GRPO over a round's prompts \[`floe train`'s, 2\] (TRL's `num_train_epochs`).
    pub epochs: u32,
    /// Training prompts per round \[[`language_model::SAMPLES`]\], shared among map sizes by
    /// `data_ratio`.
    pub samples: usize,
    /// The run's seed \[[`crate::data::DEFAULT_SEED`]\]: every random choice of the protocol is
    /// keyed by it ([`crate::data`]).
    pub seed: u64,
    /// Round 0's configuration \[the curriculum's, else floe's round-0 default clamped into
    /// `design_limits`\].
    pub round0: Option<RoundConfig>,
    /// What the designer may design (`rounds.design_limits` of `floe train`).
    pub design_limits: DesignLimits,
    /// How the engineer's context is assembled (`rounds.context`) \[V6; the history as JSON
    /// for `rules`\].
    pub context: Option<ContextOptions>,
    /// The fixed validation set (`floe train`'s `validation`).
    pub validation: ValidationConfig,
    /// A curriculum \[none\]: `fixed`, `difficulty-scaling`, `plr`, `sec`, `frontier` or a
    /// plugin in `curriculum_library`, with `curriculum_params`. Alone (engineer `fixed`) it
    /// designs every round; beside an engineer it gives round 0 (unless `round0` does) and
    /// chooses the replayed instances, as in `floe train`.
    pub curriculum: Option<String>,
    pub curriculum_params: Option<Value>,
    pub curriculum_library: Option<PathBuf>,
    /// Tokens a validation answer may take \[the trainer's completion length\].
    pub validation_max_tokens: Option<u32>,
    /// Validation prompts answered in one batch \[16\].
    pub eval_batch: usize,
    /// The reward plugin \[`floe train`'s\], its parameters \[the default's when `reward` is
    /// not set, else the plugin's own\] and library.
    pub reward: Option<String>,
    pub reward_params: Option<Value>,
    pub reward_library: Option<PathBuf>,
    /// A system message before each prompt \[none\].
    pub system: Option<String>,
    /// The environment engineer \[[`language_model::ENGINEER`]\] ([`EngineerChoice`]).
    pub engineer: String,
    /// Parameters of an endpoint or plugin engineer (for a URL: `model`, `api_key_env`, …).
    pub engineer_params: Option<Value>,
    pub engineer_library: Option<PathBuf>,
    /// A model engineer's attempts after an unusable reply \[2\], tokens a reply may take
    /// \[640\], sampling temperature \[0.7; 0: greedy\], and what constrains its tokens
    /// \[`schema`\].
    pub engineer_retries: u32,
    pub engineer_max_tokens: u32,
    pub engineer_temperature: f64,
    pub engineer_constraint: Constraint,
    /// A supervised warm start before round 0 \[none\].
    pub warm_start: Option<WarmStart>,
    /// TRL's `GRPOConfig` arguments over floe's defaults (those of [`TRL_OWN`] are floe's).
    pub trl: Map<String, Value>,
}

impl Default for RunSettings {
    fn default() -> Self {
        let protocol = RoundsConfig::default();
        RunSettings {
            rounds: protocol.rounds,
            epochs: protocol.epochs,
            samples: language_model::SAMPLES,
            seed: crate::data::DEFAULT_SEED,
            round0: None,
            design_limits: DesignLimits::default(),
            context: None,
            validation: ValidationConfig::default(),
            curriculum: None,
            curriculum_params: None,
            curriculum_library: None,
            validation_max_tokens: None,
            eval_batch: 16,
            reward: None,
            reward_params: None,
            reward_library: None,
            system: None,
            engineer: language_model::ENGINEER.into(),
            engineer_params: None,
            engineer_library: None,
            engineer_retries: 2,
            engineer_max_tokens: 640,
            engineer_temperature: 0.7,
            engineer_constraint: Constraint::Schema,
            warm_start: None,
            trl: Map::new(),
        }
    }
}

impl RunSettings {
    /// The settings of a JSON object, checked; unknown keys and wrong types are refused by name.
    ///
    /// # Errors
    /// [`RoundsError::Input`] naming the bad setting.
    pub fn from_value(value: Value) -> Result<Self, RoundsError> {
        let bad = |m: String| RoundsError::Input(m);
        let Value::Object(m) = &value else {
            return Err(bad(format!("a JSON object of settings, not {value:.40}")));
        };
        let known = Self::names();
        let unknown: Vec<&str> = m.keys().filter(|k| !known.contains(k)).map(String::as_str).collect();
        if !unknown.is_empty() {
            return Err(bad(format!(
                "unknown settings: {} (known: {})",
                unknown.join(", "),
                known.join(", ")
            )));
        }
        let s: RunSettings = serde_json::from_value(value.clone()).map_err(|e| {
            // Name the setting: the first that fails alone.
            let alone =
                m.iter().find(|(k, v)| serde_json::from_value::<RunSettings>(json!({ *k: v })).is_err());
            match alone {
                Some((k, v)) => bad(format!("{k} {v:.60}: {e}")),
                None => bad(format!("settings: {e}")),
            }
        })?;
        s.check()?;
        Ok(s)
    }

    /// The settings as JSON, every setting present.
    #[must_use]
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// A copy with the settings of the JSON object `changes` changed, checked again.
    ///
    /// # Errors
    /// As [`RunSettings::from_value`].
    pub fn with(&self, changes: Value) -> Result<Self, RoundsError> {
        let mut v = self.to_value();
        match (&mut v, changes) {
            (Value::Object(m), Value::Object(c)) => m.extend(c),
            (_, other) => return Err(RoundsError::Input(format!("changes: a JSON object, not {other:.40}"))),
        }
        Self::from_value(v)
    }

    /// The settings' names, sorted.
    #[must_use]
    pub fn names() -> Vec<String> {
        match serde_json::to_value(RunSettings::default()) {
            Ok(Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// What can be checked before anything runs: the counts, the engineer's sampling, the warm
    /// start, TRL's arguments, and the protocol the settings make.
    ///
    /// # Errors
    /// [`RoundsError::Input`] naming the bad setting.
    pub fn check(&self) -> Result<(), RoundsError> {
        let bad = |m: String| Err(RoundsError::Input(m));
        if self.rounds < 1 {
            return bad("rounds: at least 1".into());
        }
        if self.epochs < 1 || self.samples < 1 || self.eval_batch < 1 {
            return bad("epochs, samples and eval_batch must be at least 1".into());
        }
        if self.engineer_max_tokens < 1
            || !(self.engineer_temperature >= 0.0 && self.engineer_temperature.is_finite())
        {
            return bad("engineer_max_tokens >= 1, engineer_temperature >= 0".into());
        }
        if self.engineer.is_empty() {
            return bad("engineer: empty; self, base, fixed, a URL or a plugin name".into());
        }
        if let Some(w) = &self.warm_start {
            let names: Vec<&str> = AnswerForm::ALL.iter().map(|(n, _)| *n).collect();
            if w.steps < 1 || w.samples < 1 {
                return bad(format!(
                    "warm_start: steps and samples must be at least 1 (steps {}, samples {})",
                    w.steps, w.samples
                ));
            }
            if w.form().is_err() {
                return bad(format!("warm_start: answer {:?}: one of {}", w.answer, names.join(", ")));
            }
            if let Some(c) = &w.config {
                c.validate().map_err(|e| RoundsError::Input(format!("warm_start.config: {e}")))?;
            }
        }
        let own: Vec<&str> = TRL_OWN.into_iter().filter(|k| self.trl.contains_key(*k)).collect();
        if !own.is_empty() {
            return bad(format!("trl: {} are set by floe for each round (epochs, seed)", own.join(", ")));
        }
        let rounds = self.rounds_config()?;
        rounds.validate()?;
        self.validation.validate()
    }

    /// Who designs the rounds after round 0.
    #[must_use]
    pub fn engineer_choice(&self) -> EngineerChoice {
        EngineerChoice::of(&self.engineer, self.engineer_params.as_ref(), self.engineer_library.as_ref())
    }

    /// The run's reward (`rounds.reward`).
    #[must_use]
    pub fn reward_spec(&self) -> PluginSpec {
        match &self.reward {
            Some(name) => PluginSpec {
                name: name.clone(),
                params: self.reward_params.clone().unwrap_or(Value::Null),
                library: self.reward_library.clone(),
            },
            None => {
                let default = RoundsConfig::default().reward;
                PluginSpec {
                    params: self.reward_params.clone().unwrap_or(default.params),
                    library: self.reward_library.clone(),
                    ..default
                }
            }
        }
    }

    /// Round 0's configuration: `round0`, else floe's round-0 default clamped into the design
    /// limits (without replay), as the driver makes it when no curriculum gives round 0.
    ///
    /// # Errors
    /// Design limits the default cannot be made to fit.
    pub fn round0_config(&self) -> Result<RoundConfig, RoundsError> {
        match &self.round0 {
            Some(c) => Ok(c.clone()),
            None => Ok(default_round0(&run_limits(&self.design_limits, false))?.0),
        }
    }

    /// The warm start's generator configuration: its own, else round 0's ([`Self::round0_config`]).
    ///
    /// # Errors
    /// As [`Self::round0_config`].
    pub fn warm_start_config(&self) -> Result<Option<(&WarmStart, RoundConfig)>, RoundsError> {
        let Some(w) = &self.warm_start else { return Ok(None) };
        let config = match &w.config {
            Some(c) => c.clone(),
            None => self.round0_config()?,
        };
        Ok(Some((w, config)))
    }

    /// The rounds' settings (`floe train`'s `rounds` section): the curriculum (with engineer
    /// `fixed` and none named, `fixed` on round 0's configuration), the engineer, the limits,
    /// the context (for `rules`, the history as JSON), round 0 and the reward.
    ///
    /// # Errors
    /// Design limits round 0's default cannot fit; context options the engineer cannot read.
    pub fn rounds_config(&self) -> Result<RoundsConfig, RoundsError> {
        let engineer = self.engineer_choice().spec();
        let curriculum = match (&self.curriculum, &engineer) {
            (Some(name), _) => Some(PluginSpec {
                name: name.clone(),
                params: self.curriculum_params.clone().unwrap_or(Value::Null),
                library: self.curriculum_library.clone(),
            }),
            (None, None) => Some(PluginSpec {
                name: "fixed".into(),
                params: json!({ "config": self.round0_config()? }),
                library: None,
            }),
            (None, Some(_)) => None,
        };
        let context = match &engineer {
            Some(e) => ContextOptions::for_engineer(self.context.clone(), e)
                .map_err(|e| RoundsError::Input(format!("context: {e}")))?,
            None => self.context.clone().unwrap_or_default(),
        };
        Ok(RoundsConfig {
            rounds: self.rounds,
            epochs: self.epochs,
            samples: self.samples,
            curriculum,
            engineer,
            context,
            design_limits: self.design_limits.clone(),
            round0: self.round0.clone(),
            reward: self.reward_spec(),
        })
    }

    /// The protocol of a run of these settings, `record` what its `config.json` records (its
    /// `rounds` in place of the settings' own when it names them).
    ///
    /// # Errors
    /// As [`Self::rounds_config`].
    pub fn protocol(&self, record: &RunRecord) -> Result<Protocol, RoundsError> {
        let rounds = match &record.rounds {
            Some(r) => r.clone(),
            None => self.rounds_config()?,
        };
        Ok(Protocol {
            seed: self.seed,
            rounds,
            validation: self.validation.clone(),
            settings: record.to_value(),
        })
    }
}

/// What `config.json` records of a run made from [`RunSettings`]; a resumed run must record
/// the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The model trained (its folder), when the run names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its trainer, when it is one of floe's ([`Trainer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trainer: Option<Trainer>,
    /// The settings.
    pub settings: RunSettings,
    /// verl's overrides (dotted keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verl: Option<Map<String, Value>>,
    /// An engineer given in code rather than named by the settings (`given: <name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engineer: Option<String>,
    /// In an experiment, the contender whose run it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// The rounds as run, when they are not the settings' own (an experiment's `fixed-random`
    /// and `best-of-n` set their designers, [`crate::experiment::Design`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsConfig>,
}

impl RunRecord {
    /// A record of `settings` alone.
    #[must_use]
    pub fn of(settings: RunSettings) -> Self {
        RunRecord {
            model: None,
            trainer: None,
            settings,
            verl: None,
            engineer: None,
            experiment: None,
            rounds: None,
        }
    }

    /// The record as written.
    #[must_use]
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The record of `folder`'s run (its `config.json`), if it has one.
    ///
    /// # Errors
    /// A file that is not JSON, or not such a record.
    pub fn read(folder: &RunFolder) -> Result<Option<Self>, RoundsError> {
        let Some(v) = folder.settings()? else { return Ok(None) };
        Self::from_value(v)
            .map(Some)
            .map_err(|e| RoundsError::Input(format!("{}: {e}", folder.join("config.json").display())))
    }

    /// A record read back.
    ///
    /// # Errors
    /// A record that is not one, or whose settings do not check.
    pub fn from_value(value: Value) -> Result<Self, RoundsError> {
        let mut value = value;
        let settings = value.as_object_mut().and_then(|m| m.remove("settings")).unwrap_or(Value::Null);
        let settings = RunSettings::from_value(settings)?;
        let mut fields = value;
        if let Value::Object(m) = &mut fields {
            m.insert("settings".into(), serde_json::to_value(&settings).unwrap_or_default());
        }
        serde_json::from_value(fields)
            .map_err(|e| RoundsError::Input(format!("config.json: not a run's record: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engineer_names_are_read_once() {
        assert_eq!(EngineerChoice::of("fixed", None, None), EngineerChoice::Fixed);
        assert_eq!(EngineerChoice::of("self", None, None), EngineerChoice::Model(OwnModel::Current));
        assert_eq!(EngineerChoice::of("base", None, None).spec(), Some(PluginSpec::builtin("base")));
        let url = EngineerChoice::of("http://h:8/v1", Some(&json!({"model": "m"})), None).spec().unwrap();
        assert_eq!(
            (url.name.as_str(), &url.params["model"], &url.params["base_url"]),
            ("endpoint", &json!("m"), &json!("http://h:8/v1"))
        );
        // `rules` reads the history as JSON: asked for when no options are given, refused when
        // options leave it out.
        let s = RunSettings { engineer: "rules".into(), ..RunSettings::default() };
        assert!(s.rounds_config().unwrap().context.history_json);
        let off = RunSettings { context: Some(ContextOptions::default()), ..s };
        assert!(off.check().unwrap_err().to_string().contains("history_json"));
    }

    #[test]
    fn the_rounds_have_the_designers_the_settings_name() {
        let round0: RoundConfig = serde_json::from_value(json!({
            "sizes": [{"size": 3, "data_ratio": 1.0, "hole_ratio": 0.2, "wait_ratio": 0.5}], "agents": [2]
        }))
        .unwrap();
        // Engineer `fixed` without a curriculum keeps round 0 with floe's `fixed` curriculum:
        // the given round 0, or floe's default clamped into the design limits.
        let fixed = RunSettings {
            engineer: "fixed".into(),
            round0: Some(round0.clone()),
            seed: 7,
            ..RunSettings::default()
        };
        let p = fixed.protocol(&RunRecord::of(fixed.clone())).unwrap();
        assert_eq!(
            p.rounds.curriculum,
            Some(PluginSpec { name: "fixed".into(), params: json!({"config": round0}), library: None })
        );
        assert_eq!((p.rounds.engineer, p.seed), (None, 7));
        assert_eq!(p.settings["settings"]["seed"], json!(7));
        let limits = DesignLimits { min_size: 3, max_size: 4, ..DesignLimits::default() };
        let within =
            RunSettings { engineer: "fixed".into(), design_limits: limits.clone(), ..RunSettings::default() };
        let c = within.rounds_config().unwrap().curriculum.unwrap();
        assert_eq!(
            c.params["config"],
            serde_json::to_value(default_round0(&run_limits(&limits, false)).unwrap().0).unwrap()
        );
        // An engineer goes into the rounds, no curriculum beside it unless named.
        let rules =
            RunSettings { engineer: "rules".into(), ..RunSettings::default() }.rounds_config().unwrap();
        assert_eq!((rules.engineer.unwrap().name.as_str(), rules.curriculum), ("rules", None));
        let sec = RunSettings {
            engineer: "fixed".into(),
            curriculum: Some("sec".into()),
            curriculum_params: Some(json!({"base": round0})),
            ..RunSettings::default()
        };
        let c = sec.rounds_config().unwrap().curriculum.unwrap();
        assert_eq!((c.name.as_str(), &c.params), ("sec", &json!({"base": round0})));
        // A URL is floe's `endpoint` engineer, its parameters over the model name `default`.
        let url = RunSettings {
            engineer: "http://127.0.0.1:9/v1".into(),
            engineer_params: Some(json!({"timeout_s": 5})),
            ..RunSettings::default()
        };
        let e = url.rounds_config().unwrap().engineer.unwrap();
        assert_eq!(
            e.params,
            json!({"model": "default", "timeout_s": 5, "base_url": "http://127.0.0.1:9/v1"})
        );
    }

    #[test]
    fn defaults_are_floe_trains_but_for_the_preset() {
        let s = RunSettings::default();
        let r = RoundsConfig::default();
        assert_eq!((s.rounds, s.epochs, s.samples), (r.rounds, r.epochs, language_model::SAMPLES));
        assert_eq!(s.reward_spec(), r.reward);
        // engineer `fixed` alone: round 0's configuration every round.
        let fixed = RunSettings { engineer: "fixed".into(), ..s.clone() }.rounds_config().unwrap();
        assert_eq!(fixed.curriculum.unwrap().name, "fixed");
        assert!(fixed.engineer.is_none());
        // Read back as written.
        let back = RunSettings::from_value(s.to_value()).unwrap();
        assert_eq!(back, s);
        let e = RunSettings::from_value(json!({"sampels": 3})).unwrap_err().to_string();
        assert!(e.contains("unknown settings: sampels"), "{e}");
        let e = RunSettings::from_value(json!({"samples": "many"})).unwrap_err().to_string();
        assert!(e.starts_with("samples \"many\""), "{e}");
        let warm = RunSettings::from_value(json!({"warm_start": {"steps": 1, "samples": 2}})).unwrap();
        let w = warm.warm_start.unwrap();
        assert_eq!((w.form().unwrap(), w.learning_rate, w.batch_size), (AnswerForm::default(), 1e-4, 8));
        let record = RunRecord { model: Some("m".into()), trainer: Some(Trainer::Verl), ..RunRecord::of(s) };
        assert_eq!(RunRecord::from_value(record.to_value()).unwrap(), record);
    }
}
