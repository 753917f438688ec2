//! Replay: a curriculum with `replay_fraction > 0` really replays (the trainer keeps the
//! instances' records, asks the curriculum, and mixes the replayed instances into the round).
//! Cancel: a run cancelled through its flag ends with `Cancelled`, leaving a folder that resumes.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use floe_core::progress::Progress;
use floe_plugin_api::{PluginSpec, RoundConfig};
use floe_train::config::ValidationConfig;
use floe_train::error::RoundsError;
use floe_train::{run, run_with_progress, RunOptions, TrainError};

fn tiny() -> floe_train::TrainConfig {
    let mut c = common::tiny(3);
    c.validation = ValidationConfig { sizes: vec![3], agents: vec![2], per_cell: 4, ..Default::default() };
    c.rounds.rounds = 2;
    c.rounds.epochs = 1;
    c.rounds.samples = 8;
    c
}

#[test]
fn plr_replays_half_of_round_one_from_round_zero() {
    let mut cfg = tiny();
    let base = RoundConfig::from_json(
        r#"{"sizes": [{"size": 3, "data_ratio": 1, "hole_ratio": 0.1, "wait_ratio": 0.5}], "agents": [2]}"#,
    )
    .unwrap();
    cfg.rounds.curriculum = Some(PluginSpec {
        name: "plr".into(),
        params: serde_json::json!({"base": base, "replay_fraction": 0.5}),
        library: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let state = run(&cfg, &common::opts(dir.path()), common::plugins(&cfg)).unwrap();
    assert_eq!(state.history.rounds[1].config.replay_fraction, 0.5);
    let e = &state.replay.entries;
    // Round 0: 8 new instances; round 1: 4 new and 4 replayed from round 0.
    assert_eq!(e.iter().filter(|x| x.round == 0).count(), 8);
    assert_eq!(e.iter().filter(|x| x.round == 1).count(), 4);
    let replayed = e.iter().filter(|x| x.round == 0 && x.last_round == 1).count();
    assert_eq!(replayed, 4);
    // Every played instance has group_size (4) answers per pass, replayed ones twice as many.
    assert!(e.iter().all(|x| x.samples == 4 || (x.last_round == 1 && x.round == 0 && x.samples == 8)));
}

/// Sets the flag when round 1 begins.
struct CancelAt(Arc<AtomicBool>);

impl Progress for CancelAt {
    fn begin(&self, stage: &str, _: u64) {
        if stage == "round 1" {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    fn advance(&self, _: u64, _: &str) {}
    fn end(&self, _: &str) {}
    fn line(&self, _: &str) {}
}

#[test]
fn a_cancelled_run_stops_with_its_own_error_and_resumes() {
    let cfg = tiny();
    let dir = tempfile::tempdir().unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let opts = RunOptions { cancel: Some(Arc::clone(&flag)), ..RunOptions::new(dir.path()) };
    let err =
        run_with_progress(&cfg, &opts, common::plugins(&cfg), &CancelAt(Arc::clone(&flag))).unwrap_err();
    assert!(matches!(err, TrainError::Rounds(RoundsError::Cancelled(_))), "{err}");
    assert!(err.to_string().contains("in round 1, before GRPO step 2"), "{err}");
    let (_, saved) = floe_train::run::saved_run(dir.path()).unwrap().unwrap();
    assert_eq!(saved.rounds_done, 1);
    let resumed =
        run(&cfg, &RunOptions { resume: true, ..RunOptions::new(dir.path()) }, common::plugins(&cfg))
            .unwrap();
    assert_eq!(resumed.rounds_done, 2);
    // Cancelled before anything: no stage runs.
    let flag = Arc::new(AtomicBool::new(true));
    let other = tempfile::tempdir().unwrap();
    let opts = RunOptions { cancel: Some(flag), ..RunOptions::new(other.path()) };
    let err = run(&cfg, &opts, common::plugins(&cfg)).unwrap_err();
    assert!(matches!(err, TrainError::Rounds(RoundsError::Cancelled(_))), "{err}");
}
