//! Criterion benches of the batched engine: agent-steps per second (soft collisions, random
//! actions, holes as walls), the cost of level sampling (the same steps with every episode's level
//! drawn from per-slot weights, beside the unweighted draw) and plans verified per second (3
//! agents on 8×8), on the CPU backend.
//! `FLOE_BENCH_SMALL=1` shrinks every batch for a quick run (CI runs `cargo bench -- --test`).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use floe_core::engine::{
    CollisionMode, CpuEngine, Engine, EnvConfig, HoleRule, InstancePool, Optima, StepBuffers,
};
use floe_core::generator::{random_instances, GeneratorConfig};
use floe_core::verify::{verification_workload, verify_batch, VerifyOut};

fn small() -> bool {
    std::env::var("FLOE_BENCH_SMALL").as_deref() == Ok("1")
}

fn stepping(c: &mut Criterion) {
    let envs = if small() { 16 } else { 1024 };
    let mut group = c.benchmark_group("step_soft_random");
    for (size, density, k) in [(16, 0.2, 4), (16, 0.2, 64), (32, 0.3, 4), (32, 0.3, 64)] {
        let insts = random_instances(
            &GeneratorConfig::default().size(size).agents(k).hole_ratio(density).count(16).seed(1),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let cfg = EnvConfig {
            num_envs: envs,
            mode: CollisionMode::Soft,
            holes: HoleRule::Block,
            episode_limit: 64,
            obs_radius: 2,
            ..EnvConfig::default()
        };
        let mut engine = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
        let mut out = StepBuffers::new(&engine.sizes());
        engine.reset(0, out.view()).expect("reset");
        group.throughput(Throughput::Elements((envs * k) as u64));
        group.bench_function(BenchmarkId::from_parameter(format!("{size}x{size}_d{density}_k{k}")), |b| {
            b.iter(|| engine.step_random(out.view()).expect("sized buffers"));
        });
    }
    group.finish();
}

/// The step rate with every new episode's level drawn from per-slot weights (an alias table over
/// 1,024 slots) against the unweighted draw, at 4,096 environments: strict steps with random
/// actions end most episodes within a few steps, so nearly every environment draws a level every
/// few steps, the draw's worst case.
fn level_sampling(c: &mut Criterion) {
    let envs = if small() { 64 } else { 4096 };
    let slots = 1024;
    let insts =
        random_instances(&GeneratorConfig::default().size(8).agents(4).hole_ratio(0.2).count(slots).seed(2))
            .expect("draws");
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
    let cfg = EnvConfig {
        num_envs: envs,
        mode: CollisionMode::Strict,
        episode_limit: 32,
        obs_radius: 2,
        ..EnvConfig::default()
    };
    // `weighted`: weights that differ by one part in a million, so that every draw goes through
    // the alias table (its second hash and lookup) while the levels played keep the unweighted
    // draw's distribution and the steps stay the same work; `skewed`: zeros, a long tail and a
    // few heavy slots, which also changes which levels are played.
    let near_equal: Vec<f64> = (0..slots).map(|i| 1.0 + 1e-6 * (i % 2) as f64).collect();
    let skewed: Vec<f64> = (0..slots)
        .map(|i| {
            if i % 7 == 0 {
                0.0
            } else {
                1.0 / (1 + i % 97) as f64 + f64::from(u8::from(i % 101 == 0)) * 5.0
            }
        })
        .collect();
    let mut group = c.benchmark_group("level_sampling");
    group.throughput(Throughput::Elements((envs * 4) as u64));
    for (name, weights) in [("uniform", None), ("weighted", Some(&near_equal)), ("skewed", Some(&skewed))] {
        let mut engine = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("engine");
        if let Some(w) = weights {
            engine.set_weights(Some(w)).expect("weights");
        }
        let mut out = StepBuffers::new(&engine.sizes());
        engine.reset(0, out.view()).expect("reset");
        group.bench_function(BenchmarkId::from_parameter(format!("{name}_{envs}_envs")), |b| {
            b.iter(|| engine.step_random(out.view()).expect("sized buffers"));
        });
    }
    group.finish();
}

fn verification(c: &mut Criterion) {
    let plans = if small() { 1_000 } else { 100_000 };
    let (pool, batch) = verification_workload(plans);
    let mut out = vec![VerifyOut::default(); plans];
    let mut group = c.benchmark_group("verify");
    group.throughput(Throughput::Elements(plans as u64));
    group.bench_function("3_agents_8x8", |b| {
        b.iter(|| verify_batch(&pool, &batch, &mut out, None).expect("valid batch"));
    });
    group.finish();
}

criterion_group!(benches, stepping, level_sampling, verification);
criterion_main!(benches);
