//! `grpo.min_lr_ratio`: the GRPO learning rate decays along a cosine over the whole run's
//! prompts, across rounds, and each step logs the rate it used.

mod common;

use floe_train::config::ValidationConfig;
use floe_train::run;

#[test]
fn the_logged_learning_rate_follows_the_share_of_prompts_drawn() {
    let mut cfg = common::tiny(4);
    cfg.validation = ValidationConfig { sizes: vec![3], agents: vec![2], per_cell: 2, ..Default::default() };
    cfg.rounds.rounds = 2;
    cfg.rounds.epochs = 2;
    cfg.rounds.samples = 8;
    cfg.grpo.min_lr_ratio = 0.1;
    let dir = tempfile::tempdir().unwrap();
    run(&cfg, &common::opts(dir.path()), common::plugins(&cfg)).unwrap();
    let lrs: Vec<f64> = common::jsonl(&dir.path().join("steps.jsonl"))
        .into_iter()
        .filter(|v| v["phase"] == "grpo")
        .map(|v| v["lr"].as_f64().expect("each GRPO step logs its learning rate"))
        .collect();
    // 2 rounds × 2 epochs × 8 prompts, 4 a step: 8 steps, at 0, 1/8, …, 7/8 of the run.
    assert_eq!(lrs.len(), 8);
    for (k, &lr) in lrs.iter().enumerate() {
        let want = cfg.grpo.lr_at(k as f64 / 8.0);
        assert!((lr - want).abs() < 1e-12 * want, "step {k}: {lr} vs {want}");
    }
    assert!((lrs[0] - cfg.grpo.lr).abs() < 1e-15);
    assert!(lrs.windows(2).all(|w| w[1] < w[0]) && lrs[7] > 0.1 * cfg.grpo.lr);
}
