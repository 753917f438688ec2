//! Criterion benches of the batched engine: agent-steps per second (soft collisions, random
//! actions, holes as walls) and plans verified per second (3 agents on 8×8), on the CPU backend.
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

criterion_group!(benches, stepping, verification);
criterion_main!(benches);
