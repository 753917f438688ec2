//! Level sources other than the generator's space: a file of instances, MovingAI maps, a host's
//! function; what each draws, that a driver steps with it, and the bad input each refuses.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use common::{run, space, Make};
use floe_core::engine::{CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers};
use floe_core::Instance;
use floe_levels::{
    FileSource, LevelFn, LevelSource, LevelSpace, LevelsError, LevelsSpec, MapsSource, SourceSpec,
};
use floe_plugin_api::PluginSpec;

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("floe-sources-{}-{name}", std::process::id()));
    drop(std::fs::remove_dir_all(&dir));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `n` levels of the tests' space, unsolved, written as JSON Lines to `dir/levels.jsonl`.
fn level_file(dir: &std::path::Path, n: usize) -> (PathBuf, Vec<Instance>) {
    let levels = LevelSource::new(space(), 11).unwrap().draw(n).unwrap();
    let path = dir.join("levels.jsonl");
    let text: String = levels.iter().map(|l| l.to_json() + "\n").collect();
    std::fs::write(&path, text).unwrap();
    (path, levels)
}

fn file(path: &std::path::Path, solve: bool) -> SourceSpec {
    SourceSpec::File(FileSource { path: path.to_path_buf(), solve })
}

fn source_err(spec: &SourceSpec) -> String {
    match LevelSource::from_spec(spec, 0) {
        Ok(_) => panic!("the source is refused: {spec:?}"),
        Err(e) => e.to_string(),
    }
}

/// The levels without the optimum a solving source adds.
fn bare(levels: &[Instance]) -> Vec<Instance> {
    levels.iter().map(|l| Instance { optimal: None, needs_wait: None, ..l.clone() }).collect()
}

#[test]
fn a_file_is_played_in_passes_each_level_once_a_pass_in_an_order_of_the_seed() {
    let dir = folder("passes");
    let (path, written) = level_file(&dir, 7);
    let mut a = LevelSource::from_spec(&file(&path, true), 3).unwrap();
    let first = a.draw(7).unwrap();
    let second = a.draw(7).unwrap();
    assert!(first.iter().all(|l| l.optimal.is_some()), "solved when read");
    let sorted = |v: Vec<Instance>| {
        let mut v: Vec<String> = v.iter().map(Instance::to_json).collect();
        v.sort();
        v
    };
    let want = sorted(bare(&written));
    assert_eq!(sorted(bare(&first)), want, "the first pass plays every level once");
    assert_eq!(sorted(bare(&second)), want, "and so does the second");
    assert_ne!(first, second, "each pass in its own order");
    assert_ne!(bare(&first), bare(&written), "shuffled");
    let mut b = LevelSource::from_spec(&file(&path, true), 3).unwrap();
    let parts = [b.draw(3).unwrap(), b.draw(9).unwrap(), b.draw(2).unwrap()].concat();
    assert_eq!(parts, [first.clone(), second].concat(), "drawn in parts, the same levels");
    let other = LevelSource::from_spec(&file(&path, true), 4).unwrap().draw(7).unwrap();
    assert_ne!(other, first, "another seed, another order");
    assert_eq!(a.room().agents, written.iter().map(Instance::num_agents).max().unwrap());
    assert_eq!(a.room().side, written.iter().map(|l| l.grid.width()).max().unwrap());
    let unsolved = LevelSource::from_spec(&file(&path, false), 3).unwrap().draw(7).unwrap();
    assert_eq!(bare(&unsolved), bare(&first), "solve changes the optima, not the order");
    assert!(unsolved.iter().all(|l| l.optimal.is_none()));
}

#[test]
fn a_level_file_that_does_not_read_or_is_unsolvable_is_refused_naming_the_line() {
    let dir = folder("bad-file");
    let (path, levels) = level_file(&dir, 3);
    let missing = source_err(&file(&dir.join("none.jsonl"), true));
    assert!(missing.contains("none.jsonl"), "{missing}");
    let text = format!("{}\n{{\"grid\": [\"FF\"], \"agents\": [}}\n", levels[0].to_json());
    std::fs::write(&path, text).unwrap();
    let e = source_err(&file(&path, true));
    assert!(e.contains("line 2") && e.contains("levels.jsonl"), "{e}");
    // A goal walled off by holes: no plan, with or without solving.
    let walled = r#"{"grid": ["FHF", "HHF", "FFF"], "agents": [{"start": [2, 2], "goal": [0, 0]}]}"#;
    std::fs::write(&path, format!("{}\n{walled}\n", levels[0].to_json())).unwrap();
    for solve in [true, false] {
        let e = source_err(&file(&path, solve));
        assert!(e.contains("instance 2") && e.contains("unsolvable"), "{e}");
    }
    // Two agents that must swap in a corridor: each goal reachable, no plan; only CBS tells.
    let swap = r#"{"grid": ["FF"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [0, 1], "goal": [0, 0]}]}"#;
    std::fs::write(&path, format!("{swap}\n")).unwrap();
    let e = source_err(&file(&path, true));
    assert!(e.contains("instance 1") && e.contains("unsolvable"), "{e}");
    LevelSource::from_spec(&file(&path, false), 0).expect("reachability alone takes it");
}

