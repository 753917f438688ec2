//! Fixed workloads for instruction counts (`valgrind --tool=callgrind`, one rayon thread):
//! `workload <verify|verify-wide|strict|soft> [repetitions]`: `verify` verifies the criterion bench's batch of plans (3 agents on 8×8, a quarter of them
//! broken) ten times, `verify-wide` 2,000 plans of 16 agents that wait 32 steps ten times; `strict` and `soft` take 200 steps of random actions in 256 environments
//! of 16 agents on 16×16. Run it with 0 repetitions too and subtract
//! to leave the setup out. `workload pogema <radius> <bytes|bits|none> [repetitions] [agents]`
//! takes 100 steps (per repetition) in the per-core POGEMA setting: 64 environments of 64 agents
//! on 16×16, density 0.3, soft collisions with holes as walls (with `agents`, 4,096 / agents
//! environments of that many). Needs the `testing` feature.

use std::sync::Arc;

use floe_core::engine::{
    CollisionMode, CpuEngine, Engine, EnvConfig, HoleRule, InstancePool, ObsFormat, Optima, StepBuffers,
};
use floe_core::generator::{random_instances, GeneratorConfig};
use floe_core::verify::{verification_workload, verify_batch, PlanBatch, VerifyOut};

fn verify(reps: usize) {
    let plans = 100_000;
    let (pool, batch) = verification_workload(plans);
    let mut out = vec![VerifyOut::default(); plans];
    let mut valid = 0;
    for _ in 0..reps {
        verify_batch(&pool, &batch, &mut out, None).expect("valid batch");
        valid += out.iter().filter(|o| o.valid == 1).count();
    }
    println!("{valid} valid");
}

/// 2,000 plans of 16 agents on 16×16 that wait 32 steps: every step is judged whole (the plans
/// end with `goal_not_reached`).
fn verify_wide(reps: usize) {
    let insts =
        random_instances(&GeneratorConfig::default().size(16).agents(16).hole_ratio(0.2).count(16).seed(1))
            .expect("draws");
    let pool = InstancePool::new(&insts, Optima::AsStored).expect("pool");
    let mut batch = PlanBatch::new(16, 32);
    for n in 0..2_000 {
        batch.push((n % insts.len()) as u32, &vec![vec![floe_core::Move::Wait; 32]; 16]).expect("fits");
    }
    let mut out = vec![VerifyOut::default(); batch.len()];
    let mut failed = 0;
    for _ in 0..reps {
        verify_batch(&pool, &batch, &mut out, None).expect("valid batch");
        failed += out.iter().filter(|o| o.valid == 0).count();
    }
    println!("{failed} failed");
}

fn step(mode: CollisionMode, reps: usize) {
    let insts =
        random_instances(&GeneratorConfig::default().size(16).agents(16).hole_ratio(0.2).count(16).seed(1))
            .expect("draws");
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
    let cfg = EnvConfig {
        num_envs: 256,
        mode,
        holes: HoleRule::Block,
        episode_limit: 64,
        obs_radius: 2,
        ..EnvConfig::default()
    };
    let mut engine = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&engine.sizes());
    engine.reset(0, out.view()).expect("reset");
    let mut ended = 0;
    for _ in 0..reps {
        engine.step_random(out.view()).expect("sized buffers");
        ended += out.terminated.iter().map(|&t| u64::from(t)).sum::<u64>();
    }
    println!("{ended} ended");
}

/// The per-core POGEMA setting (see the module docs), `reps × 100` steps; with `agents` other
/// than 64, `4,096 / agents` environments of that many agents.
fn pogema(radius: u32, format: ObsFormat, reps: usize, agents: usize) {
    let insts = random_instances(&GeneratorConfig {
        max_attempts: 100,
        ..GeneratorConfig::default().size(16).agents(agents).hole_ratio(0.3).count(64).seed(1)
    })
    .expect("draws");
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
    let cfg = EnvConfig {
        num_envs: 4096 / agents,
        mode: CollisionMode::Soft,
        holes: HoleRule::Block,
        episode_limit: 64,
        obs_radius: radius,
        obs_format: format,
        ..EnvConfig::default()
    };
    let mut engine = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&engine.sizes());
    engine.reset(0, out.view()).expect("reset");
    let mut ended = 0;
    for _ in 0..reps * 100 {
        engine.step_random(out.view()).expect("sized buffers");
        ended += out.truncated.iter().map(|&t| u64::from(t)).sum::<u64>();
    }
    println!("{ended} ended");
}

fn main() {
    let reps: Option<usize> = std::env::args().nth(2).and_then(|r| r.parse().ok());
    match std::env::args().nth(1).as_deref() {
        Some("verify") => verify(reps.unwrap_or(10)),
        Some("verify-wide") => verify_wide(reps.unwrap_or(10)),
        Some("strict") => step(CollisionMode::Strict, reps.unwrap_or(200)),
        Some("soft") => step(CollisionMode::Soft, reps.unwrap_or(200)),
        Some("pogema") => {
            let arg = |i: usize| std::env::args().nth(i).unwrap_or_default();
            let (Ok(radius), Ok(format)) = (arg(2).parse(), ObsFormat::from_name(&arg(3))) else {
                eprintln!("usage: workload pogema <radius> <bytes|bits|none> [repetitions] [agents]");
                std::process::exit(2);
            };
            pogema(radius, format, arg(4).parse().unwrap_or(1), arg(5).parse().unwrap_or(64).clamp(1, 255));
        }
        _ => {
            eprintln!("usage: workload verify|verify-wide|strict|soft [repetitions]");
            eprintln!("       workload pogema <radius> <bytes|bits|none> [repetitions] [agents]");
            std::process::exit(2);
        }
    }
}
