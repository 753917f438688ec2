//! The command lines of `python -m floe.rounds` (TRL) and `python -m floe.verl`, run here whole:
//! read into a run's settings, the trainee made by the Python side, floe-rounds' driver run over
//! it (the one crossing from Python into Rust of such a run). verl's part is [`crate::verl`]:
//! the YAML file of `--verl-config`, the checks on verl's keys, and the Hydra overrides the
//! driver gives verl's trainer for each round.

use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use floe_rounds::folder::Trainer;
use floe_rounds::{RunRecord, RunState};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Map, Value};

use crate::convert::json_to_py;
use crate::convert::{object, read_text};
use crate::driver::{absolute, drive, Run};
use crate::errors::{config_text, rounds as rounds_error, FloeError};
use crate::settings::RunSettings;
use crate::trainee::Lines;
use crate::verl::{check_verl, verl_file, yaml};

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
        if let Some(r) =
            floe_rounds::RunRecord::read(&floe_rounds::RunFolder::new(&flags.out)).map_err(rounds_error)?
        {
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
            ..RunRecord::of(run.settings)
        };
        let run = Run { out, record, resume: flags.resume, overwrite: dry_run, stop_after: None };
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
