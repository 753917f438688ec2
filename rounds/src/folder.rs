//! The run folder: every file the protocol writes, written and read here and nowhere else.
//!
//! | path | what |
//! |---|---|
//! | `config.json` | the run's settings as the trainee's driver gives them (`floe train`'s configuration; a language model's run its [`crate::RunRecord`]); a resumed run must have the same |
//! | `state.json` | where the run stands ([`RunState`]), written atomically after every stage: the history, how each round's configuration came about, the evaluations, the replay pool's statistics, the lengths of the metrics files |
//! | `steps.jsonl` | one line per training step (warm start and GRPO), as the trainee reports them |
//! | `rounds.jsonl` | one line per evaluation stage (before training, warm start, each round): rates, failures per size, the round's configuration and how it came about, the trainee's figures |
//! | `engineer/round-<r>/` | with an engineer: `context.md` and `limits.json` (what it was given, written before it is asked), `reply.txt` (its reply), `reply-1.txt`, `reply-2.txt`, … (a language model's raw replies, one a file, in order), `config.json` (the configuration applied), `rationale.txt`, `log.txt` (what was clamped or retried, or why the previous configuration stood) |
//! | `validation/round-<r>.md` | round r's validation as the paper's tables |
//! | `validation/<stage>.jsonl` | every validation answer of a stage (`untrained`, `warm-start`, `round-<r>`, …), a line each in the validation set's order: its agents and size, the answer (a written answer's text, a decoded plan's moves), and its verdict (`valid`, `optimal`, `failure`, `soc`, `optimal_soc`); what paired comparisons between stages read; the stage's line of `rounds.jsonl` names it (`answers`) |
//! | `eval.md`, `eval.json` | the last validation as tables |
//!
//! The trainee keeps its models beside them (floe's policy: `checkpoint.safetensors`,
//! `reference.safetensors`, `round-<r>.safetensors`; a Hugging Face model: `round-<r>/`,
//! `warm-start/`), and a trainer of its own its files in its folder ([`RunFolder::trainer_dir`]):
//! `trl/round-<r>/`, `trl/warm-start/` (TRL's output folders), `verl/round-<r>/` (verl's data,
//! checkpoints, log and command of the round) and `verl/validation.parquet`.
//!
//! A stage's files are written before `state.json` counts it: a run killed at any point resumes
//! from the last stage that `state.json` counts (or the trainee's own saved state, when it saves
//! its model and the state together), with the metrics files cut back to their lengths then.

use std::path::{Path, PathBuf};

use floe_core::{FailureKind, Instance};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{RoundConfig, VerdictRecord};

use crate::error::RoundsError;
use crate::limits::Adopted;
use crate::metrics::JsonLines;
use crate::report::{EvalReport, Outcome};
use crate::state::{RunState, Stage};
use crate::verdicts::Answer;
use serde::{Deserialize, Serialize};

/// The format written in `state.json`.
pub const STATE_FORMAT: &str = "floe-rounds/2";

/// The engineer's files of a round, in the order `floe engineer --run` shows them (the raw
/// replies `reply-<n>.txt` come after `reply.txt`).
pub const ENGINEER_FILES: [&str; 5] = ["context.md", "reply.txt", "config.json", "rationale.txt", "log.txt"];

/// The name a stage after training gives its files and folders (`round-<r>`, `warm-start`): a
/// model's folder, a trainer's, an engineer's, a round's tables, floe-train's round checkpoint;
/// None for the stages before training.
#[must_use]
pub fn stage_name(stage: Stage) -> Option<String> {
    match stage {
        Stage::Round(r) => Some(format!("round-{r}")),
        Stage::WarmStart => Some("warm-start".into()),
        _ => None,
    }
}

/// The trainers of their own a run's models may come from, each with its folder in the run
/// folder ([`RunFolder::trainer_dir`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trainer {
    /// TRL's `GRPOTrainer` (`python -m floe.rounds`): `trl/`.
    Trl,
    /// verl's trainer (`python -m floe.verl`): `verl/`.
    Verl,
}

impl Trainer {
    /// Its name, which is its folder's.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Trainer::Trl => "trl",
            Trainer::Verl => "verl",
        }
    }
}

impl std::str::FromStr for Trainer {
    type Err = RoundsError;

    fn from_str(s: &str) -> Result<Self, RoundsError> {
        match s {
            "trl" => Ok(Trainer::Trl),
            "verl" => Ok(Trainer::Verl),
            other => Err(RoundsError::Input(format!("trainer {other:?}: trl or verl"))),
        }
    }
}

/// One run's folder.
#[derive(Debug, Clone)]
pub struct RunFolder {
    root: PathBuf,
}

fn write(path: &Path, text: &str) -> Result<(), RoundsError> {
    std::fs::write(path, text).map_err(|e| RoundsError::io(path, e))
}

