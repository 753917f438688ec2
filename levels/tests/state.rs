//! A level sampler saved and restored: a run stopped and resumed from its saved state draws the
//! same levels as one that never stopped, for each built-in sampler; a new engine is made with
//! the saved pool; a state of another version, sampler, space or pool is refused, and nothing
//! changes.

mod common;

use std::sync::Arc;

use common::{engine, run, spec, Make};
use floe_core::engine::{CpuEngine, Engine, StepBuffers};
use floe_levels::{Levels, LevelsError, LevelsState};

/// What a run's levels came to: every slot's level, optimum and generation, the weights, the
/// driver's counts and kept episodes, the source's draws, the last step's outputs.
fn trace(levels: &Levels, env: &CpuEngine, out: &StepBuffers) -> String {
    let pool = env.pool();
    let slots: Vec<_> = (0..pool.len())
        .map(|i| (pool.level(i).unwrap().to_json(), pool.optimal_soc(i), pool.generation(i)))
        .collect();
    format!(
        "{slots:?}\n{:?}\n{:?} {:?} {:?}\n{:?}\n{}\n{:?}",
        env.weights(),
        levels.totals(),
        levels.pending(),
        levels.played(),
        levels.slot_stats(),
        levels.source().drawn(),
        out
    )
}

const BUILT_INS: [(&str, &str); 4] = [
    ("uniform", r#"{"max_plays": 1}"#),
    ("plr", r#"{"fresh": 0.5}"#),
    ("accel", r#"{"edit_fraction": 0.25, "edits": 2}"#),
    ("learnability", r#"{"min_episodes": 1, "window": 4, "refill_fraction": 0.5}"#),
];

fn params(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn a_run_resumed_from_its_saved_state_draws_the_levels_of_one_that_never_stopped() {
    for (name, p) in BUILT_INS {
        let s = spec(name, params(p), 4);
        // Never stopped: 40 steps, then 40 more.
        let (mut env, mut out) = engine(16, 12);
        let mut levels = s.levels();
        levels.start(&mut env, out.view()).unwrap();
        run(&mut levels, &mut env, &mut out, 40);
        run(&mut levels, &mut env, &mut out, 40);
        let went_on = trace(&levels, &env, &out);

        // Stopped after 40 steps: saved (through its JSON text), a new driver from the spec,
        // loaded, started on the engine, and 40 more steps.
        let stopped = || {
            let (mut env, mut out) = engine(16, 12);
            let mut levels = s.levels();
            levels.start(&mut env, out.view()).unwrap();
            run(&mut levels, &mut env, &mut out, 40);
            (levels, env, out)
        };
        let (levels, mut env, mut out) = stopped();
        let text = levels.save(&env).unwrap().to_json().unwrap();
        drop(levels);
        let mut levels = s.levels();
        levels.load(LevelsState::from_json(&text).unwrap()).unwrap();
        let started = levels.start(&mut env, out.view()).unwrap();
        assert_eq!(
            (started.episodes, started.refilled),
            (0, 0),
            "{name}: start puts the state back, no call"
        );
        run(&mut levels, &mut env, &mut out, 40);
        assert_eq!(trace(&levels, &env, &out), went_on, "{name}");

        // A driver that was not restored goes elsewhere: the test can tell.
        let (_, mut fresh_env, mut fresh_out) = stopped();
        let mut fresh = s.levels();
        fresh.start(&mut fresh_env, fresh_out.view()).unwrap();
        run(&mut fresh, &mut fresh_env, &mut fresh_out, 40);
        assert_ne!(trace(&fresh, &fresh_env, &fresh_out), went_on, "{name}");
    }
}

/// The phase designers: a curriculum (replayed on restore) or the engineer, by phases of 30
/// episodes, so that 40 steps end a few phases and the next 40 a few more.
const PHASE_DESIGNERS: [(&str, &str); 6] = [
    ("fixed", r#"{"phase_episodes": 30}"#),
    ("frontier", r#"{"phase_episodes": 30}"#),
    ("difficulty-scaling", r#"{"phase_episodes": 30}"#),
    ("sec", r#"{"phase_episodes": 30}"#),
    ("schedule", r#"{"phase_episodes": 30, "phases": 6}"#),
    ("engineer", r#"{"phase_episodes": 30, "engineer": {"name": "rules"}}"#),
];

#[test]
fn a_phase_designer_resumed_from_its_saved_state_designs_as_one_that_never_stopped() {
    for (name, p) in PHASE_DESIGNERS {
        let s = spec(name, params(p), 4);
        let begin = || {
            let (mut env, mut out) = engine(16, 12);
            let mut levels = s.levels();
            levels.start(&mut env, out.view()).unwrap();
            run(&mut levels, &mut env, &mut out, 40);
            (levels, env, out)
        };
        let (mut levels, mut env, mut out) = begin();
        let halfway = levels.designs().len();
        run(&mut levels, &mut env, &mut out, 40);
        let went_on = (trace(&levels, &env, &out), format!("{:?}", levels.designs()));
        assert!(levels.designs().len() > halfway && halfway >= 2, "{name}: phases in both halves");

        let (levels, mut env, mut out) = begin();
        let text = levels.save(&env).unwrap().to_json().unwrap();
        let mut restored = s.levels();
        restored.load(LevelsState::from_json(&text).unwrap()).unwrap();
        assert_eq!(restored.designs(), levels.designs(), "{name}: the designs back");
        restored.start(&mut env, out.view()).unwrap();
        run(&mut restored, &mut env, &mut out, 40);
        let back = (trace(&restored, &env, &out), format!("{:?}", restored.designs()));
        assert_eq!(back, went_on, "{name}");
    }
    // A state of phases of another length, or of another designer, is refused by name.
    let (levels, env, _) = {
        let (mut env, mut out) = engine(16, 12);
        let mut levels = spec("fixed", params(r#"{"phase_episodes": 30}"#), 4).levels();
        levels.start(&mut env, out.view()).unwrap();
        run(&mut levels, &mut env, &mut out, 40);
        (levels, env, out)
    };
    let state = levels.save(&env).unwrap();
    let e = spec("fixed", params(r#"{"phase_episodes": 31}"#), 4).levels().load(state.clone()).unwrap_err();
    assert!(e.to_string().contains("phases of 30 episodes") && e.to_string().contains("31"), "{e}");
    // The state's first design, edited: the replayed curriculum designs otherwise, and says so.
    let mut value: serde_json::Value = serde_json::from_str(&state.to_json().unwrap()).unwrap();
    let mut inner: serde_json::Value =
        serde_json::from_str(value["sampler_state"].as_str().unwrap()).unwrap();
    let sizes = &mut inner["designs"][0]["config"]["sizes"];
    let first = sizes[0]["data_ratio"].as_f64().unwrap();
    sizes[0]["data_ratio"] = serde_json::json!(first + 0.125);
    value["sampler_state"] = serde_json::json!(inner.to_string());
    let edited = LevelsState::from_json(&value.to_string()).unwrap();
    let mut other = spec("fixed", params(r#"{"phase_episodes": 30}"#), 4).levels();
    let e = other.load(edited).unwrap_err().to_string();
    assert!(e.contains("phase 0 was designed as") && e.contains("when replayed"), "{e}");
    // Its curriculum was called: the sampler refuses to go on rather than design as a fresh one.
    let (mut env, mut out) = engine(16, 12);
    let e = other.start(&mut env, out.view()).unwrap_err().to_string();
    assert!(e.contains("cannot go on"), "{e}");
}

#[test]
fn a_new_engine_is_made_with_the_saved_pool_and_draws_by_the_saved_weights() {
    let s = spec("plr", params(r#"{"fresh": 0.5}"#), 4);
    let (mut env, mut out) = engine(16, 12);
    let mut levels = s.levels();
    levels.start(&mut env, out.view()).unwrap();
    run(&mut levels, &mut env, &mut out, 60);
    assert!(levels.totals().refilled > 0, "generations moved");
    let state = levels.save(&env).unwrap();
    assert!(state.to_json().unwrap().contains(r#""sampler":"plr""#));
    let stats = levels.slot_stats();

    let pool = state.pool().unwrap();
    let mut new_env = CpuEngine::new(env.config().clone(), Arc::new(pool)).unwrap();
    let mut new_out = StepBuffers::new(&new_env.sizes());
    new_env.reset(3, new_out.view()).unwrap();
    let mut restored = s.levels();
    restored.load(state).unwrap();
    restored.start(&mut new_env, new_out.view()).unwrap();
    for i in 0..12 {
        let (a, b) = (env.pool(), new_env.pool());
        assert_eq!(a.level(i).unwrap(), b.level(i).unwrap(), "slot {i}");
        assert_eq!((a.generation(i), a.optimal_soc(i)), (b.generation(i), b.optimal_soc(i)), "slot {i}");
    }
    assert_eq!(new_env.weights(), env.weights());
    assert_eq!(format!("{:?}", restored.slot_stats()), format!("{stats:?}"));
    run(&mut restored, &mut new_env, &mut new_out, 20);
    assert!(restored.totals().episodes > levels.totals().episodes, "it went on counting");
}

#[test]
fn a_state_that_does_not_fit_is_refused_and_changes_nothing() {
    let s = spec("plr", params(r#"{"fresh": 0.5}"#), 4);
    let (mut env, mut out) = engine(16, 12);
    let mut levels = s.levels();
    levels.start(&mut env, out.view()).unwrap();
    run(&mut levels, &mut env, &mut out, 40);
    let state = levels.save(&env).unwrap();
    let text = state.to_json().unwrap();
    let state_err = |e: LevelsError| match e {
        LevelsError::State(m) => m,
        e => panic!("{e}"),
    };

    // Another version, said before anything else is read; text that does not read.
    let v2 = text.replacen("\"version\":1", "\"version\":2", 1);
    let m = state_err(LevelsState::from_json(&v2).unwrap_err());
    assert!(m.contains("version 2") && m.contains("reads version 1"), "{m}");
    assert!(state_err(LevelsState::from_json("{\"version\": 1}").unwrap_err()).contains("does not read"));

    // Another sampler, update_every, level space, sampler parameters.
    let m = state_err(spec("uniform", serde_json::Value::Null, 4).levels().load(state.clone()).unwrap_err());
    assert!(m.contains("`plr`") && m.contains("`uniform`"), "{m}");
    let m = state_err(spec("plr", params(r#"{"fresh": 0.5}"#), 8).levels().load(state.clone()).unwrap_err());
    assert!(m.contains("update_every 4") && m.contains('8'), "{m}");
    let mut other_space = spec("plr", params(r#"{"fresh": 0.5}"#), 4);
    other_space.space.size = [5, 9];
    let m = state_err(other_space.levels().load(state.clone()).unwrap_err());
    assert!(m.contains("level space"), "{m}");
    let e = spec("plr", params(r#"{"fresh": 0.25}"#), 4).levels().load(state.clone()).unwrap_err();
    assert!(matches!(e, LevelsError::Sampler { .. }) && e.to_string().contains("fresh"), "{e}");

    // An engine whose pool is not the saved one: refused at start, nothing changed; every other
    // call waits for start; the right engine is then taken.
    let mut restored = s.levels();
    restored.load(state).unwrap();
    let (mut other, mut other_out) = engine(16, 12);
    let m = state_err(restored.start(&mut other, other_out.view()).unwrap_err());
    assert!(m.contains("not the saved one") && m.contains("generation"), "{m}");
    assert_eq!(other.weights(), None, "the other engine's weights are as they were");
    let m = state_err(restored.after_step(&mut env, out.view()).unwrap_err());
    assert!(m.contains("call start first"), "{m}");
    assert!(restored.save(&env).is_err());
    restored.start(&mut env, out.view()).unwrap();
    run(&mut restored, &mut env, &mut out, 4);

    // A sampler that keeps no saved form says so.
    struct Unsaved;
    impl floe_plugin_api::LevelSampler for Unsaved {
        fn update(
            &mut self,
            _: &[floe_plugin_api::LevelRecord],
            _: &[floe_plugin_api::EpisodeRecord],
            _: Option<&[f32]>,
        ) -> Result<floe_plugin_api::LevelPlan, floe_plugin_api::PluginError> {
            Ok(floe_plugin_api::LevelPlan::default())
        }
    }
    let source = floe_levels::LevelSource::new(common::space(), 1).unwrap();
    let mut unsaved = Levels::new("unsaved", Box::new(Unsaved), source, 2);
    let (mut env, mut out) = engine(16, 8);
    unsaved.start(&mut env, out.view()).unwrap();
    let e = unsaved.save(&env).unwrap_err();
    assert!(e.to_string().contains("does not support saving its state"), "{e}");
}
