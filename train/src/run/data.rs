//! Data and validation: generating the instances of generator jobs as one stage, the fixed
//! validation set, and a stage's evaluation on it.

use std::time::Instant;

use floe_core::generator::generate_with_progress;
use floe_core::progress::{Progress, Silent};
use floe_core::rng::hash;
use floe_core::text::count;
use floe_core::{GeneratorConfig, Instance};
use serde_json::json;

use super::{Run, Stage, StageEval};
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::eval::{evaluate_each, EvalReport};

/// Generates the instances of several generator jobs, in order, as one stage of `progress`.
pub(crate) fn generate_all(
    jobs: &[GeneratorConfig],
    what: &str,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, TrainError> {
    let started = Instant::now();
    progress.begin(what, jobs.iter().map(|j| j.count as u64).sum());
    let mut out = Vec::new();
    for j in jobs {
        match generate_with_progress(j, progress) {
            Ok(v) => out.extend(v),
            Err(e) => {
                progress.end(&format!("{what}: stopped: {e}"));
                return Err(e.into());
            }
        }
    }
    progress.end(&format!(
        "{what}: {} with optimal plans in {:.1} s",
        count(out.len() as u64, "instance", "instances"),
        started.elapsed().as_secs_f64()
    ));
    Ok(out)
}

/// The fixed validation set of a configuration.
///
/// # Errors
/// A setting the generator cannot meet.
pub fn validation_set(cfg: &TrainConfig) -> Result<Vec<Instance>, TrainError> {
    validation_set_with_progress(cfg, &Silent)
}

pub(crate) fn validation_set_with_progress(
    cfg: &TrainConfig,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, TrainError> {
    let v = &cfg.validation;
    let mut jobs = Vec::new();
    for &k in &v.agents {
        for &size in &v.sizes {
            let seed = hash(&[v.seed, u64::from(k), u64::from(size)]);
            jobs.push(
                GeneratorConfig::default()
                    .size(size)
                    .agents(k as usize)
                    .hole_ratio(v.hole_ratio)
                    .wait_ratio(v.wait_ratio)
                    .count(v.per_cell)
                    .seed(seed),
            );
        }
    }
    generate_all(&jobs, "validation set", progress)
}

impl Run<'_> {
    /// Greedy answers to the validation set: the stage's [`StageEval`] (kept in the state) and a
    /// line of `rounds.jsonl`.
    pub(crate) fn evaluate(&mut self, stage: Stage) -> Result<EvalReport, TrainError> {
        let refs: Vec<&Instance> = self.validation.iter().collect();
        let t0 = Instant::now();
        self.progress.begin("validation", refs.len() as u64);
        let report = match evaluate_each(&self.policy, &refs, self.cfg.eval_batch, self.progress) {
            Ok((report, _)) => report,
            Err(e) => {
                self.progress.end(&format!("{stage}: validation stopped: {e}"));
                return Err(e);
            }
        };
        let (valid, optimal) = report.overall();
        let e = StageEval {
            stage,
            valid,
            optimal,
            grpo_step: self.state.grpo_steps,
            train_s: self.train_s(),
            report: report.clone(),
        };
        let mut line = json!({
            "stage": stage, "valid_rate": valid, "optimal_rate": optimal, "grpo_step": e.grpo_step,
            "train_s": e.train_s, "elapsed_s": self.started.elapsed().as_secs_f64(),
            "per_size": report.size_results(), "report": report.to_json(),
        });
        if let (Stage::Round(_), Some(last)) = (stage, self.state.history.last()) {
            line["round"] = last.round.into();
            line["config"] = serde_json::to_value(&last.config).unwrap_or_default();
        }
        self.rounds.write(&line)?;
        self.progress.end(&format!(
            "{stage}: validation valid {:.1}%, optimal {:.1}% ({} instances, {:.0} s)",
            100.0 * valid,
            100.0 * optimal,
            refs.len(),
            t0.elapsed().as_secs_f64()
        ));
        self.state.evals.push(e);
        Ok(report)
    }
}
