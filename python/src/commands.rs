//! The command lines of `python -m floe.rounds` (TRL) and `python -m floe.verl`, run here whole:
//! read into a run's settings, the trainee made by the Python side, floe-rounds' driver run over
//! it (the one crossing from Python into Rust of such a run); and verl's part of a run's settings:
//! the YAML file of `--verl-config`, the checks on verl's keys, and the Hydra overrides the
//! driver gives verl's trainer for each round.

use clap::{Args, Parser};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Map, Value};

use std::path::{Path, PathBuf};

use floe_rounds::settings::Trainer;
use floe_rounds::{RunRecord, RunState, Stage};

use crate::driver::{absolute, drive, Run};
use crate::errors::{config_text, rounds as rounds_error, FloeError};
use crate::instances::json_to_py;
use crate::rounds::from_py;
use crate::settings::{spec_value, RunSettings};
use crate::trainee::Lines;

/// verl's keys the driver sets for each round: a configuration's `verl` section cannot set them.
const DRIVER_KEYS: [&str; 10] = [
    "data.train_files",
    "data.val_files",
    "data.seed",
    "actor_rollout_ref.model.path",
    "reward.custom_reward_function.path",
    "reward.custom_reward_function.name",
    "reward.custom_reward_function.reward_kwargs",
    "trainer.default_local_dir",
    "trainer.total_epochs",
    "trainer.experiment_name",
];

/// floe's reward for verl's `reward.custom_reward_function.path` (`compute_score` in it), as a
/// module rather than a file: floe/rewards.py imports floe's extension relatively.
const REWARD_MODULE: &str = "pkg://floe.rewards";

/// verl's own default of `data.train_batch_size` (its `legacy_data.yaml`).
const VERL_TRAIN_BATCH: i64 = 1024;

/// What a command line's files give: the settings, and verl's overrides.
struct FileSettings {
    settings: Map<String, Value>,
    verl: Option<Map<String, Value>>,
}

/// A run as a command line gives it: the model, its settings (read once), verl's overrides.
struct GivenRun {
    model: String,
    settings: floe_rounds::RunSettings,
    verl: Option<Map<String, Value>>,
}

/// The flags both command lines take over the settings.
#[derive(Debug, Args)]
struct RunFlags {
    /// The run folder (for verl: on a filesystem every Ray node sees)
    #[arg(long)]
    out: String,
    /// self (default), base, fixed, an http(s):// URL, or a floe engineer plugin
    #[arg(long)]
    engineer: Option<String>,
    /// With a URL: the model name the server expects
    #[arg(long)]
    engineer_model: Option<String>,
    /// fixed, difficulty-scaling, plr, sec, frontier, or a plugin name
    #[arg(long)]
    curriculum: Option<String>,
    /// GRPO rounds (the setting `rounds`)
    #[arg(long)]
    rounds: Option<u32>,
    /// Passes over a round's prompts (`epochs`)
    #[arg(long)]
    epochs: Option<u32>,
    /// Training prompts a round (`samples`)
    #[arg(long)]
    samples: Option<u64>,
    /// The run's seed (`seed`)
    #[arg(long)]
    seed: Option<u64>,
    /// Continue the run in --out after its last finished round; alone, with the settings and
    /// model it was started with
    #[arg(long)]
    resume: bool,
}

impl RunFlags {
    /// The settings the flags set.
    fn settings(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        put("engineer", self.engineer.as_ref().map(|v| json!(v)));
        put("curriculum", self.curriculum.as_ref().map(|v| json!(v)));
        put("rounds", self.rounds.map(|v| json!(v)));
        put("epochs", self.epochs.map(|v| json!(v)));
        put("samples", self.samples.map(|v| json!(v)));
        put("seed", self.seed.map(|v| json!(v)));
        m
    }
}

