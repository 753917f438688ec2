//! Dynamic sampling in a whole (tiny) run: every step but the round's last trains on
//! `prompts_per_step` groups with a reward spread, the round's prompts are each drawn once, and
//! with the knob off the steps are the plain ones.

mod common;

use floe_train::config::{TrainConfig, ValidationConfig};
use floe_train::run;

fn tiny(dynamic: bool) -> TrainConfig {
    let mut c = common::tiny(3);
    // Cold enough that some groups give one answer four times.
    c.grpo.temperature = TEMPERATURE;
    c.grpo.dynamic_sampling = dynamic;
    c.grpo.max_num_gen_batches = 0;
    c.validation = ValidationConfig { sizes: vec![3], agents: vec![2], per_cell: 4, ..Default::default() };
    c.rounds.rounds = 1;
    c.rounds.epochs = 1;
    c.rounds.samples = 32;
    c
}

const TEMPERATURE: f64 = 0.3;

fn grpo_steps(cfg: &TrainConfig) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    run(cfg, &common::opts(dir.path()), common::plugins(cfg)).unwrap();
    common::jsonl(&dir.path().join("steps.jsonl")).into_iter().filter(|v| v["phase"] == "grpo").collect()
}

fn get(v: &serde_json::Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"))
}

#[test]
fn dynamic_sampling_fills_every_step_with_groups_that_carry_a_signal() {
    let plain = grpo_steps(&tiny(false));
    assert_eq!(plain.len(), 8, "32 prompts, 4 a step");
    assert!(plain.iter().all(|s| get(s, "groups") == 4 && s.get("groups_sampled").is_none()));
    let flat: u64 = plain.iter().map(|s| get(s, "groups") - get(s, "groups_kept")).sum();
    println!("plain: {flat} flat groups of 32");

    let steps = grpo_steps(&tiny(true));
    let (last, full) = steps.split_last().unwrap();
    for s in full {
        assert_eq!((get(s, "groups"), get(s, "groups_kept")), (4, 4), "{s}");
    }
    assert!(get(last, "groups_kept") <= get(last, "groups") && get(last, "groups") <= 4);
    let drawn: u64 = steps.iter().map(|s| get(s, "groups_sampled")).sum();
    assert_eq!(drawn, 32, "every prompt of the round is drawn once");
    let batches: u64 = steps.iter().map(|s| get(s, "gen_batches")).sum();
    println!("dynamic: {} steps, {batches} generation batches", steps.len());
    assert!(flat > 0 && batches > steps.len() as u64, "the test needs flat groups to be meaningful");
}
