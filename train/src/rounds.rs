//! The closed loop: an evaluation of the untrained policy, the supervised warm start, then per
//! round (1) the curriculum's configuration, (2) the round's training set drawn from it (per map
//! size `data_ratio` of the sample budget, at its `hole_ratio` and `wait_ratio`), (3) `epochs`
//! passes of GRPO over it, (4) greedy validation on the fixed set, with failures counted by kind
//! per map size, which (5) go into the history the curriculum reads for the next round.
//!
//! # Files in the output folder
//! | file | what |
//! |---|---|
//! | `checkpoint.safetensors` | the policy (`model.*`), AdamW's moments (`adam.*`), and as metadata the configuration and the run state; written atomically after the warm start and after every round |
//! | `reference.safetensors` | the policy after the warm start (GRPO's KL reference) |
//! | `round-<r>.safetensors` | the policy after round r |
//! | `steps.jsonl` | one line per optimizer step (loss, KL, reward, entropy, sampled valid/optimal rates, …) |
//! | `rounds.jsonl` | one line per evaluation stage (untrained or initial checkpoint, warm start, each round): rates, failures per size, configuration |
//! | `eval.md`, `eval.json` | the last validation as the paper's tables |
//! | `sft_loss.png`, `grpo.png`, `per_size.png` | learning curves and validation valid rate per map size |
//!
//! # Resuming
//! With `resume`, a run continues from `checkpoint.safetensors`: finished stages stay as they
//! are, the metrics files are cut back to their length at that checkpoint, the curriculum is
//! replayed on the recorded history (so a stateful one is where it was), and the unfinished
//! round starts again from its beginning. Every random choice is keyed by (seed, stage, step),
//! so the resumed run computes what the uninterrupted one would have.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use floe_core::engine::InstancePool;
use floe_core::generator::generate_with_progress;
use floe_core::progress::{Lines, Progress, Silent};
use floe_core::rng::{hash, Rng};
use floe_core::text::count;
use floe_core::{GeneratorConfig, Instance};
use floe_plugin_api::{History, RoundConfig, RoundRecord};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tch::Tensor;

use crate::checkpoint;
use crate::config::TrainConfig;
use crate::error::TrainError;
use crate::eval::{evaluate_each, EvalReport};
use crate::grpo::{self, ScoredRollouts};
use crate::metrics::JsonLines;
use crate::model::{ModelConfig, Policy};
use crate::optim::AdamW;
use crate::plot::{moving_average, Chart, Series};
use crate::reward::{located_legal_steps, rewards, verify_plans, DecodedPlan};
use crate::sample::{decode, Decode};
use crate::sft;

const TAG_SFT: u64 = 0x5f7;
const TAG_ROUND: u64 = 0x40d;
const TAG_GRPO: u64 = 0x6290;
/// The checkpoint format written in the metadata.
pub const FORMAT: &str = "floe-train/1";

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Output folder (created if missing).
    pub out_dir: PathBuf,
    /// Continue from the folder's checkpoint, if there is one.
    pub resume: bool,
    /// One line per stage on stderr, with [`run`] ([`run_with_progress`] takes any
    /// [`Progress`] instead).
    pub progress: bool,
    /// Stop with [`TrainError::Interrupted`] before GRPO step `n` (counted over the whole run):
    /// a stand-in for a killed process, for tests.
    pub stop_before_grpo_step: Option<u64>,
}

/// One evaluation of the validation set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageEval {
    /// `untrained` (`initial checkpoint` with `init_checkpoint`), `warm start`, `warm start @<n>`,
    /// or `round <r>`.
    pub stage: String,
    pub valid: f64,
    pub optimal: f64,
    /// GRPO steps taken before it.
    pub grpo_step: u64,
    /// Seconds of training (warm start and GRPO, not evaluation) before it.
    pub train_s: f64,
    pub report: EvalReport,
}

/// Where a run stands; saved in every checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub warm_start_done: bool,
    pub rounds_done: u32,
    pub history: History,
    pub evals: Vec<StageEval>,
    /// (step, loss) of the warm start.
    pub sft_curve: Vec<(u64, f64)>,
    /// (step, mean reward, sampled valid rate) of GRPO.
    pub grpo_curve: Vec<(u64, f64, f64)>,
    pub sft_steps: u64,
    pub grpo_steps: u64,
    /// Seconds spent training (warm start and GRPO), over every resumption.
    pub train_s: f64,
    /// Bytes of `steps.jsonl` and `rounds.jsonl` at this checkpoint.
    pub steps_len: u64,
    pub rounds_len: u64,
}

