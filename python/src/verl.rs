//! verl's part of a run's settings: the YAML file of `--verl-config`, the checks on verl's keys,
//! and the Hydra overrides the driver gives verl's trainer for each round.

use std::path::PathBuf;

use floe_rounds::folder::Trainer;
use floe_rounds::Stage;
use pyo3::prelude::*;
use serde_json::{json, Map, Value};

use crate::convert::json_to_py;
use crate::convert::{from_py, object, read_text};
use crate::errors::config_text;
use crate::settings::{spec_value, RunSettings};

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

/// YAML text read by PyYAML's `safe_load` (verl's own reader), as JSON.
pub(crate) fn yaml(py: Python<'_>, text: &str, what: &str) -> PyResult<Value> {
    let v = py
        .import("yaml")?
        .call_method1("safe_load", (text,))
        .map_err(|e| config_text(format!("{what}: {}", e.value(py))))?;
    from_py(what, &v)
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

pub(crate) fn verl_file(py: Python<'_>, path: &str) -> PyResult<(Map<String, Value>, Map<String, Value>)> {
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
