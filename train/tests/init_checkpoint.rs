//! `init_checkpoint`: a run starts from another run's weights, its first validation is labelled
//! `initial checkpoint` and scores what the other run's last one did, and a checkpoint of another
//! model shape is refused with an error naming it.

mod common;

use floe_train::config::{TrainConfig, ValidationConfig};
use floe_train::run;

fn tiny() -> TrainConfig {
    let mut c = common::tiny(5);
    c.validation = ValidationConfig { sizes: vec![3], agents: vec![2], per_cell: 8, ..Default::default() };
    c.warm_start.steps = 30;
    c.warm_start.lr = 3e-3;
    c.rounds.rounds = 0;
    c
}

#[test]
fn a_run_starts_from_another_runs_weights() {
    let a = tempfile::tempdir().unwrap();
    run(&tiny(), &common::opts(a.path()), common::plugins(&tiny())).unwrap();
    let first = common::jsonl(&a.path().join("rounds.jsonl"));
    assert_eq!(first[0]["stage"], "untrained");
    let trained = first.last().unwrap();
    assert_eq!(trained["stage"], "warm start");

    let b = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.seed = 9;
    cfg.warm_start.steps = 0;
    cfg.init_checkpoint = Some(a.path().join("reference.safetensors"));
    run(&cfg, &common::opts(b.path()), common::plugins(&cfg)).unwrap();
    let second = common::jsonl(&b.path().join("rounds.jsonl"));
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["stage"], "initial checkpoint");
    assert_eq!(second[0]["report"], trained["report"], "the same weights score the same");
    // A fresh policy with seed 9 would not have read any plan after no training at all.
    assert_ne!(second[0]["report"], first[0]["report"]);

    let c = tempfile::tempdir().unwrap();
    cfg.model.d_model = 32;
    let err = run(&cfg, &common::opts(c.path()), common::plugins(&cfg)).unwrap_err().to_string();
    assert!(err.contains("reference.safetensors") && err.contains("model configuration"), "{err}");
}