/// A policy loaded from a checkpoint (or reference) file: its weights and model configuration.
///
/// # Errors
/// A file that is not a floe checkpoint.
pub fn load_policy(path: &Path) -> Result<Policy, TrainError> {
    let (tensors, meta) = checkpoint::load(path)?;
    let model: ModelConfig =
        meta.get("model").and_then(|m| serde_json::from_str(m).ok()).ok_or_else(|| {
            TrainError::Input(format!("{}: no model configuration in the metadata", path.display()))
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

fn save_model(path: &Path, policy: &Policy) -> Result<(), TrainError> {
    let tensors: Vec<(String, Tensor)> =
        policy.named_variables().into_iter().map(|(n, t)| (format!("model.{n}"), t)).collect();
    checkpoint::save(path, &tensors, model_meta(policy))
}

/// Generates the instances of several generator jobs, in order, as one stage of `progress`.
fn generate_all(
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

fn validation_set_with_progress(
    cfg: &TrainConfig,
    progress: &dyn Progress,
) -> Result<Vec<Instance>, TrainError> {
    let v = &cfg.validation;
    let mut jobs = Vec::new();
    for &k in &v.agents {
        for &size in &v.sizes {
            let seed = hash(&[v.seed, u64::from(k), u64::from(size)]);
            jobs.push(GeneratorConfig::square(
                size,
                k as usize,
                v.hole_ratio,
                v.wait_ratio,
                v.per_cell,
                seed,
            ));
        }
    }
    generate_all(&jobs, "validation set", progress)
}

struct Run<'a> {
    cfg: &'a TrainConfig,
    opts: &'a RunOptions,
    progress: &'a dyn Progress,
    policy: Policy,
    opt: AdamW,
    state: RunState,
    steps: JsonLines,
    rounds: JsonLines,
    validation: Vec<Instance>,
    started: Instant,
    /// `state.train_s` when this process started.
    train_s0: f64,
    /// Seconds of training in this process.
    trained: f64,
}

impl Run<'_> {
    fn say(&self, line: &str) {
        self.progress.line(line);
    }

    fn train_s(&self) -> f64 {
        self.train_s0 + self.trained
    }

    fn checkpoint(&mut self) -> Result<(), TrainError> {
        self.state.steps_len = self.steps.flushed_len()?;
        self.state.rounds_len = self.rounds.flushed_len()?;
        self.state.train_s = self.train_s();
        let mut tensors: Vec<(String, Tensor)> =
            self.policy.named_variables().into_iter().map(|(n, t)| (format!("model.{n}"), t)).collect();
        tensors.extend(self.opt.state());
        let mut meta = model_meta(&self.policy);
        meta.insert("config".into(), serde_json::to_string(self.cfg).unwrap_or_default());
        meta.insert("state".into(), serde_json::to_string(&self.state).unwrap_or_default());
        meta.insert("adam_steps".into(), self.opt.steps.to_string());
        checkpoint::save(&self.opts.out_dir.join("checkpoint.safetensors"), &tensors, meta)
    }

    fn evaluate(&mut self, stage: &str) -> Result<EvalReport, TrainError> {
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
            stage: stage.to_string(),
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
        if let Some(last) = self.state.history.last().filter(|_| stage.starts_with("round")) {
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

    fn warm_start(&mut self) -> Result<(), TrainError> {
        let cfg: &TrainConfig = self.cfg;
        let w = &cfg.warm_start;
        let seed = self.cfg.seed;
        let data = generate_all(
            &w.data.generator_configs(w.samples, hash(&[seed, TAG_SFT])),
            "warm-start data",
            self.progress,
        )?;
        let seqs = sft::sequences(&self.policy, &data)?;
        let t_stage = Instant::now();
        self.progress.begin("warm start", w.steps as u64);
        let mut last = (f64::NAN, f64::NAN);
        let (mut order, mut epoch, mut at) = (Vec::new(), 0u64, usize::MAX);
        for step in 0..w.steps {
            if at + w.batch_size > seqs.len() || at == usize::MAX {
                order = (0..seqs.len()).collect();
                Rng::from_counters(&[seed, TAG_SFT, epoch]).shuffle(&mut order);
                (epoch, at) = (epoch + 1, 0);
            }
            let batch: Vec<&crate::tokens::Sequence> =
                order[at..(at + w.batch_size).min(seqs.len())].iter().map(|&i| &seqs[i]).collect();
            at += w.batch_size;
            let t0 = Instant::now();
            let lr = w.lr_at(step);
            let s = sft::step(&self.policy, &mut self.opt, &batch, lr, w.max_grad_norm);
            let dt = t0.elapsed().as_secs_f64();
            self.trained += dt;
            self.steps.write(&json!({
                "phase": "warm_start", "step": step, "loss": s.loss, "accuracy": s.accuracy, "lr": lr,
                "grad_norm": s.grad_norm, "tokens": s.tokens, "tokens_per_s": s.tokens as f64 / dt.max(1e-9),
                "train_s": self.train_s(),
            }))?;
            self.state.sft_curve.push((step as u64, s.loss));
            self.state.sft_steps = step as u64 + 1;
            last = (s.loss, s.accuracy);
            self.progress.advance(1, &format!("loss {:.3} acc {:.3}", s.loss, s.accuracy));
            if w.eval_every > 0 && (step + 1) % w.eval_every == 0 && step + 1 < w.steps {
                self.evaluate(&format!("warm start @{}", step + 1))?;
            }
        }
        self.progress.end(&format!(
            "warm start: {} in {:.0} s (last loss {:.3}, token accuracy {:.3})",
            count(w.steps as u64, "step", "steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn round(
        &mut self,
        r: u32,
        config: RoundConfig,
        reference: Option<&Policy>,
        reward: &mut dyn floe_plugin_api::RewardFn,
    ) -> Result<(), TrainError> {
        let cfg = self.cfg;
        let g = cfg.grpo.group_size;
        let train = generate_all(
            &config.generator_configs(cfg.rounds.samples, hash(&[cfg.seed, TAG_ROUND, r.into()])),
            &format!("round {r} data"),
            self.progress,
        )?;
        let pool = InstancePool::new(&train, false)?;
        self.say(&format!(
            "round {r}: {} training instances, configuration {}",
            train.len(),
            config.to_json()
        ));
        let per_epoch = train.len().div_ceil(cfg.grpo.prompts_per_step);
        let t_stage = Instant::now();
        self.progress.begin(&format!("round {r}"), (per_epoch * cfg.rounds.epochs as usize) as u64);
        let steps0 = self.state.grpo_steps;
        let mut last = (f64::NAN, f64::NAN);
        let mut abs_adv: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
        for epoch in 0..cfg.rounds.epochs {
            let mut order: Vec<usize> = (0..train.len()).collect();
            Rng::from_counters(&[cfg.seed, TAG_ROUND, r.into(), epoch.into()]).shuffle(&mut order);
            let mut at = 0;
            while at < order.len() {
                if self.opts.stop_before_grpo_step == Some(self.state.grpo_steps) {
                    self.progress.end(&format!("round {r}: interrupted"));
                    return Err(TrainError::Interrupted(format!(
                        "before GRPO step {}",
                        self.state.grpo_steps
                    )));
                }
                let t0 = Instant::now();
                tch::manual_seed(hash(&[cfg.seed, TAG_GRPO, self.state.grpo_steps]) as i64);
                let pool_left = &order[at..];
                let mut sampled = Sampled::default();
                let draw = grpo::draw_groups(pool_left.len(), &cfg.grpo, |range| {
                    sample_groups(
                        &self.policy,
                        &pool,
                        &train,
                        &pool_left[range],
                        &mut *reward,
                        cfg,
                        &mut sampled,
                    )
                })?;
                at += draw.drawn;
                for (&i, a) in sampled.idx.iter().zip(&sampled.adv) {
                    let e = abs_adv.entry(train[i as usize].grid.width()).or_default();
                    (e.0, e.1) = (e.0 + f64::from(a.abs()), e.1 + 1);
                }
                let scored = sampled.rollouts(&train, &draw.used, g);
                let sample_s = t0.elapsed().as_secs_f64();
                // The share of the run's prompts drawn before this step.
                let passes = f64::from(cfg.rounds.rounds) * f64::from(cfg.rounds.epochs);
                let done = f64::from(r * cfg.rounds.epochs + epoch)
                    + (at - draw.drawn) as f64 / train.len().max(1) as f64;
                let step_cfg = grpo::GrpoConfig { lr: cfg.grpo.lr_at(done / passes), ..cfg.grpo.clone() };
                let st = grpo::update(&self.policy, reference, &mut self.opt, &scored, &step_cfg)?;
                let step_s = t0.elapsed().as_secs_f64();
                self.trained += step_s;
                let mut line = serde_json::to_value(&st).unwrap_or_default();
                line["phase"] = "grpo".into();
                line["round"] = r.into();
                line["epoch"] = epoch.into();
                line["lr"] = step_cfg.lr.into();
                line["step"] = self.state.grpo_steps.into();
                line["train_s"] = self.train_s().into();
                line["sample_s"] = sample_s.into();
                line["update_s"] = (step_s - sample_s).into();
                if cfg.grpo.dynamic_sampling {
                    line["groups_sampled"] = draw.drawn.into();
                    line["gen_batches"] = draw.batches.into();
                }
                self.steps.write(&line)?;
                self.state.grpo_curve.push((self.state.grpo_steps, st.reward, st.valid));
                self.state.grpo_steps += 1;
                last = (st.reward, st.valid);
                self.progress
                    .advance(1, &format!("reward {:.3} valid {:.2} kl {:.4}", st.reward, st.valid, st.kl));
            }
        }
        self.progress.end(&format!(
            "round {r}: {} in {:.0} s (last reward {:.3}, sampled valid {:.2})",
            count(self.state.grpo_steps - steps0, "GRPO step", "GRPO steps"),
            t_stage.elapsed().as_secs_f64(),
            last.0,
            last.1
        ));
        let stage = format!("round {r}");
        // The round's record first, so that the evaluation line carries its configuration.
        self.state.history.rounds.push(RoundRecord { round: r, config, results: Vec::new() });
        let report = self.evaluate(&stage)?;
        let mut results = report.size_results();
        for res in &mut results {
            if let Some(&(sum, n)) = abs_adv.get(&res.size) {
                res.mean_abs_advantage = Some(sum / f64::from(n.max(1)));
            }
        }
        if let Some(last) = self.state.history.rounds.last_mut() {
            last.results = results;
        }
        self.state.history.validate()?;
        self.state.rounds_done = r + 1;
        self.checkpoint()?;
        // After the checkpoint: a round's file on disk means the checkpoint holds that round.
        save_model(&self.opts.out_dir.join(format!("round-{r}.safetensors")), &self.policy)?;
        plots(&self.opts.out_dir, &self.state)?;
        Ok(())
    }
}

/// The groups sampled for one step, in draw order: per answer, its instance (an index into the
/// round's training set), tokens, reward, verdict and advantage.
#[derive(Default)]
struct Sampled {
    idx: Vec<u32>,
    tokens: Vec<Vec<i64>>,
    rewards: Vec<f32>,
    adv: Vec<f32>,
    valid: Vec<bool>,
    optimal: Vec<bool>,
    legal_steps: Vec<u32>,
}

impl Sampled {
    /// The rollouts of the groups `used` (positions in draw order) of `g` answers each.
    fn rollouts<'a>(&self, train: &'a [Instance], used: &[usize], g: usize) -> ScoredRollouts<'a> {
        let rows: Vec<usize> = used.iter().flat_map(|&u| u * g..(u + 1) * g).collect();
        ScoredRollouts {
            instances: rows.iter().map(|&i| &train[self.idx[i] as usize]).collect(),
            answers: rows.iter().map(|&i| self.tokens[i].clone()).collect(),
            rewards: rows.iter().map(|&i| self.rewards[i]).collect(),
            valid: rows.iter().map(|&i| self.valid[i]).collect(),
            optimal: rows.iter().map(|&i| self.optimal[i]).collect(),
            legal_steps: rows.iter().map(|&i| self.legal_steps[i]).collect(),
        }
    }
}

/// Samples `group_size` answers to each of `prompts` (indices into `train`), verifies and scores
/// them, appends them to `out`, and tells for each group whether its rewards have a spread.
fn sample_groups(
    policy: &Policy,
    pool: &InstancePool,
    train: &[Instance],
    prompts: &[usize],
    reward: &mut dyn floe_plugin_api::RewardFn,
    cfg: &TrainConfig,
    out: &mut Sampled,
) -> Result<Vec<bool>, TrainError> {
    let g = cfg.grpo.group_size;
    let idx: Vec<u32> = prompts.iter().flat_map(|&i| std::iter::repeat_n(i as u32, g)).collect();
    let insts: Vec<&Instance> = idx.iter().map(|&i| &train[i as usize]).collect();
    let answers =
        decode(policy, &insts, Decode::Sample { temperature: cfg.grpo.temperature }, cfg.eval_batch.max(g))?;
    let (plans, tokens): (Vec<DecodedPlan>, Vec<Vec<i64>>) =
        answers.into_iter().map(|a| (a.plan, a.tokens)).unzip();
    let (outs, records) = verify_plans(pool, &idx, &insts, &plans)?;
    let rw = rewards(reward, &records)?;
    let (adv, _) = grpo::advantages(&rw, g, &cfg.grpo);
    let spread = rw.chunks(g).map(grpo::has_spread).collect();
    out.idx.extend(idx);
    out.tokens.extend(tokens);
    out.rewards.extend(rw);
    out.adv.extend(adv);
    out.valid.extend(outs.iter().map(|o| o.valid == 1));
    out.optimal.extend(outs.iter().map(|o| o.optimal == 1));
    out.legal_steps.extend(outs.iter().map(located_legal_steps));
    Ok(spread)
}

/// Runs (or, with `opts.resume`, continues) the loop; returns the final state.
///
/// # Errors
/// Bad configurations, plugin and generator failures, I/O errors; a resumed run whose
/// checkpoint was written with another configuration; [`TrainError::Interrupted`] from
/// `stop_before_grpo_step`.
pub fn run(cfg: &TrainConfig, opts: &RunOptions) -> Result<RunState, TrainError> {
    let lines = Lines { prefix: "floe train: ".into() };
    run_with_progress(cfg, opts, if opts.progress { &lines } else { &Silent })
}

/// As [`run`], reporting progress to `progress` (`opts.progress` is not read).
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    cfg: &TrainConfig,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunState, TrainError> {
    cfg.validate()?;
    let started = Instant::now();
    let out = &opts.out_dir;
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    crate::set_threads(cfg.threads);
    let ckpt = out.join("checkpoint.safetensors");
    let resuming = opts.resume && ckpt.exists();
    let (policy, opt, state) = if resuming {
        let (saved_cfg, state) = saved_run(out)?.ok_or_else(|| TrainError::Input("no checkpoint".into()))?;
        if &saved_cfg != cfg {
            return Err(TrainError::Input(format!(
                "{}: written with another configuration; resume with that one (floe train --resume without --config)",
                ckpt.display()
            )));
        }
        let (tensors, meta) = checkpoint::load(&ckpt)?;
        let policy = Policy::new(&cfg.model)?;
        load_weights(&policy, &tensors, "model.")
            .map_err(|m| TrainError::Input(format!("{}: {m}", ckpt.display())))?;
        let mut opt = AdamW::new(policy.named_variables(), cfg.adam.clone());
        let steps = meta.get("adam_steps").and_then(|s| s.parse().ok()).unwrap_or(0);
        opt.load_state(&tensors, steps).map_err(|m| TrainError::Input(format!("{}: {m}", ckpt.display())))?;
        (policy, opt, state)
    } else {
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
        (policy, opt, RunState::default())
    };
    let keep = |len| resuming.then_some(len);
    let mut run = Run {
        cfg,
        opts,
        progress,
        steps: JsonLines::open(&out.join("steps.jsonl"), keep(state.steps_len))?,
        rounds: JsonLines::open(&out.join("rounds.jsonl"), keep(state.rounds_len))?,
        train_s0: state.train_s,
        policy,
        opt,
        state,
        validation: validation_set_with_progress(cfg, progress)?,
        started,
        trained: 0.0,
    };
    run.say(&format!(
        "{} parameters, {} validation instances, output in {}{}",
        run.policy.num_parameters(),
        run.validation.len(),
        out.display(),
        if resuming { " (resumed)" } else { "" }
    ));
    let mut reward = cfg.rounds.reward.reward()?;
    let mut curriculum = cfg.rounds.curriculum.curriculum()?;
    if !run.state.warm_start_done {
        if run.state.evals.is_empty() {
            let stage = if cfg.init_checkpoint.is_some() { "initial checkpoint" } else { "untrained" };
            run.evaluate(stage)?;
        }
        if cfg.warm_start.steps > 0 {
            run.warm_start()?;
            run.evaluate("warm start")?;
        }
        run.state.warm_start_done = true;
        save_model(&out.join("reference.safetensors"), &run.policy)?;
        run.checkpoint()?;
        plots(out, &run.state)?;
    }
    let reference = if cfg.grpo.beta > 0.0 && cfg.rounds.rounds > run.state.rounds_done {
        Some(load_policy(&out.join("reference.safetensors"))?)
    } else {
        None
    };
    // Replay the curriculum on the recorded history, so that a stateful one is where it was.
    for r in 0..run.state.rounds_done as usize {
        let past = History { rounds: run.state.history.rounds[..r].to_vec() };
        if r > 0 || cfg.rounds.round0.is_none() {
            curriculum.plugin.next_config(&past)?;
        }
    }
    for r in run.state.rounds_done..cfg.rounds.rounds {
        let config = match (&cfg.rounds.round0, r) {
            (Some(c), 0) => c.clone(),
            _ => curriculum.plugin.next_config(&run.state.history)?,
        };
        config.validate()?;
        run.round(r, config, reference.as_ref(), reward.plugin.as_mut())?;
    }
    if let Some(last) = run.state.evals.last() {
        let report = &last.report;
        let md = format!("# Validation after {}\n\n{}", last.stage, report.to_markdown());
        let write = |name: &str, text: String| {
            let p = out.join(name);
            std::fs::write(&p, text).map_err(|e| TrainError::io(&p, e))
        };
        write("eval.md", md)?;
        write("eval.json", serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n")?;
    }
    plots(out, &run.state)?;
    run.say(&format!(
        "done: {:.0} s of training, {:.0} s in all",
        run.train_s(),
        started.elapsed().as_secs_f64()
    ));
    Ok(run.state)
}

/// Writes the run's plots into `out`.
///
/// # Errors
/// I/O errors.
pub fn plots(out: &Path, state: &RunState) -> Result<(), TrainError> {
    if !state.sft_curve.is_empty() {
        let chart = Chart {
            title: "warm start: cross-entropy per answer token".into(),
            x_label: "step".into(),
            y_range: None,
            series: vec![Series {
                name: "loss".into(),
                points: state.sft_curve.iter().map(|&(s, l)| (s as f64, l)).collect(),
                dots: false,
            }],
            x_names: vec![],
        };
        chart.draw(640, 360).save_png(&out.join("sft_loss.png"))?;
    }
    if !state.grpo_curve.is_empty() {
        let rounds: Vec<(f64, f64)> = state
            .evals
            .iter()
            .filter(|e| e.stage == "warm start" || e.stage.starts_with("round"))
            .map(|e| (e.grpo_step as f64, e.valid))
            .collect();
        let chart = Chart {
            title: "GRPO: sampled reward and valid rate (moving mean of 16 steps); validation".into(),
            x_label: "GRPO step".into(),
            y_range: Some((0.0, 1.0)),
            series: vec![
                Series {
                    name: "reward".into(),
                    points: moving_average(
                        &state.grpo_curve.iter().map(|&(s, r, _)| (s as f64, r)).collect::<Vec<_>>(),
                        16,
                    ),
                    dots: false,
                },
                Series {
                    name: "valid (sampled)".into(),
                    points: moving_average(
                        &state.grpo_curve.iter().map(|&(s, _, v)| (s as f64, v)).collect::<Vec<_>>(),
                        16,
                    ),
                    dots: false,
                },
                Series { name: "valid (validation)".into(), points: rounds, dots: true },
            ],
            x_names: vec![],
        };
        chart.draw(720, 400).save_png(&out.join("grpo.png"))?;
    }
    if !state.evals.is_empty() {
        let mut by_size: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
        for (i, e) in state.evals.iter().enumerate() {
            for r in e.report.size_results() {
                by_size.entry(r.size).or_default().push((i as f64, r.valid_rate));
            }
        }
        let names = state
            .evals
            .iter()
            .map(|e| match e.stage.as_str() {
                "untrained" | "initial checkpoint" => "init".to_string(),
                "warm start" => "sft".to_string(),
                s => s.replace("warm start @", "").replace("round ", "r"),
            })
            .collect();
        let chart = Chart {
            title: "validation valid rate per map size".into(),
            x_label: "stage".into(),
            y_range: Some((0.0, 1.0)),
            series: by_size
                .into_iter()
                .map(|(s, points)| Series { name: format!("{s}x{s}"), points, dots: true })
                .collect(),
            x_names: names,
        };
        chart.draw(640, 360).save_png(&out.join("per_size.png"))?;
    }
    Ok(())
}
