//! Loading real plugin libraries at run time: the built-in Rust library, a second Rust library
//! of the same kind side by side, C plugins of every kind, and libraries that fail in each way
//! (missing, not a library, no entry point, wrong C ABI version, abi_stable layout mismatch,
//! panics, errors, bad output). None of them may take the host down.

mod common;

use std::path::PathBuf;

use common::{c_plugin, rust_plugin};
use floe_core::{verify, Check, Grid, Instance, Plan, Pos};
use floe_plugin_api::catalog::{new_curriculum, new_level_sampler, new_reward};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{
    step_flags, Capabilities, EpisodeRecord, FailureKind, History, LevelRecord, PluginError, PluginKind,
    ReplayRecord, ReplayRequest, RoundRecord, SizeResult, StepOutcome, VerdictRecord, UNKNOWN,
};
use floe_plugin_host::{load, Abi, LoadFailure};

/// Real verification records: a 1x4 corridor with two agents, verified plans of every tier.
fn verdict_batch() -> Vec<VerdictRecord> {
    let grid = Grid::from_rows(&["FFFF"]).unwrap();
    let agents = vec![
        floe_core::Agent { start: Pos::new(0, 0), goal: Pos::new(0, 1) },
        floe_core::Agent { start: Pos::new(0, 3), goal: Pos::new(0, 2) },
    ];
    let inst = Instance::new(grid, agents).unwrap();
    let plans = [
        Plan::from_move_strings(&["R", "L"]).unwrap(),     // optimal
        Plan::from_move_strings(&["RW", "WL"]).unwrap(),   // valid, SoC 3 > 2
        Plan::from_move_strings(&["RW", "WW"]).unwrap(),   // goal_not_reached, 1 of 2 on goal
        Plan::from_move_strings(&["RRL", "LWR"]).unwrap(), // vertex conflict at t = 2
    ];
    let mut batch: Vec<VerdictRecord> = plans
        .iter()
        .map(|p| VerdictRecord::from_plan(&inst, p, &verify(&inst, p, Check::default())))
        .collect();
    let unreadable = floe_core::Verdict::failed(FailureKind::ParseError, "no plan".into(), Some(2));
    batch.push(VerdictRecord::from_verdict(&unreadable, 2));
    batch
}

fn history() -> History {
    let mut h = History::default();
    let config = floe_plugin_api::RoundConfig::round0_default();
    let results = (3..=10)
        .map(|size| SizeResult {
            size,
            valid_rate: if size <= 5 { 0.8 } else { 0.3 },
            optimal_rate: 0.2,
            instances: 150,
            failures: [(FailureKind::VertexConflict, 20)].into(),
            mean_abs_advantage: Some(f64::from(size) / 20.0),
        })
        .collect();
    h.rounds.push(RoundRecord { round: 0, config, results });
    h
}

fn pool() -> Vec<ReplayRecord> {
    (0..8)
        .map(|i| ReplayRecord {
            id: 100 + i,
            size: 3 + (i as u32 % 4),
            agents: 2,
            last_round: (i as u32) % 3,
            samples: if i == 5 { 0 } else { 8 },
            mean_reward: 0.1 * i as f32,
            reward_std: 0.05 * i as f32,
            success_rate: 0.1 * i as f32,
            reserved: 0,
        })
        .collect()
}

/// Four slots and six ended episodes: slot 0 solved twice, slot 1 failed twice, slot 2 once of
/// two, slot 3 not played.
fn level_batch() -> (Vec<LevelRecord>, Vec<EpisodeRecord>) {
    let levels = (0..4)
        .map(|slot| LevelRecord {
            slot,
            width: 5,
            height: 5,
            agents: 2,
            in_play: u32::from(slot == 1),
            ..LevelRecord::default()
        })
        .collect();
    let ep = |instance, success: bool| EpisodeRecord {
        episode_steps: 6,
        outcome: if success { 1 } else { 2 },
        failure_kind: if success { 0 } else { 6 },
        failure_agent: if success { UNKNOWN } else { 0 },
        instance,
        generation: 0,
        episode_return: if success { 1.5 } else { -1.0 },
        agents_on_goal: if success { 2 } else { 0 },
    };
    (levels, vec![ep(0, true), ep(1, false), ep(2, true), ep(0, true), ep(1, false), ep(2, false)])
}