/// `python -m floe.rounds`.
#[derive(Debug, Parser)]
#[command(
    name = "python -m floe.rounds",
    about = "GRPO rounds with TRL on MAPF-FrozenLake; between rounds an environment engineer (by \
             default the trainee itself) writes the next round's generator configuration."
)]
struct TrlLine {
    /// A Hugging Face causal LM folder (with its tokenizer and chat template)
    #[arg(long)]
    model: Option<String>,
    /// A JSON file of floe.rounds settings (RunSettings), its `trl` TRL's arguments
    #[arg(long)]
    config: Option<String>,
    /// A JSON file of TRL GRPOConfig arguments, over the config's `trl`
    #[arg(long)]
    trl_config: Option<String>,
    #[command(flatten)]
    run: RunFlags,
}

/// `python -m floe.verl`.
#[derive(Debug, Parser)]
#[command(
    name = "python -m floe.verl",
    about = "GRPO rounds with verl's trainer on MAPF-FrozenLake; between rounds an environment \
             engineer (by default the trainee's merged checkpoint) writes the next round's generator \
             configuration."
)]
struct VerlLine {
    /// A Hugging Face causal LM folder (round 0's actor)
    #[arg(long)]
    model: Option<String>,
    /// A YAML file: `floe` (floe.rounds settings) and `verl` (Hydra overrides)
    #[arg(long)]
    verl_config: Option<String>,
    #[command(flatten)]
    run: RunFlags,
    /// The Python that runs verl [this one]
    #[arg(long)]
    python: Option<String>,
    /// Write the next round's data and print verl's command
    #[arg(long)]
    dry_run: bool,
    /// More verl overrides, key=value (over the file's)
    overrides: Vec<String>,
}

/// One of the two command lines.
#[derive(Debug)]
enum CommandLine {
    Trl(TrlLine),
    Verl(VerlLine),
}

fn write(py: Python<'_>, stream: &str, text: &str) -> PyResult<()> {
    py.import("sys")?.getattr(stream)?.call_method1("write", (text,))?;
    Ok(())
}

fn read_text(path: &str) -> PyResult<String> {
    std::fs::read_to_string(path).map_err(|e| config_text(format!("{path}: {e}")))
}

/// A JSON object, or `what` refused.
fn object(v: Value, what: impl FnOnce() -> String) -> PyResult<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        _ => Err(config_text(what())),
    }
}

/// YAML text read by PyYAML's `safe_load` (verl's own reader), as JSON.
fn yaml(py: Python<'_>, text: &str, what: &str) -> PyResult<Value> {
    let v = py
        .import("yaml")?
        .call_method1("safe_load", (text,))
        .map_err(|e| config_text(format!("{what}: {}", e.value(py))))?;
    from_py(what, &v)
}

/// The run's model, settings and verl overrides from the command line: with `--resume` alone,
/// the run folder's own record; else `read()`'s settings and overrides with the flags over
/// them.
fn given_run(
    flags: &RunFlags,
    model: Option<String>,
    files_given: bool,
    read: impl FnOnce() -> PyResult<FileSettings>,
) -> PyResult<GivenRun> {
    let given = files_given || flags.engineer_model.is_some() || !flags.settings().is_empty();
    if flags.resume && model.is_none() && !given {
        if let Some(r) = floe_rounds::RunFolder::new(&flags.out).record().map_err(rounds_error)? {
            return Ok(GivenRun { model: r.model.unwrap_or_default(), settings: r.settings, verl: r.verl });
        }
    }
    let Some(model) = model else {
        return Err(config_text("--model: required (except with --resume alone, which reads the run's own)"));
    };
    let FileSettings { settings: mut data, verl } = read()?;
    data.extend(flags.settings());
    if let Some(m) = &flags.engineer_model {
        let params = data.entry("engineer_params").or_insert(json!({}));
        if !params.is_object() {
            *params = json!({});
        }
        params["model"] = json!(m);
    }
    let settings = floe_rounds::RunSettings::from_value(Value::Object(data)).map_err(rounds_error)?;
    Ok(GivenRun { model, settings, verl })
}