const MAP: &str =
    "type octile\nheight 6\nwidth 8\nmap\n........\n..@@....\n..@@..T.\n........\n@@@.....\n........\n";

#[test]
fn maps_draw_starts_and_goals_on_their_grids_solved_the_same_for_a_seed() {
    let dir = folder("maps");
    let path = dir.join("room.map");
    std::fs::write(&path, MAP).unwrap();
    let spec = SourceSpec::Maps(MapsSource { files: vec![path.clone()], agents: [2, 4], solve: true });
    let mut a = LevelSource::from_spec(&spec, 5).unwrap();
    let levels = a.draw(24).unwrap();
    let grid = floe_core::movingai::parse_map(MAP).unwrap();
    let mut counts = BTreeMap::new();
    for l in &levels {
        assert_eq!(l.grid, grid, "the map's own grid");
        assert!(l.optimal.is_some(), "solved");
        *counts.entry(l.num_agents()).or_insert(0) += 1;
        assert!(l.id.as_deref().is_some_and(|id| id.starts_with("room_")), "{:?}", l.id);
    }
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), [2, 3, 4], "every count of the range: {counts:?}");
    assert_eq!(LevelSource::from_spec(&spec, 5).unwrap().draw(24).unwrap(), levels, "the seed's levels");
    assert_ne!(LevelSource::from_spec(&spec, 6).unwrap().draw(24).unwrap(), levels);
    assert_eq!((a.room().agents, a.room().side), (4, 8));
    let free = SourceSpec::Maps(MapsSource { files: vec![path], agents: [2, 4], solve: false });
    assert!(LevelSource::from_spec(&free, 5).unwrap().draw(24).unwrap().iter().all(|l| l.optimal.is_none()));
}

#[test]
fn a_map_too_large_for_the_engine_or_too_small_for_the_agents_is_refused_naming_it() {
    let dir = folder("bad-maps");
    let wide = dir.join("wide.map");
    std::fs::write(&wide, format!("type octile\nheight 1\nwidth 1025\nmap\n{}\n", ".".repeat(1025))).unwrap();
    let maps = |p: &std::path::Path, agents| {
        SourceSpec::Maps(MapsSource { files: vec![p.to_path_buf()], agents, solve: false })
    };
    let e = source_err(&maps(&wide, [2, 2]));
    assert!(e.contains("wide.map is 1025x1") && e.contains("side of 1024"), "{e}");
    let tiny = dir.join("tiny.map");
    std::fs::write(&tiny, "type octile\nheight 2\nwidth 3\nmap\n.@.\n.@@\n").unwrap();
    let e = source_err(&maps(&tiny, [2, 2]));
    assert!(e.contains("tiny.map") && e.contains("has 2 cells") && e.contains("need 4"), "{e}");
    let broken = dir.join("broken.map");
    std::fs::write(&broken, "type octile\nheight 3\nwidth 3\nmap\n...\n...\n").unwrap();
    let e = source_err(&maps(&broken, [2, 2]));
    assert!(e.contains("broken.map") && e.contains("3 rows"), "{e}");
    let e = source_err(&maps(&tiny, [3, 2]));
    assert!(e.contains("agents [3, 2]"), "{e}");
}

/// A function that draws from the tests' space with its seed.
fn from_space() -> LevelFn {
    Arc::new(|n, seed| LevelSource::new(space(), seed).and_then(|mut s| s.draw(n)).map_err(|e| e.to_string()))
}