#[test]
fn a_c_level_sampler_loads_and_steers_by_its_own_rule() {
    let lib = load(c_plugin("level_sampler")).unwrap();
    assert_eq!(lib.abi(), Abi::C);
    let info = &lib.plugins()[0];
    assert_eq!((info.kind, info.name.as_str()), (PluginKind::LevelSampler, "c-learnability"));
    let (levels, episodes) = level_batch();
    let mut s = lib.new_level_sampler("c-learnability", r#"{"min_episodes": 2}"#).unwrap();
    let plan = s.update(&levels, &[], None).unwrap();
    assert_eq!(plan.weights, Some(vec![1.0; 4]), "nothing scored: every slot 1");
    let plan = s.update(&levels, &episodes, None).unwrap();
    // Slot 0: always solved (0.05, refilled: nobody plays it); slot 1: never (0.05, in play, kept);
    // slot 2: half (0.05 + 0.25); slot 3: not scored (1).
    assert_eq!(plan.weights, Some(vec![0.05, 0.05, 0.3, 1.0]));
    assert_eq!(plan.refill, vec![0]);
    assert_eq!(plan.config, None);
    // A slot's statistics start again at its next generation.
    let mut refilled = levels.clone();
    refilled[0].generation = 1;
    let plan = s.update(&refilled, &[], None).unwrap();
    assert_eq!(plan.weights, Some(vec![1.0, 0.05, 0.3, 1.0]));
    // The host's checks hold for a C plugin too.
    let far = [EpisodeRecord { instance: 9, ..episodes[0] }];
    assert!(matches!(s.update(&levels, &far, None), Err(PluginError::BadInput(_))));
    assert!(matches!(
        lib.new_level_sampler("c-learnability", r#"{"min_episodes": 0}"#),
        Err(PluginError::Config(_))
    ));
    assert!(matches!(lib.new_reward("c-learnability", ""), Err(PluginError::UnknownPlugin(_))));
}

#[test]
fn the_builtin_library_loads_and_matches_the_in_process_plugins() {
    let path = rust_plugin("floe-plugins");
    let lib = load(&path).unwrap();
    assert_eq!(lib.abi(), Abi::AbiStable);
    assert_eq!(lib.path(), path);
    let names: Vec<(PluginKind, &str)> = lib.plugins().iter().map(|p| (p.kind, p.name.as_str())).collect();
    assert_eq!(
        names,
        vec![
            (PluginKind::Reward, "tiered"),
            (PluginKind::Reward, "shaped"),
            (PluginKind::Curriculum, "fixed"),
            (PluginKind::Curriculum, "difficulty-scaling"),
            (PluginKind::Curriculum, "plr"),
            (PluginKind::Curriculum, "sec"),
            (PluginKind::Curriculum, "frontier"),
            (PluginKind::Curriculum, "schedule"),
            (PluginKind::EnvEngineer, "rules"),
            (PluginKind::LevelSampler, "uniform"),
            (PluginKind::LevelSampler, "plr"),
            (PluginKind::LevelSampler, "accel"),
            (PluginKind::LevelSampler, "learnability"),
        ]
    );
    assert!(lib.skipped().is_empty());
    let builtins = floe_plugins::catalog();

    // Rewards: the same numbers through the library as in-process.
    let batch = verdict_batch();
    let mut loaded = lib.new_reward("tiered", r#"{"soc_credit": 0.2}"#).unwrap();
    let mut local = new_reward(&builtins, "tiered", r#"{"soc_credit": 0.2}"#).unwrap();
    let (mut a, mut b) = (vec![0.0; batch.len()], vec![0.0; batch.len()]);
    loaded.verdict_rewards(&batch, &mut a).unwrap();
    local.verdict_rewards(&batch, &mut b).unwrap();
    assert_eq!(a, b);
    // optimal 1; valid 0.6 + 0.2 * 2/3; goal_not_reached 0.1 + 0.1 + 0.1 * 1/2; vertex conflict
    // after 1 of 3 steps 0.1 + 0.1/3; unparseable 0.
    let want = [1.0, 0.6 + 0.2 * 2.0 / 3.0, 0.25, 0.1 + 0.1 / 3.0, 0.0];
    for (got, want) in a.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{a:?}");
    }
    let steps = [
        StepOutcome { prev_distance: 2, new_distance: 1, flags: 0 },
        StepOutcome { prev_distance: 1, new_distance: 0, flags: step_flags::REACHED_GOAL },
        StepOutcome { prev_distance: 1, new_distance: UNKNOWN, flags: step_flags::FELL_IN_HOLE },
    ];
    let mut shaped = lib.new_reward("shaped", "").unwrap();
    let mut out = [0.0; 3];
    shaped.step_rewards(&steps, &mut out).unwrap();
    assert!((out[0] - 0.09).abs() < 1e-6 && (out[1] - 1.09).abs() < 1e-6 && (out[2] + 1.01).abs() < 1e-6);

    // Curricula: configurations and replay picks cross as JSON and slices, unchanged.
    let h = history();
    for name in ["fixed", "difficulty-scaling", "plr", "sec", "frontier", "schedule"] {
        let mut loaded = lib.new_curriculum(name, "").unwrap();
        let mut local = new_curriculum(&builtins, name, "").unwrap();
        assert_eq!(loaded.next_config(&h).unwrap(), local.next_config(&h).unwrap(), "{name}");
    }
    let req = ReplayRequest { round: 2, count: 3, seed: 11 };
    let mut plr = lib.new_curriculum("plr", "").unwrap();
    let picked = plr.sample_replay(&pool(), &req).unwrap();
    assert_eq!(picked, new_curriculum(&builtins, "plr", "").unwrap().sample_replay(&pool(), &req).unwrap());
    assert_eq!(picked.len(), 3);
    assert!(!picked.contains(&5), "never-played instance 5 replayed: {picked:?}");

    // The engineer reads a history from its context and explains itself.
    let mut rules = lib.new_engineer("rules", "").unwrap();
    let reply = rules.design(&format!("```json\n{}\n```", h.to_json()), &DesignLimits::default()).unwrap();
    reply.config.validate().unwrap();
    assert!(reply.rationale.contains("size 3: valid rate 0.80, harder"), "{}", reply.rationale);

    // Level samplers: the same plans through the library as in-process, the host's scores
    // included.
    let (levels, episodes) = level_batch();
    let scores: Vec<f32> = (0..episodes.len()).map(|i| 0.1 * i as f32).collect();
    for name in ["uniform", "plr", "learnability"] {
        let params = r#"{"min_episodes": 1, "window": 2}"#;
        let params = if name == "learnability" { params } else { "" };
        let mut loaded = lib.new_level_sampler(name, params).unwrap();
        let mut local = new_level_sampler(&builtins, name, params).unwrap();
        for (call, s) in [None, Some(&scores[..])].into_iter().enumerate() {
            let a = loaded.update(&levels, &episodes, s).unwrap();
            assert_eq!(a, local.update(&levels, &episodes, s).unwrap(), "{name}");
            assert!(call > 0 || a.weights.is_some(), "{name}: the first call sets weights");
        }
    }

    // ACCEL's edits cannot cross a library's boundary yet: the library refuses a plan with edits
    // by name, where the built-in makes them.
    let params = r#"{"plr": {"fresh": 0.0}, "edit_fraction": 0.25, "edit_from": "top"}"#;
    let mut loaded = lib.new_level_sampler("accel", params).unwrap();
    let mut local = new_level_sampler(&builtins, "accel", params).unwrap();
    assert!(!local.update(&levels, &episodes, Some(&scores)).unwrap().edits.is_empty());
    let e = loaded.update(&levels, &episodes, Some(&scores)).unwrap_err();
    assert!(e.to_string().contains("cannot ask for edited levels"), "{e}");

    // Wrong names and kinds are errors, not crashes.
    assert!(matches!(lib.new_level_sampler("tiered", ""), Err(PluginError::UnknownPlugin(_))));
    assert!(matches!(lib.new_reward("sec", ""), Err(PluginError::UnknownPlugin(_))));
    assert!(matches!(lib.new_reward("tiered", "{"), Err(PluginError::Config(_))));
    let mut t = lib.new_reward("tiered", "").unwrap();
    assert!(matches!(t.verdict_rewards(&batch, &mut [0.0; 2]), Err(PluginError::BadInput(_))));
}

#[test]
fn libraries_of_one_kind_load_side_by_side() {
    let builtin = load(rust_plugin("floe-plugins")).unwrap();
    let example = load(rust_plugin("floe-example-plugin")).unwrap();
    let c = load(c_plugin("valid_reward")).unwrap();
    assert_eq!(example.abi(), Abi::AbiStable);
    assert_eq!(example.plugins()[0].name, "valid-or-partial");
    assert_eq!(c.abi(), Abi::C);
    assert_eq!(c.plugins()[0].name, "c-valid-reward");
    assert_eq!(c.plugins()[0].version, "1.0.0");

    let batch = verdict_batch();
    let mut rewards = [
        builtin.new_reward("tiered", "").unwrap(),
        example.new_reward("valid-or-partial", r#"{"partial": 0.5}"#).unwrap(),
        c.new_reward("c-valid-reward", "").unwrap(),
        // A second instance of the same C plugin, alive at the same time.
        c.new_reward("c-valid-reward", "").unwrap(),
    ];
    let mut outs = vec![vec![0.0; batch.len()]; rewards.len()];
    for (r, out) in rewards.iter_mut().zip(outs.iter_mut()) {
        r.verdict_rewards(&batch, out).unwrap();
    }
    assert!((outs[0][2] - 0.25).abs() < 1e-6);
    assert_eq!(outs[1], vec![1.0, 1.0, 0.5, 0.0, 0.0]);
    assert_eq!(outs[2], vec![1.0, 0.5, 0.0, 0.0, 0.0]);
    assert_eq!(outs[3], outs[2]);
    // The example library's curriculum: sizes 3 to 5 are at 0.8, so size 6 is the frontier.
    let mut frontier = example.new_curriculum("frontier", "").unwrap();
    let cfg = frontier.next_config(&history()).unwrap();
    assert_eq!(cfg.size(6).unwrap().data_ratio, 1.0);
    assert_eq!(cfg.sizes.iter().map(|s| s.data_ratio).sum::<f64>(), 1.0);
    // Loading a library again gives a working handle too.
    let again = load(rust_plugin("floe-example-plugin")).unwrap();
    assert_eq!(again.plugins(), example.plugins());
}

#[test]
fn c_plugins_of_every_kind() {
    let cur = load(c_plugin("curriculum")).unwrap();
    assert_eq!(
        (cur.plugins()[0].kind, cur.plugins()[0].name.as_str()),
        (PluginKind::Curriculum, "c-stalest-replay")
    );
    let mut c = cur.new_curriculum("c-stalest-replay", "{}").unwrap();
    let cfg = c.next_config(&history()).unwrap();
    assert_eq!(cfg.sizes.iter().map(|s| s.size).collect::<Vec<_>>(), vec![4, 5]);
    assert_eq!(cfg.replay_fraction, 0.25);
    // last_round = i % 3 over ids 0..8, id 5 never played: round 0 for 0, 3, 6; then 1, 4, 7.
    let picked = c.sample_replay(&pool(), &ReplayRequest { round: 3, count: 4, seed: 0 }).unwrap();
    assert_eq!(picked, vec![0, 3, 6, 1]);
    let too_many = c.sample_replay(&pool(), &ReplayRequest { round: 3, count: 8, seed: 0 }).unwrap_err();
    assert_eq!(too_many, PluginError::BadInput("8 replays asked for, only 7 played instances".into()));
    assert!(matches!(cur.new_reward("c-stalest-replay", ""), Err(PluginError::UnknownPlugin(_))));

    let eng = load(c_plugin("engineer")).unwrap();
    let mut e = eng.new_engineer("c-constant-engineer", "").unwrap();
    // The limits cross as a value (`design_with_limits`): the plugin designs inside them.
    let limits = DesignLimits {
        min_size: 4,
        max_size: 8,
        agents: vec![3, 2],
        max_hole_ratio: 0.25,
        ..DesignLimits::default()
    };
    let reply = e.design("twelve bytes", &limits).unwrap();
    assert_eq!(reply.rationale, "read 12 bytes of context; sizes 4 to 8, agents 3");
    assert_eq!((reply.config.sizes[0].size, reply.config.sizes[0].hole_ratio), (8, 0.25));
    assert_eq!(reply.config.agents, vec![3]);
    assert!(matches!(e.design("a\0b", &limits), Err(PluginError::BadInput(_))));
    // Built before `design_with_limits`: its struct ends before it (the function is set beyond
    // struct_size, and must not be called), so `design` is, with the context alone.
    let mut old = eng.new_engineer("c-constant-engineer", r#"{"first_release": true}"#).unwrap();
    let reply = old.design("twelve bytes", &limits).unwrap();
    assert_eq!(reply.rationale, "read 12 bytes of context");
    assert_eq!(reply.config.agents, vec![2, 3]);

    let rew = load(c_plugin("valid_reward")).unwrap();
    let mut r = rew.new_reward("c-valid-reward", "").unwrap();
    let mut bad = verdict_batch();
    bad[1].failure = 42;
    let err = r.verdict_rewards(&bad, &mut [0.0; 5]).unwrap_err();
    assert_eq!(err, PluginError::BadInput("record 1: unknown failure code 42".into()));
    assert!(matches!(r.step_rewards(&[], &mut []), Err(PluginError::Unsupported(_))));
}

/// Capabilities come from the plugin's info: declared by a C plugin's field, by a Rust
/// library's entries; a C plugin built before the field existed gets what its functions offer,
/// and one whose declaration and functions disagree does not load.
#[test]
fn capabilities_are_declared_and_an_older_c_plugin_gets_the_default() {
    let caps = |lib: &floe_plugin_host::Library| lib.plugins()[0].capabilities;
    assert_eq!(caps(&load(c_plugin("valid_reward")).unwrap()), Capabilities::SCORES_PLANS);
    assert_eq!(caps(&load(c_plugin("curriculum")).unwrap()), Capabilities::REPLAYS);
    assert_eq!(caps(&load(c_plugin("engineer")).unwrap()), Capabilities::NONE);
    let builtin = load(rust_plugin("floe-plugins")).unwrap();
    let declared = |kind, name| builtin.info(kind, name).unwrap().capabilities;
    assert_eq!(declared(PluginKind::Reward, "shaped"), Capabilities::SCORES_STEPS);
    assert_eq!(declared(PluginKind::Curriculum, "plr"), Capabilities::REPLAYS);
    assert_eq!(declared(PluginKind::Curriculum, "sec"), Capabilities::NONE);

    // Built against the first release: struct_size ends at `design`, garbage after it.
    let old = load(c_plugin("first_release")).unwrap();
    assert_eq!(caps(&old), Capabilities::SCORES_PLANS);
    let mut r = old.new_reward("c-first-release", "").unwrap();
    let mut out = [0.0; 5];
    r.verdict_rewards(&verdict_batch(), &mut out).unwrap();
    assert_eq!(out, [1.0, 1.0, 0.0, 0.0, 0.0]);
    assert!(matches!(r.step_rewards(&[], &mut []), Err(PluginError::Unsupported(_))));

    let e = load(c_plugin("mislabelled")).unwrap_err();
    assert_eq!(
        e.reason,
        LoadFailure::Malformed("capabilities declare replays but sample_replay is NULL".into())
    );
}

#[test]
fn load_failures_are_reported_with_path_and_reason_and_the_host_goes_on() {
    let dir = common::profile_dir().join("c-plugins");
    std::fs::create_dir_all(&dir).unwrap();
    let text_file = dir.join("not-a-library.so");
    std::fs::write(&text_file, "this is not ELF").unwrap();
    let missing = PathBuf::from("/nonexistent/libfloe_nothing.so");
    let paths = vec![
        missing.clone(),
        text_file.clone(),
        c_plugin("no_entry"),
        c_plugin("bad_version"),
        rust_plugin("floe-example-bad-layout"),
        rust_plugin("floe-example-plugin"),
    ];
    // A host loads each path and goes on past the failures.
    let (loaded, errors): (Vec<_>, Vec<_>) = paths.iter().map(load).partition(Result::is_ok);
    let loaded: Vec<_> = loaded.into_iter().map(Result::unwrap).collect();
    let errors: Vec<_> = errors.into_iter().map(Result::unwrap_err).collect();
    assert_eq!(loaded.len(), 1, "the good library still loads");
    assert_eq!(loaded[0].plugins()[0].name, "valid-or-partial");
    assert_eq!(errors.len(), 5);
    for (e, p) in errors.iter().zip(&paths) {
        assert_eq!(&e.path, p);
        assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
    }
    assert_eq!(errors[0].reason, LoadFailure::NotFound);
    assert!(matches!(&errors[1].reason, LoadFailure::Open(_)), "{}", errors[1]);
    assert_eq!(errors[2].reason, LoadFailure::NoEntryPoint);
    assert_eq!(errors[3].reason, LoadFailure::AbiVersion { found: 999, expected: 1 });
    // abi_stable reports the first difference it finds: this root module type comes from
    // another package (and has one field of another type).
    match &errors[4].reason {
        LoadFailure::Layout { summary, report } => {
            assert_eq!(
                summary,
                "mismatched package Expected: floe-plugin-api Found: floe-example-bad-layout"
            );
            assert!(report.contains("fn()->RString"), "{report}");
        }
        other => panic!("{other}"),
    }
    // The good library works after all that.
    let mut r = loaded[0].new_reward("valid-or-partial", "").unwrap();
    let mut out = [0.0; 5];
    r.verdict_rewards(&verdict_batch(), &mut out).unwrap();
    assert_eq!(out, [1.0, 1.0, 0.25, 0.0, 0.0]);
}

#[test]
fn misbehaving_rust_plugins_are_errors() {
    let lib = load(rust_plugin("floe-example-faulty")).unwrap();
    let batch = verdict_batch();
    let mut out = vec![0.0; batch.len()];

    let mut p = lib.new_reward("panics", "").unwrap();
    assert_eq!(
        p.verdict_rewards(&batch, &mut out),
        Err(PluginError::Panicked("panics: 5 records are too many".into()))
    );
    let again = p.verdict_rewards(&batch, &mut out).unwrap_err();
    assert!(matches!(&again, PluginError::Panicked(m) if m.contains("earlier call")), "{again}");
    drop(p);

    assert_eq!(
        lib.new_reward("panics-on-create", "").err(),
        Some(PluginError::Panicked("panics-on-create: no instance today".into()))
    );
    let mut f = lib.new_reward("fails", "").unwrap();
    assert_eq!(
        f.verdict_rewards(&batch, &mut out),
        Err(PluginError::Failed("fails: this reward always refuses".into()))
    );
    let mut c = lib.new_curriculum("bad-config", "").unwrap();
    let e = c.next_config(&History::default()).unwrap_err();
    assert!(matches!(&e, PluginError::BadOutput(m) if m.contains("hole_ratio")), "{e}");
    assert!(matches!(
        c.sample_replay(&pool(), &ReplayRequest { round: 3, count: 1, seed: 0 }),
        Err(PluginError::Unsupported(_))
    ));

    // The library and the host are still fine.
    let mut ok = load(rust_plugin("floe-plugins")).unwrap().new_reward("tiered", "").unwrap();
    ok.verdict_rewards(&batch, &mut out).unwrap();
    assert_eq!(out[0], 1.0);
}

#[test]
fn a_failing_c_plugin_reports_its_message() {
    let lib = load(c_plugin("failing")).unwrap();
    let mut r = lib.new_reward("c-failing", "").unwrap();
    assert_eq!(
        r.verdict_rewards(&verdict_batch(), &mut [0.0; 5]),
        Err(PluginError::Failed("failing.c: out of luck after 5 records".into()))
    );
    assert_eq!(
        r.step_rewards(&[StepOutcome { prev_distance: 2, new_distance: 1, flags: 0 }; 3], &mut [0.0; 3]),
        Err(PluginError::Failed("failing.c: out of luck after 3 step outcomes".into()))
    );
    assert_eq!(
        lib.new_reward("c-failing", r#"{"mode": "fail-entry"}"#).err(),
        Some(PluginError::Config("failing.c: asked to fail in the entry point".into()))
    );
}

#[test]
fn the_header_compiles_as_cpp_included_twice() {
    let root = common::workspace_root();
    let dir = common::profile_dir().join("c-plugins");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("twice.cpp");
    std::fs::write(
        &src,
        "#include \"floe_plugin.h\"\n#include \"floe_plugin.h\"\n\
         static_assert(sizeof(floe_verdict_record) == 28, \"verdict\");\n\
         static_assert(sizeof(floe_step_outcome) == 12, \"step\");\n\
         static_assert(sizeof(floe_replay_record) == 40, \"replay\");\n\
         static_assert(sizeof(floe_replay_request) == 16, \"request\");\n\
         int main() { floe_plugin_entry_v1_fn f = nullptr; return f == nullptr ? 0 : 1; }\n",
    )
    .unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = std::process::Command::new(&cxx)
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(root.join("plugins/api/include"))
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("the C++ compiler {cxx:?} cannot run: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_plugin_guide_carries_the_example_sources() {
    let root = common::workspace_root();
    let guide = std::fs::read_to_string(root.join("docs/plugins.md")).unwrap();
    for file in [
        "plugins/examples/rust-plugin/src/lib.rs",
        "plugins/examples/c/valid_reward.c",
        "plugins/examples/c/level_sampler.c",
    ] {
        let src = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(guide.contains(&src), "docs/plugins.md does not carry {file} verbatim");
    }
}
