//! The driver over a trainee whose skill is known: it answers the validation set correctly on
//! maps up to its skill (written answers, read strictly) and leaves the rest unanswered, and
//! each round raises its skill by one. The run's files, its count, its designs, replay, a
//! cancelled run's resume and a refused folder are checked against that.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use floe_core::progress::{Progress, Silent};
use floe_core::Instance;
use floe_plugin_api::catalog::new_curriculum;
use floe_plugin_api::{PluginSpec, RoundConfig, SizeConfig};
use floe_rounds::design::{Designers, Source};
use floe_rounds::{
    Answer, Protocol, RoundData, RoundsConfig, RoundsError, RunFolder, RunOptions, RunState, Session, Stage,
    Trained, Trainee, ValidationConfig,
};

/// Answers correctly up to `skill`, trains by raising it; remembers what it was given.
struct Skilled {
    skill: u32,
    /// (round, data seed's first instance as JSON, replayed) of every round trained.
    seen: Vec<(u32, String, usize)>,
    /// Set the cancel flag while training this round.
    cancel_in: Option<(u32, Arc<AtomicBool>)>,
}

fn text_answer(inst: &Instance) -> String {
    let opt = inst.optimal.as_ref().expect("generated instances carry a plan");
    opt.moves
        .iter()
        .enumerate()
        .map(|(a, m)| {
            let words: Vec<&str> =
                floe_core::moves::parse_moves(m).unwrap().iter().map(|m| m.word()).collect();
            format!("Agent {a}: {}", words.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Trainee for Skilled {
    fn describe(&self) -> String {
        format!("skill {}", self.skill)
    }

    fn restore(
        &mut self,
        folder: &RunFolder,
        saved: Option<RunState>,
    ) -> Result<Option<RunState>, RoundsError> {
        if let Some(s) = &saved {
            let text =
                std::fs::read_to_string(folder.join("skill.txt")).map_err(|e| RoundsError::io("skill", e))?;
            self.skill = text.trim().parse().unwrap();
            assert_eq!(s.rounds_done + 3, self.skill, "the model saved with the state");
        }
        Ok(saved)
    }

    fn warm_start(&mut self, session: &mut Session<'_>) -> Result<bool, RoundsError> {
        self.skill = 3;
        session.step_line(&serde_json::json!({"phase": "warm_start", "skill": 3}))?;
        Ok(true)
    }

    fn train(&mut self, round: &RoundData<'_>, session: &mut Session<'_>) -> Result<Trained, RoundsError> {
        if let Some((r, flag)) = &self.cancel_in {
            if *r == round.round {
                flag.store(true, Ordering::Relaxed);
            }
        }
        session.check_cancel("in training")?;
        self.seen.push((round.round, round.instances[0].to_json(), round.replayed));
        self.skill += 1;
        session.state.grpo_steps += 1;
        session.step_line(&serde_json::json!({"phase": "grpo", "round": round.round}))?;
        let samples = (0..round.instances.len() as u32).map(|i| (i, 1.0, i % 2 == 0)).collect();
        Ok(Trained { samples, ..Trained::default() })
    }

    fn answer(
        &mut self,
        instances: &[Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<Answer>, RoundsError> {
        progress.advance(instances.len() as u64, "");
        Ok(instances
            .iter()
            .map(|i| Answer::Text(if i.grid.width() <= self.skill { text_answer(i) } else { String::new() }))
            .collect())
    }

    fn save(&mut self, _stage: Stage, folder: &RunFolder, _state: &RunState) -> Result<(), RoundsError> {
        std::fs::write(folder.join("skill.txt"), self.skill.to_string())
            .map_err(|e| RoundsError::io("skill", e))
    }

    fn details(&self) -> serde_json::Value {
        serde_json::json!({"skill": self.skill})
    }
}

fn round0() -> RoundConfig {
    RoundConfig {
        sizes: (3..=6)
            .map(|size| SizeConfig { size, data_ratio: 0.25, hole_ratio: 0.2, wait_ratio: 0.5 })
            .collect(),
        agents: vec![2],
        replay_fraction: 0.5,
    }
}

fn protocol() -> Protocol {
    let rounds = RoundsConfig {
        rounds: 3,
        epochs: 1,
        samples: 16,
        curriculum: Some(PluginSpec::builtin("plr")),
        engineer: None,
        round0: Some(round0()),
        ..RoundsConfig::default()
    };
    let validation = ValidationConfig {
        sizes: vec![3, 4, 5, 6],
        agents: vec![2],
        per_cell: 5,
        ..ValidationConfig::default()
    };
    Protocol { seed: 7, rounds, validation, settings: serde_json::json!({"test": "driver"}) }
}

fn designers() -> Designers {
    let params = serde_json::json!({"base": round0(), "replay_fraction": 0.5}).to_string();
    let curriculum = new_curriculum(&floe_plugins::catalog(), "plr", &params).unwrap();
    Designers { curriculum: Some(curriculum), curriculum_replays: true, engineer: None }
}

fn skilled() -> Skilled {
    Skilled { skill: 0, seen: Vec::new(), cancel_in: None }
}

fn without_times(mut s: RunState) -> RunState {
    // rounds.jsonl's lines carry seconds, so its length varies too.
    (s.train_s, s.rounds_len) = (0.0, 0);
    for e in &mut s.evals {
        e.train_s = 0.0;
    }
    s
}

#[test]
fn a_run_counts_designs_replays_and_files_as_the_trainee_deserves() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = skilled();
    let opts = RunOptions::new(dir.path());
    let state = floe_rounds::run(&mut t, &protocol(), designers(), &opts, &Silent).unwrap();
    // Untrained: nothing answered. Warm start: sizes 3 (a quarter). Each round one size more.
    let valid: Vec<f64> = state.evals.iter().map(|e| e.valid).collect();
    assert_eq!(valid, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    let stages: Vec<Stage> = state.evals.iter().map(|e| e.stage).collect();
    assert_eq!(
        stages,
        [Stage::Untrained, Stage::WarmStart, Stage::Round(0), Stage::Round(1), Stage::Round(2)]
    );
    // The unanswered maps are parse errors, counted per size for the engineer's module F.
    let last_but_one = &state.history.rounds[1].results;
    assert_eq!(last_but_one.iter().map(|r| r.valid_rate).collect::<Vec<_>>(), vec![1.0, 1.0, 1.0, 0.0]);
    assert_eq!(last_but_one[3].failures.get(&floe_core::FailureKind::ParseError), Some(&5));
    // Round 0 as given, then the curriculum; rounds after the first replay half their prompts.
    let sources: Vec<Source> = state.designs.iter().map(|d| d.source).collect();
    assert_eq!(sources, [Source::Round0, Source::Curriculum, Source::Curriculum]);
    assert_eq!(t.seen.iter().map(|s| s.2).collect::<Vec<_>>(), vec![0, 8, 8]);
    // Round seeds: round r's new instances come from round_seed(seed, r).
    let r1 = state.history.rounds[1].config.generator_configs(8, floe_rounds::data::round_seed(7, 1));
    let first = floe_core::generate(&r1[0]).unwrap();
    assert_eq!(t.seen[1].1, first[0].to_json());
    // The replay pool holds every new instance with the trainee's samples.
    assert_eq!(state.replay.entries.len(), 16 + 8 + 8);
    assert!(state.replay.entries.iter().all(|e| e.samples >= 1));
    // The folder.
    let folder = RunFolder::new(dir.path());
    for f in [
        "config.json",
        "state.json",
        "steps.jsonl",
        "rounds.jsonl",
        "eval.md",
        "eval.json",
        "validation/round-2.md",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    assert_eq!(folder.read_state().unwrap().unwrap(), state);
    let rounds = std::fs::read_to_string(dir.path().join("rounds.jsonl")).unwrap();
    assert_eq!(rounds.lines().count(), 5);
    assert!(rounds.lines().last().unwrap().contains("\"design\""));
    let steps = std::fs::read_to_string(dir.path().join("steps.jsonl")).unwrap();
    assert_eq!(steps.lines().count(), 4);
    assert!(std::fs::read_to_string(dir.path().join("eval.md"))
        .unwrap()
        .starts_with("# Validation after round 2"));
    // Every stage's answers with their verdicts, in the validation set's order (sizes 3 to 6,
    // five each): after the warm start, 3×3 answered and right, the rest unanswered.
    let named: Vec<String> = rounds
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["answers"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        named[..3],
        ["validation/untrained.jsonl", "validation/warm-start.jsonl", "validation/round-0.jsonl"]
    );
    for (name, skill) in [("untrained", 0), ("warm-start", 3), ("round-0", 4), ("round-2", 6)] {
        let text = std::fs::read_to_string(dir.path().join(format!("validation/{name}.jsonl"))).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 20, "{name}");
        for (i, l) in lines.iter().enumerate() {
            let size = l["size"].as_u64().unwrap();
            assert_eq!((l["index"].as_u64(), size), (Some(i as u64), 3 + i as u64 / 5), "{name}");
            let right = size <= skill;
            assert_eq!(l["valid"], right, "{name} {l}");
            assert_eq!(l["optimal"], right, "{name} {l}");
            assert_eq!(l["failure"], if right { "none" } else { "parse_error" }, "{name} {l}");
            assert_eq!(l["answer"].as_str().unwrap().starts_with("Agent 0: "), right, "{name} {l}");
        }
    }
    // A second run into the same folder is refused unless it resumes or overwrites.
    let again = floe_rounds::run(&mut skilled(), &protocol(), designers(), &opts, &Silent);
    assert!(matches!(again, Err(RoundsError::Input(m)) if m.contains("holds a run already")));
    // Resumed with other settings: refused, naming what differs.
    let mut other = protocol();
    other.settings = serde_json::json!({"test": "other"});
    let resumed = floe_rounds::run(
        &mut skilled(),
        &other,
        designers(),
        &RunOptions { resume: true, ..RunOptions::new(dir.path()) },
        &Silent,
    );
    assert!(matches!(resumed, Err(RoundsError::Input(m)) if m.contains("test differ")));
}

#[test]
fn a_cancelled_run_resumes_to_what_the_whole_run_gives() {
    let whole_dir = tempfile::tempdir().unwrap();
    let whole = floe_rounds::run(
        &mut skilled(),
        &protocol(),
        designers(),
        &RunOptions::new(whole_dir.path()),
        &Silent,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let mut t = Skilled { cancel_in: Some((1, Arc::clone(&flag))), ..skilled() };
    let opts = RunOptions { cancel: Some(Arc::clone(&flag)), ..RunOptions::new(dir.path()) };
    let stopped = floe_rounds::run(&mut t, &protocol(), designers(), &opts, &Silent);
    assert!(matches!(stopped, Err(RoundsError::Cancelled(_))), "{stopped:?}");
    assert_eq!(RunFolder::new(dir.path()).read_state().unwrap().unwrap().rounds_done, 1);
    let resumed = floe_rounds::run(
        &mut skilled(),
        &protocol(),
        designers(),
        &RunOptions { resume: true, ..RunOptions::new(dir.path()) },
        &Silent,
    )
    .unwrap();
    assert_eq!(without_times(resumed), without_times(whole));
    let lines = |d: &std::path::Path| std::fs::read_to_string(d.join("steps.jsonl")).unwrap();
    assert_eq!(lines(dir.path()), lines(whole_dir.path()), "the cut-back metrics hold each step once");
}