/// `--config` with `--trl-config`'s TRL arguments over its `trl`.
fn trl_files(line: &TrlLine) -> PyResult<FileSettings> {
    let mut data = match &line.config {
        Some(path) => {
            let text = read_text(path)?;
            let v: Value = serde_json::from_str(&text).map_err(|e| config_text(format!("{path}: {e}")))?;
            object(v, || format!("{path}: a JSON object of settings"))?
        }
        None => Map::new(),
    };
    if let Some(path) = &line.trl_config {
        let v: Value =
            serde_json::from_str(&read_text(path)?).map_err(|e| config_text(format!("{path}: {e}")))?;
        let Value::Object(trl) = v else {
            return Err(config_text(format!("{path}: a JSON object of GRPOConfig arguments")));
        };
        let mut all = object(data.remove("trl").unwrap_or_default(), String::new)?;
        all.extend(trl);
        data.insert("trl".into(), Value::Object(all));
    }
    Ok(FileSettings { settings: data, verl: None })
}

/// `--verl-config`'s settings and overrides, then the overrides given (YAML values).
fn verl_files(py: Python<'_>, line: &VerlLine) -> PyResult<FileSettings> {
    let (data, mut verl) = match &line.verl_config {
        Some(path) => verl_file(py, path)?,
        None => (Map::new(), Map::new()),
    };
    for item in &line.overrides {
        let Some((key, value)) = item.split_once('=') else {
            return Err(config_text(format!("{item}: a verl override is key=value")));
        };
        verl.insert(key.into(), yaml(py, value, item)?);
    }
    Ok(FileSettings { settings: data, verl: Some(verl) })
}

/// The folder a verl dry run writes in, inside the run folder.
const DRY_RUN: &str = "dry-run";

/// Runs the command line of `python -m floe.rounds` (`trainer` `"trl"`) or `python -m
/// floe.verl` (`"verl"`) whole: `argv` is read into the run's settings (once), checked, and
/// `make(args)` called for the trainee with a dict of `model`, `out` (the run folder; a verl dry
/// run's is `<--out>/dry-run`), `config` (a `RunSettings`) and `resume`, and for verl `verl` (its
/// overrides), `python` and `dry_run`; floe-rounds' driver then runs it there (a dry run starts
/// its folder anew), its lines on standard error, and says the rounds done.
///
/// Returns the exit status: 0 (help on standard output); 2 after a usage error or one of
/// floe's errors, said on standard error. Other exceptions (a trainee's, a dry run's stop) pass
/// through.
#[pyfunction]
pub fn command_line(
    py: Python<'_>,
    trainer: &str,
    argv: Vec<String>,
    make: &Bound<'_, PyAny>,
) -> PyResult<i32> {
    let kind: Trainer = trainer.parse().map_err(rounds_error)?;
    let prog = format!("python -m floe.{}", if kind == Trainer::Trl { "rounds" } else { trainer });
    let args = std::iter::once(prog).chain(argv);
    let parsed = match kind {
        Trainer::Trl => TrlLine::try_parse_from(args).map(CommandLine::Trl),
        Trainer::Verl => VerlLine::try_parse_from(args).map(CommandLine::Verl),
    };
    let line = match parsed {
        Ok(line) => line,
        Err(e) => {
            write(py, if e.use_stderr() { "stderr" } else { "stdout" }, &e.render().to_string())?;
            return Ok(e.exit_code());
        }
    };
    let flags = match &line {
        CommandLine::Trl(t) => &t.run,
        CommandLine::Verl(v) => &v.run,
    };
    let ran = (|| -> PyResult<RunState> {
        let d = PyDict::new(py);
        let (run, dry_run) = match &line {
            CommandLine::Trl(t) => {
                let files = t.config.is_some() || t.trl_config.is_some();
                (given_run(&t.run, t.model.clone(), files, || trl_files(t))?, false)
            }
            CommandLine::Verl(v) => {
                let files = v.verl_config.is_some() || !v.overrides.is_empty();
                let mut run = given_run(&v.run, v.model.clone(), files, || verl_files(py, v))?;
                let verl = run.verl.get_or_insert_with(Map::new);
                check_verl(&run.settings, verl)?;
                d.set_item("verl", json_to_py(py, &Value::Object(verl.clone()))?)?;
                d.set_item("python", &v.python)?;
                d.set_item("dry_run", v.dry_run)?;
                (run, v.dry_run)
            }
        };
        let out = if dry_run { Path::new(&flags.out).join(DRY_RUN) } else { PathBuf::from(&flags.out) };
        d.set_item("model", &run.model)?;
        d.set_item("out", out.display().to_string())?;
        d.set_item("config", RunSettings::of(run.settings.clone()))?;
        d.set_item("resume", flags.resume)?;
        let trainee = make.call1((d,))?.unbind();
        let record = RunRecord {
            model: Some(absolute(&run.model)),
            trainer: Some(kind),
            verl: run.verl,
            ..RunRecord::of(run.settings.clone())
        };
        let run = Run {
            settings: run.settings,
            out,
            record,
            resume: flags.resume,
            overwrite: dry_run,
            stop_after: None,
        };
        drive(py, &trainee, run, None, &Lines(None))
    })();
    match ran {
        Ok(state) => {
            write(py, "stderr", &format!("{} rounds done; run folder {}\n", state.rounds_done, flags.out))?;
            Ok(0)
        }
        Err(e) if e.is_instance_of::<FloeError>(py) => {
            write(py, "stderr", &format!("error: {}\n", e.value(py)))?;
            Ok(2)
        }
        Err(e) => Err(e),
    }
}

