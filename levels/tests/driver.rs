//! The driver over a CPU engine: each built-in sampler steers the levels played, refills come from
//! the level space, a host's scores reach PLR, the phase samplers redesign the pool, and a
//! sampler that fails, panics or answers garbage changes nothing.

mod common;

use common::{engine, run, space, spec, Make};
use floe_core::engine::Engine;
use floe_core::rng::Rng;
use floe_levels::{LevelSource, Levels, LevelsError};
use floe_plugin_api::{EpisodeRecord, LevelPlan, LevelRecord, LevelSampler, PluginError};

#[test]
fn each_built_in_sampler_steers_the_engine() {
    for (name, params) in [
        ("uniform", serde_json::json!({"max_plays": 1})),
        ("plr", serde_json::json!({"fresh": 0.5})),
        ("learnability", serde_json::json!({"min_episodes": 1, "window": 4, "refill_fraction": 0.5})),
    ] {
        let (mut env, mut out) = engine(16, 12);
        let mut levels = spec(name, params, 4).levels();
        let first = levels.start(&mut env, out.view()).unwrap();
        assert!(first.weights, "{name}: the first call sets weights");
        run(&mut levels, &mut env, &mut out, 60);
        let t = levels.totals();
        assert!(t.episodes > 50, "{name}: {t:?}");
        assert!(t.refilled > 0, "{name}: new levels came: {t:?}");
        let generations: u32 = (0..12).map(|i| env.pool().generation(i)).sum();
        assert_eq!(generations as usize, t.refilled, "{name}");
        assert!(levels.played().values().sum::<u64>() as usize >= t.episodes, "{name}");
        assert!(levels.source().drawn() as usize == t.refilled, "{name}");
    }
}

#[test]
fn host_scores_reach_plr_and_decide_what_it_replays() {
    let (mut env, mut out) = engine(16, 6);
    let mut levels =
        spec("plr", serde_json::json!({"fresh": 0.0, "staleness_coef": 0.0, "replay_prob": 1.0}), 0).levels();
    levels.start(&mut env, out.view()).unwrap();
    run(&mut levels, &mut env, &mut out, 30);
    let episodes: Vec<EpisodeRecord> = levels.pending().to_vec();
    assert!(!episodes.is_empty());
    // The host scores slot 4's episodes 1 and every other 0: slot 4 ranks first.
    let scores: Vec<f32> = episodes.iter().map(|e| if e.instance == 4 { 1.0 } else { 0.0 }).collect();
    let e = levels.update(&mut env, Some(&episodes), Some(&scores[1..]), out.view()).unwrap_err();
    assert!(e.to_string().contains("scores for"), "{e}");
    levels.update(&mut env, Some(&episodes), Some(&scores), out.view()).unwrap();
    let w = env.weights().unwrap().to_vec();
    let top = (0..6).max_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap();
    assert_eq!(top, 4, "{w:?}");
}

/// A sampler that answers what it is told to.
struct Scripted(Result<LevelPlan, PluginError>);

impl LevelSampler for Scripted {
    fn update(
        &mut self,
        _: &[LevelRecord],
        _: &[EpisodeRecord],
        _: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        self.0.clone()
    }
}