#[test]
fn a_function_is_handed_the_count_and_a_seed_of_the_draw_and_its_levels_are_checked() {
    let fn_space = LevelSpace { wait_ratio: LevelSpace::default().wait_ratio, ..space() };
    let mut a = LevelSource::from_fn(fn_space.clone(), from_space(), 2).unwrap();
    let x = [a.draw(4).unwrap(), a.draw(4).unwrap()].concat();
    let mut b = LevelSource::from_fn(fn_space.clone(), from_space(), 2).unwrap();
    assert_eq!(x, [b.draw(4).unwrap(), b.draw(4).unwrap()].concat(), "the same seeds handed out");
    assert_ne!(x[..4], x[4..], "each call its own seed");
    assert_eq!(a.room(), fn_space.room());
    let solved = LevelSpace { solve: true, ..fn_space.clone() };
    assert!(LevelSource::from_fn(solved, from_space(), 2)
        .unwrap()
        .draw(3)
        .unwrap()
        .iter()
        .all(|l| l.optimal.is_some()));
    let refuse = |f: LevelFn, space: &LevelSpace| {
        LevelSource::from_fn(space.clone(), f, 0).unwrap().draw(3).unwrap_err().to_string()
    };
    let e = refuse(Arc::new(|_, _| Err("no levels today".into())), &fn_space);
    assert!(e.contains("no levels today") && e.contains("3 levels"), "{e}");
    let short: LevelFn = Arc::new(|n, seed| (from_space())(n - 1, seed));
    assert!(refuse(short, &fn_space).contains("asked for 3 levels, answered 2"));
    let narrow = LevelSpace { agents: [2, 2], ..fn_space.clone() };
    let e = refuse(from_space(), &LevelSpace { size: [5, 7], ..narrow.clone() });
    let e2 = refuse(from_space(), &LevelSpace { agents: [3, 3], ..narrow });
    assert!([&e, &e2].iter().any(|e| e.contains("outside the level space's agents")), "{e} / {e2}");
    let no_holes = LevelSpace { hole_ratio: [0.0, 0.0], ..fn_space.clone() };
    assert!(refuse(from_space(), &no_holes).contains("hole ratio"));
    let e = match LevelSource::from_fn(space(), from_space(), 0) {
        Ok(_) => panic!("a wait ratio beside a function"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("wait_ratio"), "{e}");
}

fn file_spec(name: &str, params: serde_json::Value, path: &std::path::Path) -> LevelsSpec {
    LevelsSpec {
        sampler: PluginSpec { name: name.into(), params, library: None },
        space: LevelSpace::default(),
        source: Some(file(path, false)),
        seed: 9,
        update_every: 4,
    }
}

#[test]
fn a_driver_refills_its_pool_from_a_file_and_saves_and_loads_with_it() {
    let dir = folder("driver");
    let (path, written) = level_file(&dir, 20);
    let spec = file_spec("uniform", serde_json::json!({"max_plays": 1}), &path);
    let text = serde_json::to_string(&spec).unwrap();
    assert!(text.contains(r#""source":{"file":{"path":"#), "{text}");
    assert_eq!(LevelsSpec::from_json(&text).unwrap(), spec, "the spec reads back");
    let mut levels = spec.levels();
    let first = levels.draw(8).unwrap();
    let pool = Arc::new(InstancePool::with_room(&first, Optima::AsStored, levels.source().room()).unwrap());
    let cfg = EnvConfig { num_envs: 16, mode: CollisionMode::Soft, episode_limit: 8, ..EnvConfig::default() };
    let mut env = CpuEngine::new(cfg, pool).unwrap();
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(1, out.view()).unwrap();
    levels.start(&mut env, out.view()).unwrap();
    run(&mut levels, &mut env, &mut out, 40);
    assert!(levels.source().drawn() > 8, "refilled: {} drawn", levels.source().drawn());
    let ours: Vec<String> = bare(&written).iter().map(Instance::to_json).collect();
    for i in 0..env.pool().len() {
        let level = env.pool().level(i).unwrap();
        assert!(ours.contains(&bare(&[level])[0].to_json()), "slot {i} holds a level of the file");
    }
    let state = levels.save(&env).unwrap();
    let mut again = spec.levels();
    again.load(floe_levels::LevelsState::from_json(&state.to_json().unwrap()).unwrap()).unwrap();
    assert_eq!(again.source(), levels.source(), "the file source back, at its count");
    assert_eq!(again.draw(5).unwrap(), levels.draw(5).unwrap(), "and drawing on from there");
    let mut elsewhere = LevelsSpec { source: None, ..spec.clone() }.levels();
    let e = elsewhere.load(state).unwrap_err();
    assert!(matches!(e, LevelsError::State(_)) && e.to_string().contains("levels from"), "{e}");
}

#[test]
fn a_source_beside_a_space_or_under_a_phase_designer_is_refused() {
    let dir = folder("refused");
    let (path, _) = level_file(&dir, 2);
    let beside = LevelsSpec { space: space(), ..file_spec("uniform", serde_json::Value::Null, &path) };
    let e = beside.levels_err().to_string();
    assert!(e.contains("`source`") && e.contains("`space`"), "{e}");
    for name in ["fixed", "frontier", "engineer"] {
        let e = file_spec(name, serde_json::Value::Null, &path).levels_err().to_string();
        assert!(e.contains(&format!("`{name}` designs")), "{e}");
    }
    let mut source = LevelSource::from_spec(&file(&path, false), 0).unwrap();
    let e = source.set_config(floe_plugin_api::RoundConfig::round0_default()).unwrap_err();
    assert!(e.to_string().contains("drawn by the generator"), "{e}");
}
