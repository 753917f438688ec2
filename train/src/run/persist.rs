//! Persistence: checkpoints (the policy, AdamW's state, and as metadata the configuration and
//! the run state, written atomically), the policy files, and starting or resuming a run.

use std::collections::HashMap;
use std::path::Path;

use floe_core::rng::hash;
use tch::Tensor;

use super::{PolicyTrainee, RunState};
use crate::checkpoint;
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::model::{ModelConfig, Policy};
use crate::optim::AdamW;

/// The checkpoint format written in the metadata.
pub const FORMAT: &str = "floe-train/1";

/// A policy loaded from a checkpoint (or reference) file: its weights and model configuration.
///
/// # Errors
/// A file that is not a floe checkpoint.
pub fn load_policy(path: &Path) -> Result<Policy, TrainError> {
    let (tensors, meta) = checkpoint::load(path)?;
    let text = meta.get("model").ok_or_else(|| {
        TrainError::Input(format!("{}: no model configuration in the metadata", path.display()))
    })?;
    let model: ModelConfig = serde_json::from_str(text).map_err(|e| {
        TrainError::Input(format!(
            "{}: a model configuration this floe cannot read ({e}); checkpoints written before the \
             relative-agent model (whose layout had max_agents) no longer load: train again",
            path.display()
        ))
    })?;
    let policy = Policy::new(&model)?;
    load_weights(&policy, &tensors, "model.")
        .map_err(|m| TrainError::Input(format!("{}: {m}", path.display())))?;
    Ok(policy)
}

/// The configuration and state saved in a folder's checkpoint, if it has one.
///
/// # Errors
/// A checkpoint that cannot be read.
pub fn saved_run(out_dir: &Path) -> Result<Option<(TrainConfig, RunState)>, TrainError> {
    let path = out_dir.join("checkpoint.safetensors");
    if !path.exists() {
        return Ok(None);
    }
    let (_, meta) = checkpoint::load(&path)?;
    let get = |k: &str| {
        meta.get(k).ok_or_else(|| TrainError::Input(format!("{}: no {k} in the metadata", path.display())))
    };
    let bad = |e: serde_json::Error| TrainError::Input(format!("{}: {e}", path.display()));
    let cfg: TrainConfig = serde_json::from_str(get("config")?).map_err(bad)?;
    let state: RunState = serde_json::from_str(get("state")?).map_err(bad)?;
    Ok(Some((cfg, state)))
}

fn load_weights(policy: &Policy, tensors: &[(String, Tensor)], prefix: &str) -> Result<(), String> {
    for (name, var) in policy.named_variables() {
        let key = format!("{prefix}{name}");
        let t = tensors.iter().find(|(n, _)| *n == key).map(|(_, t)| t).ok_or(format!("no tensor {key}"))?;
        if t.size() != var.size() {
            return Err(format!("{key}: shape {:?}, the model has {:?}", t.size(), var.size()));
        }
        let mut var = var;
        tch::no_grad(|| var.copy_(t));
    }
    Ok(())
}

fn model_meta(policy: &Policy) -> HashMap<String, String> {
    HashMap::from([
        ("format".to_string(), FORMAT.to_string()),
        ("model".to_string(), serde_json::to_string(&policy.config).unwrap_or_default()),
    ])
}

/// Writes the policy alone (`reference.safetensors`, `round-<r>.safetensors`).
pub(crate) fn save_model(path: &Path, policy: &Policy) -> Result<(), TrainError> {
    let tensors: Vec<(String, Tensor)> =
        policy.named_variables().into_iter().map(|(n, t)| (format!("model.{n}"), t)).collect();
    checkpoint::save(path, &tensors, model_meta(policy))
}

/// A fresh policy (or the `init_checkpoint`'s) and its optimizer.
pub(crate) fn fresh(cfg: &TrainConfig) -> Result<(Policy, AdamW), TrainError> {
    tch::manual_seed(hash(&[cfg.seed, 0x1417]) as i64);
    let mut policy = Policy::new(&cfg.model)?;
    if let Some(init) = &cfg.init_checkpoint {
        let start = load_policy(init)?;
        if start.config != cfg.model {
            return Err(TrainError::Input(format!(
                "{}: its model configuration differs from this run's",
                init.display()
            )));
        }
        policy.vs.copy(&start.vs)?;
    }
    let opt = AdamW::new(policy.named_variables(), cfg.adam.clone());
    Ok((policy, opt))
}

/// A resumed run: the policy, AdamW's state and the run state from the folder's checkpoint;
/// `None` when there is none. A checkpoint of another model is refused here; whether the run's
/// settings are the folder's is floe-rounds' check (`RunFolder::open`, which names what
/// differs), so that a branch of a run (`RunFolder::fork`) resumes under its own settings.
pub(crate) fn restore(t: &mut PolicyTrainee<'_>, out: &Path) -> Result<Option<RunState>, TrainError> {
    let ckpt = out.join("checkpoint.safetensors");
    if !ckpt.exists() {
        return Ok(None);
    }
    let cfg = t.cfg;
    let (saved_cfg, state) = saved_run(out)?.ok_or_else(|| TrainError::Input("no checkpoint".into()))?;
    if saved_cfg.model != cfg.model {
        return Err(TrainError::Input(format!(
            "{}: written for another model; resume with its configuration (floe train --resume without --config)",
            ckpt.display()
        )));
    }
    // The trainee's policy has this configuration's model (checked above): the saved weights go
    // into it, and a new optimizer over its variables takes the saved state.
    let (tensors, meta) = checkpoint::load(&ckpt)?;
    load_weights(&t.policy, &tensors, "model.")
        .map_err(|m| TrainError::Input(format!("{}: {m}", ckpt.display())))?;
    let mut opt = AdamW::new(t.policy.named_variables(), cfg.adam.clone());
    let steps = meta.get("adam_steps").and_then(|s| s.parse().ok()).unwrap_or(0);
    opt.load_state(&tensors, steps).map_err(|m| TrainError::Input(format!("{}: {m}", ckpt.display())))?;
    t.opt = opt;
    Ok(Some(state))
}

/// Writes `checkpoint.safetensors` (atomically): the policy, AdamW's state, and as metadata the
/// configuration and `state`.
pub(crate) fn checkpoint(t: &PolicyTrainee<'_>, out: &Path, state: &RunState) -> Result<(), TrainError> {
    let mut tensors: Vec<(String, Tensor)> =
        t.policy.named_variables().into_iter().map(|(n, t)| (format!("model.{n}"), t)).collect();
    tensors.extend(t.opt.state());
    let mut meta = model_meta(&t.policy);
    meta.insert("config".into(), serde_json::to_string(t.cfg).unwrap_or_default());
    meta.insert("state".into(), serde_json::to_string(state).unwrap_or_default());
    meta.insert("adam_steps".into(), t.opt.steps.to_string());
    checkpoint::save(&out.join("checkpoint.safetensors"), &tensors, meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_of_the_absolute_agent_model_is_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.safetensors");
        let old = r#"{"d_model":16,"layers":1,"heads":2,"d_ff":32,"layout":{"max_side":6,"max_agents":4,"max_time":32}}"#;
        let meta = std::collections::HashMap::from([("model".to_string(), old.to_string())]);
        let w = Tensor::zeros([6, 16], (tch::Kind::Float, tch::Device::Cpu));
        checkpoint::save(&path, &[("model.emb_agent.weight".into(), w)], meta).unwrap();
        let err = load_policy(&path).unwrap_err().to_string();
        assert!(err.contains("max_agents") && err.contains("no longer load"), "{err}");
    }
}