#[test]
fn a_failing_or_garbage_sampler_changes_nothing() {
    let (mut env, mut out) = engine(8, 4);
    run(&mut spec("uniform", serde_json::Value::Null, 0).levels(), &mut env, &mut out, 3);
    let state = env.state().unwrap();
    let kept = out.clone();
    for (plan, says) in [
        (
            Ok(LevelPlan { weights: Some(vec![1.0, f64::NAN, 1.0, 1.0]), ..LevelPlan::default() }),
            "weight 1 is NaN",
        ),
        (Ok(LevelPlan { weights: Some(vec![0.0; 4]), ..LevelPlan::default() }), "all 4 weights are zero"),
        (Ok(LevelPlan { weights: Some(vec![1.0; 3]), ..LevelPlan::default() }), "3 weights for a pool of 4"),
        (Ok(LevelPlan { refill: vec![9], ..LevelPlan::default() }), "refill slot 9, outside"),
        (Err(PluginError::Failed("no".into())), "no"),
    ] {
        let source = LevelSource::new(space(), 1).unwrap();
        let mut levels = Levels::new("scripted", Box::new(Scripted(plan)), source, 0);
        let e = levels.update(&mut env, None, None, out.view()).unwrap_err();
        assert!(matches!(e, LevelsError::Sampler { .. }) && e.to_string().contains(says), "{e}");
        assert_eq!(env.state().unwrap(), state);
        assert_eq!(env.weights(), None);
        assert_eq!(out, kept);
    }
    // Parameters a built-in refuses, and an unknown name.
    let e = spec("plr", serde_json::json!({"replay_prob": 2.0}), 0).levels_err();
    assert!(e.to_string().contains("replay_prob"), "{e}");
    let e = spec("nope", serde_json::Value::Null, 0).levels_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn frontier_and_the_engineer_redesign_the_pool_between_phases() {
    for (name, params) in [
        ("frontier", serde_json::json!({"phase_episodes": 40})),
        ("difficulty-scaling", serde_json::json!({"phase_episodes": 40})),
        // Any curriculum designs phases: a fixed configuration, SEC, and one named by spec.
        ("fixed", serde_json::json!({"phase_episodes": 40})),
        ("sec", serde_json::json!({"phase_episodes": 40})),
        ("schedule", serde_json::json!({"phase_episodes": 40})),
        ("phases", serde_json::json!({"phase_episodes": 40, "designer": {"name": "plr"}})),
        ("engineer", serde_json::json!({"phase_episodes": 40, "engineer": {"name": "rules"}})),
    ] {
        let (mut env, mut out) = engine(16, 8);
        let mut levels = spec(name, params, 2).levels();
        let first = levels.start(&mut env, out.view()).unwrap();
        assert_eq!(first.refilled, 8, "{name}: the first phase's levels fill the pool");
        let cfg = levels.source().config().expect("a configuration").clone();
        run(&mut levels, &mut env, &mut out, 80);
        let t = levels.totals();
        assert!(t.refilled >= 16, "{name}: a later phase refilled the pool again: {t:?}");
        let sizes: Vec<u32> = cfg.sizes.iter().map(|s| s.size).collect();
        assert!(sizes.iter().all(|s| (5..=7).contains(s)), "{name}: {sizes:?}");
        // Every phase's design is kept, numbered, with the engineer's rationales.
        let designs = levels.designs();
        assert!(designs.len() >= 2, "{name}: {designs:?}");
        assert!(designs.iter().enumerate().all(|(i, d)| d.phase as usize == i), "{name}");
        assert_eq!(designs[0].config, cfg, "{name}: the first phase's configuration");
        if name == "engineer" {
            assert!(designs[1..].iter().any(|d| d.rationale.is_some()), "{name}: {designs:?}");
        } else {
            assert!(designs.iter().all(|d| d.rationale.is_none()), "{name}");
        }
    }
    let e = spec("frontier", serde_json::json!({"engineer": {"name": "rules"}}), 0).levels_err();
    assert!(e.to_string().contains("takes no `engineer`"), "{e}");
    let e =
        spec("engineer", serde_json::json!({"engineer": {"name": "rules"}, "context": {}}), 0).levels_err();
    assert!(e.to_string().contains("history_json"), "{e}");
}

#[test]
fn shards_that_apply_one_decision_keep_one_pool() {
    let (mut a, mut out_a) = engine(8, 6);
    let (mut b, mut out_b) = engine(8, 6);
    let mut levels = spec("plr", serde_json::json!({"fresh": 0.5}), 0).levels();
    let mut rng = Rng::from_counters(&[3]);
    for _ in 0..6 {
        let mut episodes = Vec::new();
        for _ in 0..10 {
            let actions: Vec<u8> = (0..out_a.rewards.len()).map(|_| rng.below(5) as u8).collect();
            for (e, out) in [(&mut a, &mut out_a), (&mut b, &mut out_b)] {
                e.step(&actions, out.view()).unwrap();
                let ended = (0..8).filter(|&i| out.terminated[i] + out.truncated[i] > 0);
                episodes.extend(ended.map(|i| EpisodeRecord::from(out.info[i])));
            }
        }
        // The pool's slots as one shard sees them, the environments in play summed over both.
        let mut records = Levels::levels(&a).unwrap();
        for (r, other) in records.iter_mut().zip(Levels::levels(&b).unwrap()) {
            r.in_play += other.in_play;
        }
        let decision = levels.decide(&records, Some(&episodes), None).unwrap();
        Levels::apply(&mut a, &decision, out_a.view()).unwrap();
        Levels::apply(&mut b, &decision, out_b.view()).unwrap();
    }
    assert!(levels.source().drawn() > 0, "new levels came");
    assert_eq!(a.weights(), b.weights());
    for i in 0..6 {
        assert_eq!(a.pool().grid(i), b.pool().grid(i), "slot {i}");
        assert_eq!(a.pool().generation(i), b.pool().generation(i), "slot {i}");
    }
}

/// Every step's marks against the definition, read off the whole history: an episode replays
/// its level when an episode on the same slot and generation ended in a step before the one it
/// began in. PLR refills slots as it goes, so generations change under the marks.
#[test]
fn first_plays_and_replays_are_marked_by_the_history() {
    let (mut env, mut out) = engine(16, 6);
    let mut levels = spec("plr", serde_json::json!({"fresh": 0.5}), 4).levels();
    assert!(levels.robust(), "plr is robust PLR by default");
    assert!(!spec("plr", serde_json::json!({"robust": false}), 4).levels().robust());
    assert!(!spec("uniform", serde_json::Value::Null, 4).levels().robust());
    levels.start(&mut env, out.view()).unwrap();
    assert!(levels.first_play().is_empty(), "no step recorded yet");
    // Every ended episode so far: (step, slot, generation).
    let mut ends: Vec<(u64, u32, u32)> = Vec::new();
    let mut rng = Rng::from_counters(&[3]);
    let (mut first, mut replays, mut marked) = (0, 0, Vec::new());
    for t in 0..120u64 {
        let actions: Vec<u8> = (0..out.rewards.len()).map(|_| rng.below(5) as u8).collect();
        env.step(&actions, out.view()).unwrap();
        let want: Vec<bool> = out
            .info
            .iter()
            .map(|i| {
                let began = t + 1 - u64::from(i.episode_steps);
                !ends.iter().any(|&(s, slot, g)| s < began && slot == i.instance && g == i.generation)
            })
            .collect();
        let called = levels.after_step(&mut env, out.view()).unwrap();
        assert_eq!(levels.first_play(), want.as_slice(), "step {t}");
        for (e, i) in out.info.iter().enumerate() {
            if out.terminated[e] + out.truncated[e] > 0 {
                ends.push((t, i.instance, i.generation));
                marked.push(want[e]);
            }
        }
        if called.is_none() {
            let n = levels.pending_first_play().len();
            assert_eq!(n, levels.pending().len());
            assert_eq!(levels.pending_first_play(), &marked[marked.len() - n..], "step {t}");
        } else {
            assert!(levels.pending_first_play().is_empty());
        }
        first += want.iter().filter(|&&f| f).count();
        replays += want.iter().filter(|&&f| !f).count();
    }
    assert!(levels.totals().refilled > 0, "{:?}", levels.totals());
    assert!(first > 0 && replays > 0, "both kinds seen: {first} first plays, {replays} replays");
}

/// Two environments on one slot, by hand: both play it first until their episodes end together
/// (by the limit); the episodes they begin after are replays.
#[test]
fn episodes_that_end_together_are_first_plays_and_the_next_ones_replays() {
    let (mut env, mut out) = engine(2, 1);
    let mut levels = spec("uniform", serde_json::Value::Null, 0).levels();
    levels.start(&mut env, out.view()).unwrap();
    // Agents that wait never end an episode but by the limit (8 steps); both begin in step 0.
    let waiting = vec![0u8; out.rewards.len()];
    for _ in 0..7 {
        env.step(&waiting, out.view()).unwrap();
        levels.record(&env, &out.view()).unwrap();
        assert_eq!(levels.first_play(), [true, true]);
    }
    env.step(&waiting, out.view()).unwrap();
    levels.record(&env, &out.view()).unwrap();
    assert_eq!((out.truncated[0], out.truncated[1]), (1, 1), "both end by the limit together");
    assert_eq!(levels.first_play(), [true, true], "ended in the same step: both first plays");
    assert_eq!(levels.pending_first_play(), [true, true]);
    env.step(&waiting, out.view()).unwrap();
    levels.record(&env, &out.view()).unwrap();
    assert_eq!(levels.first_play(), [false, false], "begun after the level's first end: replays");
}

/// `accel` edits the levels it replays into other slots: the driver makes the edited levels
/// from the pool (solved again, so their optima are known), and `decide`, which has no pool,
/// refuses a plan with edits.
#[test]
fn accel_edits_replayed_levels_into_the_pool() {
    let (mut env, mut out) = engine(16, 8);
    let params =
        serde_json::json!({"plr": {"fresh": 0.25}, "edits": 2, "edit_fraction": 0.25, "edit_from": "top"});
    let mut levels = spec("accel", params.clone(), 4).levels();
    assert!(levels.robust(), "ACCEL learns from replays, as robust PLR");
    levels.start(&mut env, out.view()).unwrap();
    let unknown_before: Vec<bool> =
        (0..8).map(|i| env.pool().optimal_soc(i) == floe_core::failure::NONE).collect();
    assert!(unknown_before.iter().all(|&u| u), "the space draws levels unsolved");
    run(&mut levels, &mut env, &mut out, 80);
    let (edited, failed) = levels.edited();
    assert!(edited > 0, "edits made: {edited}, {failed} replaced by new levels");
    // An edited level was solved again: some slots now hold levels with a known optimum, and
    // each such slot was refilled.
    let solved: Vec<usize> =
        (0..8).filter(|&i| env.pool().optimal_soc(i) != floe_core::failure::NONE).collect();
    assert!(!solved.is_empty() && solved.iter().all(|&i| env.pool().generation(i) > 0), "{solved:?}");
    // Ray's hub decides without a pool: edits are refused there, by name.
    let mut hub = spec("accel", params, 0).levels();
    let records = Levels::levels(&env).unwrap();
    hub.decide(&records, Some(&[]), None).unwrap();
    let eps: Vec<EpisodeRecord> = (0..8u32)
        .map(|slot| EpisodeRecord {
            outcome: 1,
            instance: slot,
            generation: env.pool().generation(slot as usize),
            ..EpisodeRecord::default()
        })
        .collect();
    let e = hub.decide(&records, Some(&eps), Some(&[1.0; 8])).unwrap_err();
    assert!(e.to_string().contains("need the pool's levels"), "{e}");
}

/// Each kept episode's environment and end step are where the host saw it end, whatever order
/// the host scores in; a sampler call drops them with the episodes.
#[test]
fn kept_episodes_are_keyed_by_environment_and_end_step() {
    let (mut env, mut out) = engine(8, 6);
    let mut levels = spec("plr", serde_json::json!({}), 0).levels();
    levels.start(&mut env, out.view()).unwrap();
    let mut rng = Rng::from_counters(&[3]);
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..25 {
        let t = levels.steps_recorded();
        let actions: Vec<u8> = (0..out.rewards.len()).map(|_| rng.below(5) as u8).collect();
        env.step(&actions, out.view()).unwrap();
        levels.after_step(&mut env, out.view()).unwrap();
        for e in (0..8).filter(|&e| out.terminated[e] + out.truncated[e] > 0) {
            seen.insert((e as u32, t), out.info[e].instance);
        }
    }
    assert_eq!(levels.steps_recorded(), 25);
    let keys: Vec<(u32, u64)> =
        levels.pending_envs().iter().copied().zip(levels.pending_end_steps().iter().copied()).collect();
    assert_eq!(keys.len(), seen.len());
    for (k, e) in keys.iter().zip(levels.pending()) {
        assert_eq!(seen[k], e.instance, "{k:?}");
    }
    levels.update(&mut env, None, None, out.view()).unwrap();
    assert!(levels.pending_envs().is_empty() && levels.pending_end_steps().is_empty());
}
