//! A run stopped in the middle of a round and resumed ends exactly where an uninterrupted run
//! ends: the finished round is kept, the unfinished one is redone, the metrics are not doubled.

mod common;

use floe_train::config::{TrainConfig, ValidationConfig};
use floe_train::error::RoundsError;
use floe_train::run::run_interrupted;
use floe_train::{run, RunOptions, TrainError};

fn tiny() -> TrainConfig {
    let mut c = common::tiny(9);
    c.validation = ValidationConfig { sizes: vec![3, 4], agents: vec![2], per_cell: 4, ..Default::default() };
    c.rounds.rounds = 2;
    c.rounds.epochs = 1;
    c.rounds.samples = 8; // 2 GRPO steps a round
    c
}

/// A metrics line without the fields that measure time.
fn untimed(line: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
    for k in ["train_s", "tokens_per_s", "elapsed_s", "sample_s", "update_s", "validation_s"] {
        if let Some(o) = v.as_object_mut() {
            o.remove(k);
        }
    }
    v
}

fn lines(dir: &std::path::Path, name: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(name)).unwrap().lines().map(untimed).collect()
}

#[test]
fn a_killed_run_resumes_to_the_same_result() {
    let cfg = tiny();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let opts = |dir: &std::path::Path, resume| RunOptions { resume, ..RunOptions::new(dir) };
    let full = run(&cfg, &opts(a.path(), false), common::plugins(&cfg)).unwrap();
    assert_eq!(full.rounds_done, 2);
    assert_eq!(full.grpo_steps, 4);
    assert_eq!(full.history.rounds.len(), 2);

    // Stopped in round 1 (after its first step): round 0 is in the checkpoint.
    let err = run_interrupted(&cfg, &opts(b.path(), false), common::plugins(&cfg), 3).unwrap_err();
    assert!(matches!(err, TrainError::Rounds(RoundsError::Interrupted(_))), "{err}");
    let (_, saved) = floe_train::run::saved_run(b.path()).unwrap().unwrap();
    assert_eq!(saved.rounds_done, 1);
    assert_eq!(saved.history.rounds[0], full.history.rounds[0]);
    // A resume with another configuration is refused.
    let mut other = cfg.clone();
    other.seed += 1;
    match run(&other, &opts(b.path(), true), common::plugins(&other)) {
        Err(TrainError::Rounds(RoundsError::Input(_))) => {}
        r => panic!("{r:?}"),
    }

    let resumed = run(&cfg, &opts(b.path(), true), common::plugins(&cfg)).unwrap();
    assert_eq!(resumed.history, full.history);
    assert_eq!(resumed.evals.len(), full.evals.len());
    for (x, y) in resumed.evals.iter().zip(&full.evals) {
        assert_eq!((&x.stage, x.valid, &x.report), (&y.stage, y.valid, &y.report));
    }
    assert_eq!(resumed.grpo_curve, full.grpo_curve);
    assert_eq!(lines(a.path(), "steps.jsonl"), lines(b.path(), "steps.jsonl"));
    assert_eq!(lines(a.path(), "rounds.jsonl"), lines(b.path(), "rounds.jsonl"));
    let wa = floe_train::load_policy(&a.path().join("checkpoint.safetensors")).unwrap();
    let wb = floe_train::load_policy(&b.path().join("checkpoint.safetensors")).unwrap();
    for ((n, x), (_, y)) in wa.named_variables().iter().zip(wb.named_variables().iter()) {
        assert!(x.equal(y), "weights {n} differ");
    }
    for f in ["grpo.png", "per_size.png", "sft_loss.png", "eval.md", "eval.json", "round-1.safetensors"] {
        assert!(b.path().join(f).is_file(), "{f} missing");
    }
}