/// Refuses keys the driver sets and a checkpoint frequency that would leave no checkpoint.
fn check_overrides(values: &Map<String, Value>, place: &str) -> PyResult<()> {
    let mut own: Vec<&str> = values
        .keys()
        .map(|k| k.trim_start_matches(['+', '~']))
        .filter(|k| {
            DRIVER_KEYS.iter().any(|d| k == d || k.strip_prefix(d).is_some_and(|r| r.starts_with('.')))
        })
        .collect();
    own.sort_unstable();
    if !own.is_empty() {
        return Err(config_text(format!("{place}: {} are set by floe.verl for each round", own.join(", "))));
    }
    if integer(values.get("trainer.save_freq")).unwrap_or(-1) <= 0 {
        return Err(config_text(format!(
            "{place}: trainer.save_freq must be positive: the round's model is merged from the checkpoint \
             verl writes at its last step"
        )));
    }
    Ok(())
}

/// A whole number written as a number or a string.
fn integer(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `(floe settings, verl overrides)` of a `--verl-config` YAML file: the sections `floe`
/// (`floe.rounds.RunSettings`' settings, without `trl`) and `verl` (Hydra overrides of verl's
/// `ppo_trainer` configuration, dotted keys).
///
/// Raises `floe.ConfigError` for an unreadable file, unknown sections, TRL settings, or verl
/// keys the driver sets itself.
#[pyfunction]
pub fn read_verl_config<'py>(
    py: Python<'py>,
    path: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let (floe, verl) = verl_file(py, path)?;
    Ok((json_to_py(py, &Value::Object(floe))?, json_to_py(py, &Value::Object(verl))?))
}

fn verl_file(py: Python<'_>, path: &str) -> PyResult<(Map<String, Value>, Map<String, Value>)> {
    let sections = || format!("{path}: a mapping with the sections `floe` and `verl` only");
    let mut data = object(yaml(py, &read_text(path)?, path)?, sections)?;
    let floe = object(data.remove("floe").unwrap_or_default(), sections)?;
    let verl = object(data.remove("verl").unwrap_or_default(), sections)?;
    if !data.is_empty() {
        return Err(config_text(sections()));
    }
    if floe.contains_key("trl") {
        return Err(config_text(format!(
            "{path}: floe.trl: TRL's arguments do not apply to verl; set verl's keys under `verl`"
        )));
    }
    check_overrides(&verl, path)?;
    Ok((floe, verl))
}