/// Writes `bytes` to `path` atomically: into a hidden temporary file beside it (`.<name>.tmp`),
/// synced, renamed over `path`, and the folder synced, so that `path` is always whole. The run
/// state, the settings and floe-train's checkpoints are written so.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RoundsError> {
    use std::io::Write;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map_or("file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| RoundsError::io(path, e))
}

/// Copies the files under `from` into `to`, folders included (hidden temporary files left out).
fn copy_tree(from: &Path, to: &Path) -> Result<(), RoundsError> {
    std::fs::create_dir_all(to).map_err(|e| RoundsError::io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| RoundsError::io(from, e))? {
        let entry = entry.map_err(|e| RoundsError::io(from, e))?;
        let (src, name) = (entry.path(), entry.file_name());
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let dst = to.join(&name);
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| RoundsError::io(&dst, e))?;
        }
    }
    Ok(())
}

fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

impl RunFolder {
    /// The folder at `root` (nothing is created until a run starts).
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunFolder { root: root.into() }
    }

    /// The folder's path.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A path inside the folder.
    #[must_use]
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.root.join(name)
    }

    /// Where a trainee that keeps its model as a folder (a Hugging Face model) keeps the model
    /// after `stage`: `round-<r>/`, `warm-start/`; None for the stages before training.
    #[must_use]
    pub fn model_dir(&self, stage: Stage) -> Option<PathBuf> {
        stage_name(stage).map(|name| self.root.join(name))
    }

    /// The folder of a trainer of its own (`trl/`, `verl/`): its files of the whole run (verl's
    /// validation set).
    #[must_use]
    pub fn trainer_root(&self, trainer: Trainer) -> PathBuf {
        self.root.join(trainer.name())
    }

    /// Where a trainer of its own keeps its files of `stage` (its data, checkpoints, log and
    /// command): `<trainer>/round-<r>/`, `<trainer>/warm-start/`; None for the stages before
    /// training.
    #[must_use]
    pub fn trainer_dir(&self, trainer: Trainer, stage: Stage) -> Option<PathBuf> {
        stage_name(stage).map(|name| self.trainer_root(trainer).join(name))
    }

    /// The model folder ([`Self::model_dir`]) a run resumed at `state` continues from: its last
    /// finished round's, else its warm start's when that folder is there; None: the run's own
    /// model.
    #[must_use]
    pub fn resume_model_dir(&self, state: &RunState) -> Option<PathBuf> {
        match state.rounds_done {
            0 => self.model_dir(Stage::WarmStart).filter(|d| state.warm_start_done && d.is_dir()),
            n => self.model_dir(Stage::Round(n - 1)),
        }
    }

    /// The folder of round `r`'s engineer files.
    #[must_use]
    pub fn engineer_dir(&self, r: u32) -> PathBuf {
        self.root.join("engineer").join(stage_name(Stage::Round(r)).unwrap_or_default())
    }

    /// Opens the folder for a run with `settings` (`config.json`). With no `state`, a new run:
    /// a folder that holds a run already is refused unless `overwrite`, then the settings and
    /// empty metrics files are written. With the `state` of a run to resume, its settings are
    /// checked against `settings` and its metrics files cut back to the lengths it records.
    /// Returns the metrics files (`steps.jsonl`, `rounds.jsonl`), open for appending.
    ///
    /// # Errors
    /// A folder holding another run, or one written with other settings; I/O errors.
    pub fn open(
        &self,
        settings: &serde_json::Value,
        state: Option<&RunState>,
        overwrite: bool,
    ) -> Result<(JsonLines, JsonLines), RoundsError> {
        std::fs::create_dir_all(&self.root).map_err(|e| RoundsError::io(&self.root, e))?;
        let config = self.join("config.json");
        let Some(state) = state else {
            if !overwrite && self.join("state.json").exists() {
                return Err(RoundsError::Input(format!(
                    "{}: holds a run already (state.json); resume it, or choose another folder",
                    self.root.display()
                )));
            }
            write_atomic(&config, pretty(settings).as_bytes())?;
            let _ = std::fs::remove_file(self.join("state.json"));
            let steps = JsonLines::open(&self.join("steps.jsonl"), None)?;
            let rounds = JsonLines::open(&self.join("rounds.jsonl"), None)?;
            return Ok((steps, rounds));
        };
        let was = self.settings()?.unwrap_or(serde_json::Value::Null);
        if &was != settings {
            let changed: Vec<String> = match (&was, settings) {
                (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
                    keys.sort();
                    keys.dedup();
                    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect()
                }
                _ => vec!["the settings".into()],
            };
            return Err(RoundsError::Input(format!(
                "{}: written with other settings ({} differ); resume with the same ones",
                config.display(),
                changed.join(", ")
            )));
        }
        let steps = JsonLines::open(&self.join("steps.jsonl"), Some(state.steps_len))?;
        let rounds = JsonLines::open(&self.join("rounds.jsonl"), Some(state.rounds_len))?;
        Ok((steps, rounds))
    }

    /// A branch of the run at `to`: every file of the folder copied (its state, its metrics,
    /// whatever the trainee saved beside them), and `settings` as the branch's own. A run
    /// resumed in the branch goes on from where this one stands under the new settings; they
    /// must agree with this run's on every finished round (the driver checks only that a
    /// resumed run's settings are its folder's), as a design for the next round alone does.
    ///
    /// # Errors
    /// No run here to branch, a `to` that holds a run already, I/O errors.
    pub fn fork(
        &self,
        to: impl Into<PathBuf>,
        settings: &serde_json::Value,
    ) -> Result<RunFolder, RoundsError> {
        let branch = RunFolder::new(to);
        if self.read_state()?.is_none() {
            return Err(RoundsError::Input(format!("{}: no run to branch", self.root.display())));
        }
        if branch.join("state.json").exists() {
            return Err(RoundsError::Input(format!(
                "{}: holds a run already; a branch needs a new folder",
                branch.root.display()
            )));
        }
        copy_tree(&self.root, &branch.root)?;
        write_atomic(&branch.join("config.json"), pretty(settings).as_bytes())?;
        Ok(branch)
    }

    /// The settings the folder's run was started with (`config.json`), if it has any.
    ///
    /// # Errors
    /// A file that is not JSON.
    pub fn settings(&self) -> Result<Option<serde_json::Value>, RoundsError> {
        let path = self.join("config.json");
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| RoundsError::io(&path, e))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| RoundsError::Input(format!("{}: {e}", path.display())))
    }

    /// The state in `state.json`, if there is one.
    ///
    /// # Errors
    /// A file that is not a floe run state.
    pub fn read_state(&self) -> Result<Option<RunState>, RoundsError> {
        let path = self.join("state.json");
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| RoundsError::io(&path, e))?;
        let bad = |m: String| RoundsError::Input(format!("{}: {m}", path.display()));
        let mut value: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        match value.as_object_mut().and_then(|o| o.remove("format")) {
            Some(serde_json::Value::String(f)) if f == STATE_FORMAT => {}
            _ => return Err(bad(format!("not a floe run state ({STATE_FORMAT})"))),
        }
        serde_json::from_value(value).map(Some).map_err(|e| bad(e.to_string()))
    }

    /// Writes `state.json` atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_state(&self, state: &RunState) -> Result<(), RoundsError> {
        let mut value = serde_json::to_value(state).unwrap_or_default();
        if let Some(o) = value.as_object_mut() {
            o.insert("format".into(), STATE_FORMAT.into());
        }
        write_atomic(&self.join("state.json"), pretty(&value).as_bytes())
    }

    /// Writes a stage's validation as tables: `eval.md` and `eval.json` (the last validation),
    /// and for a round `validation/round-<r>.md`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_eval(&self, stage: Stage, report: &EvalReport) -> Result<(), RoundsError> {
        let md = format!("# Validation after {stage}\n\n{}", report.to_markdown());
        write(&self.join("eval.md"), &md)?;
        write(&self.join("eval.json"), &pretty(&report.to_json()))?;
        if let Stage::Round(r) = stage {
            let dir = self.join("validation");
            std::fs::create_dir_all(&dir).map_err(|e| RoundsError::io(&dir, e))?;
            write(&dir.join(format!("{}.md", stage_name(Stage::Round(r)).unwrap_or_default())), &md)?;
        }
        Ok(())
    }

    /// Where `stage`'s answers are kept, relative to the folder: `validation/<stage>.jsonl`, the
    /// stage's name with `-` for spaces (`warm-start`, `warm-start-40`, `round-3`).
    #[must_use]
    pub fn answers_path(stage: Stage) -> String {
        format!("validation/{}.jsonl", stage.to_string().replace(" @", "-").replace(' ', "-"))
    }

    /// Writes every validation answer of `stage` with its verdict (`records[i]` and
    /// `outcomes[i]` of `answers[i]` to `instances[i]`) at [`RunFolder::answers_path`].
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_answers(
        &self,
        stage: Stage,
        instances: &[&Instance],
        answers: &[Answer],
        records: &[VerdictRecord],
        outcomes: &[Outcome],
    ) -> Result<(), RoundsError> {
        let dir = self.join("validation");
        std::fs::create_dir_all(&dir).map_err(|e| RoundsError::io(&dir, e))?;
        let mut text = String::new();
        let each = instances.iter().zip(answers).zip(records.iter().zip(outcomes));
        for (i, ((inst, answer), (r, o))) in each.enumerate() {
            let answer = match answer {
                Answer::Text(t) => serde_json::Value::from(t.as_str()),
                Answer::Plan(p) => p
                    .moves
                    .iter()
                    .map(|m| m.iter().map(|mv| mv.letter()).collect::<String>())
                    .collect::<Vec<_>>()
                    .into(),
            };
            let line = serde_json::json!({
                "index": i,
                "agents": inst.num_agents(),
                "size": inst.grid.width().max(inst.grid.height()),
                "valid": o.valid,
                "optimal": o.optimal,
                "failure": FailureKind::from_code(u32::from(r.failure)).map_or("none", FailureKind::name),
                "soc": r.soc,
                "optimal_soc": r.optimal_soc,
                "answer": answer,
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
        write(&self.join(Self::answers_path(stage)), &text)
    }

    /// Files what round `r`'s engineer is given, before it is asked (a reply that never comes
    /// still leaves it): `context.md` and `limits.json`, in a folder emptied first.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_engineer_context(
        &self,
        r: u32,
        context: &str,
        limits: &DesignLimits,
    ) -> Result<(), RoundsError> {
        let dir = self.engineer_dir(r);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| RoundsError::io(&dir, e))?;
        write(&dir.join("context.md"), context)?;
        write(&dir.join("limits.json"), &pretty(limits))
    }

    /// Files round `r`'s engineer's answer: its reply and raw replies, the configuration applied
    /// (`config`: the clamped one, or the previous one that stood), its rationale and the log.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_engineer_answer(
        &self,
        r: u32,
        adopted: &Adopted,
        config: &RoundConfig,
        notes: &[String],
    ) -> Result<(), RoundsError> {
        let dir = self.engineer_dir(r);
        write(&dir.join("reply.txt"), &adopted.raw.as_ref().map(|r| format!("{r}\n")).unwrap_or_default())?;
        for (i, text) in adopted.replies.iter().enumerate() {
            write(&dir.join(format!("reply-{}.txt", i + 1)), text)?;
        }
        let rationale = adopted.chosen.as_ref().map(|(_, r)| format!("{r}\n")).unwrap_or_default();
        write(&dir.join("rationale.txt"), &rationale)?;
        write(&dir.join("config.json"), &pretty(config))?;
        write(&dir.join("log.txt"), &(notes.join("\n") + "\n"))
    }

    /// The rounds whose engineer files the folder holds, ascending.
    ///
    /// # Errors
    /// No `engineer/` folder.
    pub fn engineer_rounds(&self) -> Result<Vec<u32>, RoundsError> {
        let dir = self.join("engineer");
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            RoundsError::Input(format!("{}: {e} (was the run trained with an engineer?)", dir.display()))
        })?;
        let mut r: Vec<u32> = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("round-")?.parse().ok())
            .collect();
        r.sort_unstable();
        Ok(r)
    }

    /// Round `r`'s engineer files as (name, text) in [`ENGINEER_FILES`]' order, the raw replies
    /// after `reply.txt`; a file that cannot be read says why in its text.
    #[must_use]
    pub fn engineer_files(&self, r: u32) -> Vec<(String, String)> {
        let dir = self.engineer_dir(r);
        let mut n: Vec<u32> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| {
                        e.ok()?
                            .file_name()
                            .to_str()?
                            .strip_prefix("reply-")?
                            .strip_suffix(".txt")?
                            .parse()
                            .ok()
                    })
                    .collect()
            })
            .unwrap_or_default();
        n.sort_unstable();
        let names = ENGINEER_FILES[..2]
            .iter()
            .map(|f| (*f).to_string())
            .chain(n.into_iter().map(|i| format!("reply-{i}.txt")))
            .chain(ENGINEER_FILES[2..].iter().map(|f| (*f).to_string()));
        names
            .map(|f| {
                let text = std::fs::read_to_string(dir.join(&f)).unwrap_or_else(|e| format!("({e})\n"));
                (f, text)
            })
            .collect()
    }

    /// What round `r`'s engineer was given: the context and the design limits, validated.
    ///
    /// # Errors
    /// Missing or malformed files.
    pub fn engineer_request(&self, r: u32) -> Result<(String, DesignLimits), RoundsError> {
        let dir = self.engineer_dir(r);
        let path = dir.join("context.md");
        let context = std::fs::read_to_string(&path).map_err(|e| RoundsError::io(&path, e))?;
        let path = dir.join("limits.json");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            RoundsError::Input(format!(
                "{}: {e} (the design limits the engineer was given; runs written before they were \
                 recorded have none)",
                path.display()
            ))
        })?;
        let limits: DesignLimits = serde_json::from_str(&text)
            .map_err(|e| RoundsError::Input(format!("{}: not design limits: {e}", path.display())))?;
        limits.validate().map_err(|e| RoundsError::Input(format!("{}: {e}", path.display())))?;
        Ok((context, limits))
    }
}
