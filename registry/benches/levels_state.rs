//! What saving and restoring a level sampler costs: `plr` over a pool of 4,096 slots of 2–6 agents
//! on 8×8 to 16×16 maps, after 64 steps of 1,024 environments (every slot scored or pending),
//! saved to JSON text (`Levels::save`, `LevelsState::to_json`) and read back into a new driver
//! (`LevelsState::from_json`, `Levels::load`, the pool rebuilt). `FLOE_BENCH_SMALL=1` shrinks the
//! pool to 256 slots for a quick run.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use floe_core::engine::{CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, Optima, StepBuffers};
use floe_levels::{LevelSpace, LevelsSpec, LevelsState};
use floe_plugin_api::PluginSpec;

fn saving(c: &mut Criterion) {
    let slots = if std::env::var("FLOE_BENCH_SMALL").as_deref() == Ok("1") { 256 } else { 4096 };
    let space = LevelSpace {
        agents: [2, 6],
        size: [8, 16],
        hole_ratio: [0.0, 0.2],
        wait_ratio: [0.0, 0.5],
        solve: false,
    };
    let spec = LevelsSpec {
        sampler: PluginSpec { name: "plr".into(), params: serde_json::json!({}), library: None },
        space: space.clone(),
        source: None,
        seed: 1,
        update_every: 8,
    };
    let mut levels = floe_plugin_registry::levels(&spec).unwrap();
    let pool = InstancePool::with_room(&levels.draw(slots).unwrap(), Optima::AsStored, space.room()).unwrap();
    let cfg =
        EnvConfig { num_envs: 1024, mode: CollisionMode::Soft, episode_limit: 16, ..EnvConfig::default() };
    let mut env = CpuEngine::new(cfg, Arc::new(pool)).unwrap();
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(1, out.view()).unwrap();
    levels.start(&mut env, out.view()).unwrap();
    let mut rng = floe_core::rng::Rng::from_counters(&[7]);
    for _ in 0..64 {
        let actions: Vec<u8> = (0..out.rewards.len()).map(|_| rng.below(5) as u8).collect();
        env.step(&actions, out.view()).unwrap();
        levels.after_step(&mut env, out.view()).unwrap();
    }
    let text = levels.save(&env).unwrap().to_json().unwrap();
    eprintln!("levels_state: {slots} slots, {} bytes of JSON", text.len());
    let mut group = c.benchmark_group("levels_state");
    group.sample_size(20);
    group.bench_function(format!("save/{slots}"), |b| {
        b.iter(|| levels.save(&env).unwrap().to_json().unwrap())
    });
    group.bench_function(format!("restore/{slots}"), |b| {
        b.iter(|| {
            let state = LevelsState::from_json(&text).unwrap();
            let pool = state.pool().unwrap();
            let mut new = floe_plugin_registry::levels(&spec).unwrap();
            new.load(state).unwrap();
            (pool, new)
        });
    });
    group.finish();
}

criterion_group!(benches, saving);
criterion_main!(benches);