/// Checks a verl run's settings and overrides: no TRL arguments, no key the driver sets, a
/// positive `trainer.save_freq`, and at least one batch (`data.train_batch_size`, verl's default
/// 1024) of prompts a round.
pub(crate) fn check_verl(settings: &floe_rounds::RunSettings, values: &Map<String, Value>) -> PyResult<()> {
    if !settings.trl.is_empty() {
        return Err(config_text("trl: TRL's arguments do not apply to verl"));
    }
    check_overrides(values, "verl")?;
    let batch = integer(values.get("data.train_batch_size")).unwrap_or(VERL_TRAIN_BATCH);
    let samples = settings.samples;
    if i64::try_from(samples).unwrap_or(i64::MAX) < batch {
        return Err(config_text(format!(
            "samples {samples}: fewer than verl's data.train_batch_size {batch}, so a round has no step"
        )));
    }
    Ok(())
}

/// verl's overrides for round `r` of the run in folder `out` (data seed `seed`, by default the
/// round's seed), its actor starting from `model`: the configuration's `verl`, then the
/// driver's own (the round's parquet files in `verl/round-<r>/` and the validation set's in
/// `verl/`, the checkpoints, the epochs, floe's reward with the run's reward plugin as verl's
/// `reward_kwargs`, which verl passes to `floe.compute_score` on every call).
#[pyfunction]
#[pyo3(signature = (config, verl, *, out, round, model, seed=None))]
pub fn verl_overrides<'py>(
    py: Python<'py>,
    config: &RunSettings,
    verl: &Bound<'py, PyAny>,
    out: &str,
    round: u32,
    model: &str,
    seed: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut values: Map<String, Value> = from_py("verl", verl)?;
    let settings = config.settings();
    let seed = seed.unwrap_or_else(|| floe_rounds::data::round_seed(settings.seed, round));
    let folder = floe_rounds::RunFolder::new(out);
    let round_dir = folder.trainer_dir(Trainer::Verl, Stage::Round(round)).unwrap_or_default();
    let path = |p: PathBuf| json!(p.display().to_string());
    values.extend([
        ("data.train_files".into(), path(round_dir.join("train.parquet"))),
        ("data.val_files".into(), path(folder.trainer_root(Trainer::Verl).join("validation.parquet"))),
        ("data.seed".into(), json!(floe_rounds::data::trainer_seed(seed))),
        ("actor_rollout_ref.model.path".into(), json!(model)),
        ("reward.custom_reward_function.path".into(), json!(REWARD_MODULE)),
        ("reward.custom_reward_function.name".into(), json!("compute_score")),
    ]);
    let key = "+reward.custom_reward_function.reward_kwargs";
    let spec = spec_value(&settings.reward_spec());
    values.insert(format!("{key}.reward"), spec["name"].clone());
    for (own, theirs) in [("params", "reward_params"), ("library", "reward_library")] {
        if !spec[own].is_null() {
            values.insert(format!("{key}.{theirs}"), spec[own].clone());
        }
    }
    values.extend([
        ("trainer.default_local_dir".into(), path(round_dir.join("checkpoints"))),
        ("trainer.total_epochs".into(), json!(settings.epochs)),
        ("trainer.experiment_name".into(), json!(floe_rounds::folder::stage_name(Stage::Round(round)))),
    ]);
    json_to_py(py, &Value::Object(values))
}

/// `value` as the right-hand side of a Hydra override: `true`/`false`, `null`, numbers as
/// written, lists as `[a,b]`, dicts as `{k:v}`, and strings quoted when Hydra's grammar would
/// read them otherwise.
fn hydra_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(hydra_value).collect::<Vec<_>>().join(",")),
        Value::Object(m) => {
            format!(
                "{{{}}}",
                m.iter().map(|(k, v)| format!("{k}:{}", hydra_value(v))).collect::<Vec<_>>().join(",")
            )
        }
        Value::String(s) => {
            let plain = !s.is_empty()
                && s.chars().all(|c| c.is_alphanumeric() || "_-./:+@~".contains(c))
                && !["true", "false", "null"].contains(&s.as_str());
            if plain {
                s.clone()
            } else {
                format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
            }
        }
    }
}

/// Hydra overrides `key=value` of a mapping of dotted keys, in its order.
#[pyfunction]
pub fn hydra_overrides(values: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let values: Map<String, Value> = from_py("overrides", values)?;
    Ok(values.iter().map(|(k, v)| format!("{k}={}", hydra_value(v))).collect())
}
