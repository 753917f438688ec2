//! `floe experiment` end to end on a tiny budget: one shared warm start, two contenders (`fixed`
//! and the `rules` engineer) from it, the suite evaluation, the table; the same call resumes
//! without training again, and a folder of another experiment (other than in its seeds) is
//! refused.

mod common;

use floe_plugin_api::PluginSpec;
use floe_train::config::ValidationConfig;
use floe_train::error::RoundsError;
use floe_train::experiment::{random_config, run_experiment, Budget, ContenderName, Experiment, BEST_OF};
use floe_train::tokens::Inputs;
use floe_train::TrainError;

fn tiny() -> Experiment {
    let mut x = Experiment::new(Budget::Small, PluginSpec::builtin("rules"), Inputs::Planner);
    let t = common::tiny(1);
    x.base.model = t.model;
    x.base.model.layout.max_side = 10;
    x.base.grpo = t.grpo;
    x.base.threads = 1;
    x.base.eval_batch = t.eval_batch;
    x.base.warm_start.samples = 48;
    x.base.warm_start.steps = 4;
    x.base.warm_start.batch_size = 16;
    x.base.warm_start.warmup_steps = 2;
    x.base.rounds.samples = 8;
    x.base.rounds.context.history_json = true;
    x.base.validation =
        ValidationConfig { sizes: vec![3, 4], agents: vec![2], per_cell: 2, ..Default::default() };
    x.rounds = 2;
    x.seeds = vec![0];
    x.contenders.retain(|c| matches!(c.name, ContenderName::Fixed | ContenderName::Engineer));
    x.suite.agents = vec![3, 4];
    x.suite.max_size = 4;
    x.suite.per_cell = 1;
    x.suite.wait_ratios = vec![0.5];
    x
}

/// The paper's random baseline keeps its seed's drawn configuration from round 0 on; the
/// upper reference tries every candidate design for round 1 from round 0's checkpoint and keeps
/// the one with the best validation; `frontier` runs as a curriculum.
#[test]
fn the_random_baseline_the_frontier_and_the_upper_reference_run() {
    let mut x = tiny();
    x.contenders = Experiment::new(Budget::Medium, PluginSpec::builtin("rules"), Inputs::Planner).contenders;
    x.contenders.retain(|c| {
        matches!(c.name, ContenderName::FixedRandom | ContenderName::Frontier | ContenderName::BestOfN)
    });
    let dir = tempfile::tempdir().unwrap();
    let resolve = |cfg: &floe_train::TrainConfig| Ok(common::plugins(cfg));
    let table = run_experiment(&x, dir.path(), &resolve, &floe_core::progress::Silent).unwrap().table;
    for row in ["| fixed-random |", "| frontier |", "| best-of-n |"] {
        assert!(table.contains(row), "{row}\n{table}");
    }
    let drawn = random_config(&x.base.rounds.design_limits, 0).unwrap();
    let state = |p: std::path::PathBuf| floe_rounds::RunFolder::new(p).read_state().unwrap().unwrap();
    let random = state(dir.path().join("fixed-random/seed-0"));
    assert_eq!(random.history.rounds.len(), 2);
    assert!(random.history.rounds.iter().all(|r| r.config == drawn), "{:?}", random.history);
    assert_ne!(drawn, x.base.rounds.round0.clone().unwrap());
    // The upper reference: every candidate trained round 1 from the same round 0.
    let best = dir.path().join("best-of-n/seed-0");
    let choices: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(best.join("choices.json")).unwrap()).unwrap();
    let valid: Vec<f64> =
        choices[0]["valid"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(valid.len(), BEST_OF);
    let chosen = choices[0]["chosen"].as_u64().unwrap() as usize;
    assert!(valid.iter().all(|&v| v <= valid[chosen]), "{choices}");
    let round0 = state(best.join("round-0"));
    assert_eq!(round0.rounds_done, 1);
    for k in 0..BEST_OF {
        let s = state(best.join(format!("round-1/candidate-{k}")));
        assert_eq!(s.rounds_done, 2);
        assert_eq!(s.history.rounds[0], round0.history.rounds[0], "candidate {k} branched from round 0");
    }
    let configs: Vec<_> = (0..BEST_OF)
        .map(|k| state(best.join(format!("round-1/candidate-{k}"))).history.rounds[1].config.clone())
        .collect();
    assert_eq!(serde_json::to_value(&configs[chosen]).unwrap(), choices[0]["config"]);
    assert!(configs.windows(2).any(|w| w[0] != w[1]), "the candidates are different designs");
    // Resuming trains nothing again.
    let steps = best.join("round-1/candidate-0/steps.jsonl");
    let before = std::fs::read_to_string(&steps).unwrap();
    assert_eq!(run_experiment(&x, dir.path(), &resolve, &floe_core::progress::Silent).unwrap().table, table);
    assert_eq!(std::fs::read_to_string(&steps).unwrap(), before);
}

#[test]
fn an_experiment_runs_resumes_and_refuses_a_folder_of_another() {
    let x = tiny();
    let dir = tempfile::tempdir().unwrap();
    let resolve = |cfg: &floe_train::TrainConfig| Ok(common::plugins(cfg));
    let silent = floe_core::progress::Silent;
    let table = run_experiment(&x, dir.path(), &resolve, &silent).unwrap().table;
    for row in ["| warm start |", "| fixed |", "| engineer |", "Paired difference from `fixed`"] {
        assert!(table.contains(row), "{row}\n{table}");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("table.md")).unwrap(), table);
    for c in ["fixed", "engineer"] {
        let run = dir.path().join(c).join("seed-0");
        assert!(run.join("checkpoint.safetensors").is_file() && run.join("suite-outcomes.json").is_file());
        let rounds = common::jsonl(&run.join("rounds.jsonl"));
        // Both start from the shared warm start (its checkpoint, no warm-start steps of their own).
        assert_eq!(rounds[0]["stage"], "initial checkpoint", "{rounds:?}");
        assert!(rounds.iter().all(|r| r["stage"] != "warm start"), "{rounds:?}");
    }
    // Only the engineer's rounds after round 0 were designed by an engineer.
    assert!(dir.path().join("engineer/seed-0/engineer/round-1/context.md").is_file());
    assert!(!dir.path().join("fixed/seed-0/engineer").exists());
    // The same call resumes: nothing trains again, the table is the same.
    let steps = dir.path().join("engineer/seed-0/steps.jsonl");
    let before = std::fs::read_to_string(&steps).unwrap();
    assert_eq!(run_experiment(&x, dir.path(), &resolve, &silent).unwrap().table, table);
    assert_eq!(std::fs::read_to_string(&steps).unwrap(), before);
    // Another experiment in the same folder would mix runs: refused, and nothing changes.
    let mut other = x.clone();
    other.rounds += 1;
    other.seeds = vec![0, 1];
    match run_experiment(&other, dir.path(), &resolve, &silent) {
        Err(TrainError::Rounds(RoundsError::Input(m))) => {
            assert!(m.contains("holds another experiment"), "{m}")
        }
        r => panic!("{r:?}"),
    }
    assert!(!dir.path().join("fixed/seed-1").exists());
    assert_eq!(std::fs::read_to_string(&steps).unwrap(), before);
}
