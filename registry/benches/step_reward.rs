//! What a step-reward plugin costs a step: the CPU engine stepped with the same actions alone and
//! with the built-in `shaped` reward named as its `step_reward` (soft collisions, holes as walls,
//! 16×16 maps at density 0.2, 4 and 64 agents), side by side in one run. Throughput is in
//! agent-steps. `FLOE_BENCH_SMALL=1` shrinks every batch for a quick run.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use floe_core::engine::{InstancePool, Optima, StepBuffers};
use floe_core::generator::{random_instances, GeneratorConfig};
use floe_plugin_registry::{open_engine, EngineSpec};

fn small() -> bool {
    std::env::var("FLOE_BENCH_SMALL").as_deref() == Ok("1")
}

/// Eight batches of action codes, drawn once (a xorshift), cycled through by the step loop.
fn actions(len: usize) -> Vec<Vec<u8>> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..8)
        .map(|_| {
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 5) as u8
                })
                .collect()
        })
        .collect()
}

fn stepping(c: &mut Criterion) {
    let envs = if small() { 16 } else { 1024 };
    let mut group = c.benchmark_group("step_reward");
    for k in [4usize, 64] {
        let insts = random_instances(
            &GeneratorConfig::default().size(16).agents(k).hole_ratio(0.2).count(16).seed(1),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        for (label, reward) in [("engine", ""), ("shaped", r#", "step_reward": {"name": "shaped"}"#)] {
            let spec = EngineSpec::from_json_text(&format!(
                r#"{{"num_envs": {envs}, "mode": "soft", "holes": "block", "episode_limit": 64{reward}}}"#
            ))
            .expect("spec");
            let mut engine = open_engine(&spec, Arc::clone(&pool)).expect("engine");
            let mut out = StepBuffers::new(&engine.sizes());
            engine.reset(0, out.view()).expect("reset");
            let batches = actions(out.rewards.len());
            let mut t = 0;
            group.throughput(Throughput::Elements((envs * k) as u64));
            group.bench_function(BenchmarkId::new(label, format!("16x16_d0.2_k{k}")), |b| {
                b.iter(|| {
                    t = (t + 1) % batches.len();
                    engine.step(&batches[t], out.view()).expect("sized buffers");
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, stepping);
criterion_main!(benches);
