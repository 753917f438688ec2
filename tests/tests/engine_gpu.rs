//! Golden tests: the wgpu backend against the CPU reference, demanding identical outputs.
//!
//! Without a GPU adapter these tests print why and pass, unless `FLOE_REQUIRE_GPU=1` (set by
//! the test script after installing Mesa's lavapipe), in which case a missing adapter fails.

use std::sync::Arc;

use floe_core::engine::gpu::{GpuContext, GpuEngine, GpuVerifier, GPU_MAX_AGENTS};
use floe_core::engine::records::event;
use floe_core::engine::{
    obs_stride, CollisionMode, CpuEngine, Engine, EngineError, EnvConfig, HoleRule, InstancePool, ObsFormat,
    Optima, Room, StepBuffers,
};
use floe_core::generator::{random_instances, GeneratorConfig};
use floe_core::rng::Rng;
use floe_core::verify::{verify_batch, PlanBatch, Verifier, VerifyOut};
use floe_core::{FailureKind, Instance, Move, Plan};

fn context() -> Option<Arc<GpuContext>> {
    match GpuContext::new() {
        Ok(ctx) => {
            eprintln!("GPU adapter: {}", ctx.adapter);
            Some(Arc::new(ctx))
        }
        Err(e) => {
            assert!(std::env::var("FLOE_REQUIRE_GPU").as_deref() != Ok("1"), "FLOE_REQUIRE_GPU=1 but {e}");
            eprintln!("skipping GPU golden test: {e}");
            None
        }
    }
}

fn mixed_instances() -> Vec<Instance> {
    let mut out = floe_tests::random::generated_mix(&[(4, 3, 1), (7, 5, 2), (9, 2, 3)], 4);
    out.extend(
        random_instances(&GeneratorConfig::default().size(6).agents(9).hole_ratio(0.2).count(4).seed(4))
            .expect("draws"),
    );
    out
}

fn assert_same(cpu: &StepBuffers, gpu: &StepBuffers, what: &str) {
    assert_eq!(cpu.terminated, gpu.terminated, "{what}: terminated");
    assert_eq!(cpu.truncated, gpu.truncated, "{what}: truncated");
    assert_eq!(cpu.info, gpu.info, "{what}: info");
    assert_eq!(cpu.events, gpu.events, "{what}: events");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&cpu.rewards), bits(&gpu.rewards), "{what}: rewards");
    for (name, c, g) in [("obs", &cpu.obs, &gpu.obs), ("final obs", &cpu.final_obs, &gpu.final_obs)] {
        // The first byte that differs, and the agent slot it belongs to (not the whole buffers).
        if let Some(i) = c.iter().zip(g.iter()).position(|(x, y)| x != y) {
            let slot = i / (c.len() / cpu.rewards.len()).max(1);
            panic!("{what}: {name} differs first at byte {i} (agent slot {slot}): cpu {} gpu {}", c[i], g[i]);
        }
        assert_eq!(c.len(), g.len(), "{what}: {name} length");
    }
}

/// One step of both engines, with `actions` or (`None`) each engine's own random actions, then
/// every output compared.
fn step_both(
    (cpu, gpu): (&mut CpuEngine, &mut GpuEngine),
    (a, b): (&mut StepBuffers, &mut StepBuffers),
    actions: Option<&[u8]>,
    what: &str,
) {
    if let Some(actions) = actions {
        cpu.step(actions, a.view()).expect("cpu step");
        gpu.step(actions, b.view()).expect("gpu step");
    } else {
        cpu.step_random(a.view()).expect("cpu step");
        gpu.step_random(1).expect("gpu step");
        gpu.read_outputs(b.view()).expect("read");
    }
    assert_same(a, b, what);
}

#[test]
fn stepping_is_identical_on_both_backends() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&mixed_instances(), Optima::AsStored).expect("pool"));
    let k = pool.max_agents();
    use ObsFormat::{Bits, Bytes, None};
    for (mode, holes, radius, format, given) in [
        (CollisionMode::Strict, HoleRule::Drop, 2, Bytes, true),
        (CollisionMode::Strict, HoleRule::Drop, 1, Bytes, false),
        (CollisionMode::Soft, HoleRule::Drop, 2, Bytes, false),
        (CollisionMode::Soft, HoleRule::Block, 3, Bytes, true),
        (CollisionMode::Strict, HoleRule::Drop, 5, Bits, true),
        (CollisionMode::Soft, HoleRule::Drop, 2, Bits, false),
        (CollisionMode::Soft, HoleRule::Block, 7, Bits, true),
        (CollisionMode::Strict, HoleRule::Drop, 2, None, false),
        (CollisionMode::Soft, HoleRule::Drop, 3, None, true),
    ] {
        let cfg = EnvConfig {
            num_envs: 97,
            mode,
            holes,
            episode_limit: 12,
            obs_radius: radius,
            obs_format: format,
            ..EnvConfig::default()
        };
        let what = format!("{mode:?}/{holes:?}/r{radius}/{format:?}/given {given}");
        let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
        let mut gpu = GpuEngine::new(Arc::clone(&ctx), cfg.clone(), Arc::clone(&pool)).expect("gpu");
        let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
        cpu.reset(11, a.view()).expect("reset");
        gpu.reset(11, b.view()).expect("reset");
        assert_eq!(a.obs, b.obs, "{what}: first observation");
        let mut rng = Rng::from_counters(&[5]);
        let mut ended = 0;
        for t in 0..40 {
            let actions: Option<Vec<u8>> = given.then(|| (0..97 * k).map(|_| rng.below(5) as u8).collect());
            step_both(
                (&mut cpu, &mut gpu),
                (&mut a, &mut b),
                actions.as_deref(),
                &format!("{what}, step {t}"),
            );
            ended += a.terminated.iter().chain(&a.truncated).filter(|&&x| x == 1).count();
            if t == 20 {
                // An environment past its first episode: its episode counter must survive.
                let envs = cpu.state().expect("state").envs;
                let env = envs.iter().position(|e| e.episode > 0).expect("an episode has ended by step 20");
                cpu.reset_to(env, 5, a.view()).expect("cpu reset_to");
                gpu.reset_to(env, 5, b.view()).expect("gpu reset_to");
                assert_eq!(a.obs, b.obs, "{what}: after reset_to");
                let (c, g) = (cpu.state().expect("state"), gpu.state().expect("state"));
                assert_eq!(c.envs, g.envs, "{what}: env state after reset_to");
                assert_eq!(c.agents, g.agents, "{what}: agents after reset_to");
                assert_eq!(
                    (c.envs[env].episode, c.envs[env].step, c.envs[env].instance),
                    (envs[env].episode, 0, 5)
                );
            }
        }
        let (c, g) = (cpu.state().expect("state"), gpu.state().expect("state"));
        assert_eq!(c.envs, g.envs, "{what}: env state");
        assert_eq!(c.agents, g.agents, "{what}: agents");
        assert_eq!(cpu.config(), &cfg, "{what}: the configuration is the caller's");
        assert_eq!(gpu.config(), &cfg, "{what}: the configuration is the caller's");
        assert!(ended > 50, "{what}: episodes should end and reset ({ended})");
    }
}

/// The observation kernel without its bitmaps of agents in workgroup memory (few agents per
/// environment, or maps too large for them: `wgsl::occupancy_map`) looks at every agent; both
/// ways match the CPU.
#[test]
fn observations_without_the_workgroup_bitmaps_match_the_cpu() {
    use floe_core::engine::shaders::wgsl::occupancy_map;
    let Some(ctx) = context() else { return };
    for (size, k) in [(6, 1), (12, 3), (200, 16), (12, 20)] {
        let insts = random_instances(
            &GeneratorConfig::default().size(size).agents(k).hole_ratio(0.2).count(4).seed(9),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let bitmaps = occupancy_map(k, size).1 > 0;
        assert_eq!(bitmaps, (size, k) == (12, 20), "{size}x{size}, {k} agents");
        for format in [ObsFormat::Bytes, ObsFormat::Bits] {
            let cfg = EnvConfig {
                num_envs: 45,
                mode: CollisionMode::Soft,
                episode_limit: 7,
                obs_radius: 3,
                obs_format: format,
                ..EnvConfig::default()
            };
            let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
            let mut gpu = GpuEngine::new(Arc::clone(&ctx), cfg, Arc::clone(&pool)).expect("gpu");
            let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
            cpu.reset(4, a.view()).expect("reset");
            gpu.reset(4, b.view()).expect("reset");
            assert_eq!(a.obs, b.obs, "{size}x{size}, {k} agents, {format:?}: first observation");
            for t in 0..15 {
                let what = format!("{size}x{size}, {k} agents, {format:?}, step {t}");
                step_both((&mut cpu, &mut gpu), (&mut a, &mut b), None, &what);
            }
        }
    }
}

#[test]
fn many_steps_per_submission_match_the_cpu() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&mixed_instances(), Optima::AsStored).expect("pool"));
    let cfg =
        EnvConfig { num_envs: 300, mode: CollisionMode::Soft, episode_limit: 30, ..EnvConfig::default() };
    let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
    let mut gpu = GpuEngine::new(ctx, cfg.clone(), Arc::clone(&pool)).expect("gpu");
    let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
    cpu.reset(2, a.view()).expect("reset");
    gpu.reset(2, b.view()).expect("reset");
    for _ in 0..50 {
        cpu.step_random(a.view()).expect("step");
    }
    gpu.step_random(50).expect("steps");
    gpu.read_outputs(b.view()).expect("read");
    assert_same(&a, &b, "after 50 steps in one submission");
    let (mut g1, mut g2) = (vec![0u8; 300 * 3 * 81], vec![0u8; 300 * 3 * 81]);
    cpu.global_state(&mut g1).expect("global");
    gpu.global_state(&mut g2).expect("global");
    assert_eq!(g1, g2);
}

#[test]
fn batched_verification_is_identical_on_both_backends() {
    let Some(ctx) = context() else { return };
    let insts: Vec<Instance> = mixed_instances().into_iter().filter(|i| i.optimal.is_some()).collect();
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
    let mut batch = PlanBatch::new(pool.max_agents(), 20);
    let mut rng = Rng::from_counters(&[3]);
    for n in 0..5000 {
        let i = n % insts.len();
        let Ok(Plan::Moves(mut plan)) =
            Plan::from_move_strings(&insts[i].optimal.as_ref().expect("solved").moves)
        else {
            unreachable!()
        };
        for _ in 0..rng.below(3) {
            let a = rng.below(plan.len() as u32) as usize;
            plan[a].insert(0, Move::ALL[rng.below(5) as usize]);
        }
        if n % 50 == 0 {
            plan.pop();
        }
        for m in &mut plan {
            m.truncate(20);
        }
        batch.push(i as u32, &plan).expect("fits");
    }
    let mut moves = batch.moves().to_vec();
    moves[7] = 42; // a parse error in plan 0
    let batch = PlanBatch::from_arrays(
        batch.max_agents(),
        20,
        batch.instances().to_vec(),
        batch.agent_counts().to_vec(),
        moves,
    )
    .expect("the same shape");
    let (mut a, mut b) = (vec![VerifyOut::default(); batch.len()], vec![VerifyOut::default(); batch.len()]);
    verify_batch(&pool, &batch, &mut a, None).expect("cpu");
    let verifier = GpuVerifier::new(ctx, Arc::clone(&pool)).expect("gpu");
    verifier.verify(&batch, &mut b).expect("gpu");
    assert_eq!(a, b);
    let kinds: std::collections::BTreeSet<u32> = a.iter().map(|o| o.kind).collect();
    assert!(kinds.len() >= 6, "{kinds:?}");
    // One verifier keeps its buffers between calls: smaller batches after the large one, a
    // larger one after those (the buffers grow), and an empty one, each the CPU's answer.
    for len in [1usize, 37, 0, batch.len(), 3] {
        let part = PlanBatch::from_arrays(
            batch.max_agents(),
            20,
            batch.instances()[..len].to_vec(),
            batch.agent_counts()[..len].to_vec(),
            batch.moves()[..len * batch.max_agents() * 20].to_vec(),
        )
        .expect("a prefix of the batch");
        let (mut a, mut b) = (vec![VerifyOut::default(); len], vec![VerifyOut::default(); len]);
        verify_batch(&pool, &part, &mut a, None).expect("cpu");
        verifier.verify(&part, &mut b).expect("gpu");
        assert_eq!(a, b, "{len} plans");
    }
    // Grown past the first batch: twice the batch, in a fresh order.
    let twice = PlanBatch::from_arrays(
        batch.max_agents(),
        20,
        batch.instances().iter().chain(batch.instances().iter().rev()).copied().collect(),
        batch.agent_counts().iter().chain(batch.agent_counts().iter().rev()).copied().collect(),
        batch
            .moves()
            .chunks(batch.max_agents() * 20)
            .chain(batch.moves().chunks(batch.max_agents() * 20).rev())
            .flatten()
            .copied()
            .collect(),
    )
    .expect("the same shape");
    let (mut a, mut b) = (vec![VerifyOut::default(); twice.len()], vec![VerifyOut::default(); twice.len()]);
    verify_batch(&pool, &twice, &mut a, None).expect("cpu");
    verifier.verify(&twice, &mut b).expect("gpu");
    assert_eq!(a, b);
}

/// Every misuse of the [`Engine`] interface, and the error each backend gives for it: the same
/// error on both, and nothing changed by a refused call.
fn misuse(engine: &mut dyn Engine) -> Vec<String> {
    let sizes = engine.sizes();
    let mut errors = Vec::new();
    let mut out = StepBuffers::new(&sizes);
    let actions = vec![0u8; sizes.actions];
    let mut note =
        |r: Result<(), EngineError>| errors.push(format!("{:?}", r.expect_err("misuse is refused")));
    note(engine.step(&actions, out.view()));
    note(engine.reset_to(0, 0, out.view()));
    let mut short = StepBuffers::new(&sizes);
    short.rewards.pop();
    note(engine.reset(1, short.view()));
    engine.reset(1, out.view()).expect("reset");
    let before = engine.state().expect("state");
    note(engine.step(&actions[1..], out.view()));
    let mut bad = actions.clone();
    bad[sizes.actions - 1] = 5;
    note(engine.step(&bad, out.view()));
    note(engine.step(&actions, short.view()));
    note(engine.reset_to(sizes.num_envs, 0, out.view()));
    note(engine.reset_to(0, engine.pool().len(), out.view()));
    note(engine.global_state(&mut vec![0; sizes.global_state + 1]));
    assert_eq!(engine.state().expect("state"), before, "a refused call changed the state");
    errors
}

#[test]
fn the_same_misuse_gets_the_same_error_on_both_backends() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&mixed_instances(), Optima::AsStored).expect("pool"));
    let cfg = EnvConfig { num_envs: 5, ..EnvConfig::default() };
    let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
    let mut gpu = GpuEngine::new(ctx, cfg, pool).expect("gpu");
    let errors = misuse(&mut cpu);
    assert_eq!(errors.len(), 9);
    assert_eq!(errors, misuse(&mut gpu));
    assert!(errors[0].contains("NotReset"), "{errors:?}");
}

/// A batch larger than the adapter can bind is refused with an error that says so, when the
/// engine is made (it used to be a wgpu validation panic at the first bind group).
#[test]
fn an_engine_too_large_for_the_adapter_is_refused() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&mixed_instances(), Optima::AsStored).expect("pool"));
    // More than 4 GiB of observations: over any adapter's per-buffer binding limit.
    let k = pool.max_agents();
    let cfg = EnvConfig {
        num_envs: (1usize << 32) / (k * obs_stride(5)) + 1,
        obs_radius: 5,
        ..EnvConfig::default()
    };
    match GpuEngine::new(ctx, cfg, pool) {
        Err(e) => assert!(e.to_string().contains("binds at most"), "{e}"),
        Ok(_) => panic!("an engine of more than 4 GiB of observations was made"),
    }
}

/// Crowded instances: `many` (size, agents, hole ratio, seed) settings, three instances each,
/// with the small mixed ones, so that every pool instance has its own agent count.
fn crowded_instances(many: &[(u32, usize, f64, u64)]) -> Vec<Instance> {
    let mut out = Vec::new();
    for &(size, k, holes, seed) in many {
        out.extend(
            random_instances(
                &GeneratorConfig::default().size(size).agents(k).hole_ratio(holes).count(3).seed(seed),
            )
            .expect("draws"),
        );
    }
    out.extend(mixed_instances());
    out
}

/// 64 agents on 12×12 maps (half their free cells taken), 40 on 9×9 and 13 on 6×6.
const CROWDED_64: [(u32, usize, f64, u64); 3] = [(12, 64, 0.1, 21), (9, 40, 0.0, 22), (6, 13, 0.2, 23)];

/// Actions in which environment `e` moves each agent with probability (e mod 16 + 1) / 16 (a
/// random direction), else waits: from few movers (single conflicts) to all of them (many at
/// once, of every kind).
fn crowded_actions(rng: &mut Rng, envs: usize, k: usize) -> Vec<u8> {
    let mut actions = vec![0u8; envs * k];
    for (e, acts) in actions.chunks_mut(k).enumerate() {
        for act in acts {
            if rng.below(16) <= (e % 16) as u32 {
                *act = 1 + rng.below(4) as u8;
            }
        }
    }
    actions
}

/// With many agents on crowded maps, strict and soft steps are identical on both backends:
/// which failure is reported and for which agent when several agents fail at once, every
/// agent's conflict flag, soft mode's blocked chains. The CPU's outputs are checked to hold
/// each kind of strict failure, an edge conflict reported over a vertex conflict of lower agents,
/// failures of agents past the first few, and long soft chains of blocked agents.
fn crowded_steps_are_identical(ctx: &Arc<GpuContext>, pool: &Arc<InstancePool>) {
    let k = pool.max_agents();
    let envs = 160;
    for (mode, holes, given) in [
        (CollisionMode::Strict, HoleRule::Drop, true),
        (CollisionMode::Strict, HoleRule::Drop, false),
        (CollisionMode::Soft, HoleRule::Drop, true),
        (CollisionMode::Soft, HoleRule::Block, true),
        (CollisionMode::Soft, HoleRule::Block, false),
    ] {
        let cfg = EnvConfig {
            num_envs: envs,
            mode,
            holes,
            episode_limit: 30,
            obs_radius: 2,
            ..EnvConfig::default()
        };
        let what = format!("{mode:?}/{holes:?}/given {given}");
        let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(pool)).expect("cpu");
        let mut gpu = GpuEngine::new(Arc::clone(ctx), cfg, Arc::clone(pool)).expect("gpu");
        let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
        cpu.reset(7, a.view()).expect("reset");
        gpu.reset(7, b.view()).expect("reset");
        let mut rng = Rng::from_counters(&[9]);
        let mut kinds = std::collections::BTreeSet::new();
        let (mut late_agent, mut edge_over_vertex, mut most_blocked) = (false, false, 0);
        for t in 0..60 {
            let actions = given.then(|| crowded_actions(&mut rng, envs, k));
            step_both(
                (&mut cpu, &mut gpu),
                (&mut a, &mut b),
                actions.as_deref(),
                &format!("{what}, step {t}"),
            );
            for (e, info) in a.info.iter().enumerate() {
                let ev = &a.events[e * k..(e + 1) * k];
                if info.failure_kind != 0 {
                    kinds.insert(info.failure_kind);
                    late_agent |= info.failure_agent >= 8 && info.failure_agent != u32::MAX;
                    let lower = &ev[..(info.failure_agent as usize).min(k)];
                    edge_over_vertex |= info.failure_kind == FailureKind::EdgeConflict as u32
                        && lower.iter().any(|&x| x & event::CONFLICT != 0);
                }
                most_blocked = most_blocked.max(ev.iter().filter(|&&x| x & event::BLOCKED != 0).count());
            }
        }
        let (c, g) = (cpu.state().expect("state"), gpu.state().expect("state"));
        assert_eq!(c.envs, g.envs, "{what}: env state");
        assert_eq!(c.agents, g.agents, "{what}: agents");
        if mode == CollisionMode::Strict {
            for kind in [
                FailureKind::OutOfBounds,
                FailureKind::Hole,
                FailureKind::EdgeConflict,
                FailureKind::VertexConflict,
            ] {
                assert!(kinds.contains(&(kind as u32)), "{what}: no {kind:?} among {kinds:?}");
            }
            assert!(late_agent, "{what}: every failure was an agent below 8");
            assert!(edge_over_vertex, "{what}: no edge conflict reported over a lower vertex conflict");
        } else {
            assert!(most_blocked >= 16, "{what}: at most {most_blocked} agents blocked in one step");
        }
    }
}

/// More agents than the GPU backend takes ([`GPU_MAX_AGENTS`], 64): 255 (the most an instance
/// may have) on 23×23 maps and 210 on 21×21, with [`CROWDED_64`]; both backends' CPU
/// counterparts take them, the GPU engine and verifier refuse them with an error naming the
/// limit (no panic).
#[test]
fn crowded_pools_over_the_gpu_limit_are_refused() {
    let Some(ctx) = context() else { return };
    let many = [(23, 255, 0.03, 31), (21, 210, 0.04, 32), CROWDED_64[0], CROWDED_64[1], CROWDED_64[2]];
    let pool = Arc::new(InstancePool::new(&crowded_instances(&many), Optima::AsStored).expect("pool"));
    assert_eq!(pool.max_agents(), 255);
    let cfg = EnvConfig { num_envs: 4, ..EnvConfig::default() };
    CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("the CPU engine takes 255 agents");
    let limit = format!("at most {GPU_MAX_AGENTS}");
    match GpuEngine::new(Arc::clone(&ctx), cfg, Arc::clone(&pool)) {
        Err(e) => assert!(e.to_string().contains(&limit), "{e}"),
        Ok(_) => panic!("a GPU engine for 255 agents was made"),
    }
    match GpuVerifier::new(ctx, pool) {
        Err(e) => assert!(e.to_string().contains(&limit), "{e}"),
        Ok(_) => panic!("a GPU verifier for 255 agents was made"),
    }
}

#[test]
fn crowded_steps_with_64_agents_are_identical_on_both_backends() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&crowded_instances(&CROWDED_64), Optima::AsStored).expect("pool"));
    assert_eq!(pool.max_agents(), 64);
    crowded_steps_are_identical(&ctx, &pool);
}

/// Conflict-free plans for the pool's instances: each agent's moves of 24 soft steps (holes
/// blocking) of the CPU engine, moves chosen as [`crowded_actions`] chooses them with every
/// agent moving half the time.
fn soft_walks(pool: &Arc<InstancePool>) -> Vec<Vec<Vec<Move>>> {
    let cfg = EnvConfig {
        num_envs: 1,
        mode: CollisionMode::Soft,
        holes: HoleRule::Block,
        episode_limit: 1000,
        ..EnvConfig::default()
    };
    let mut cpu = CpuEngine::new(cfg, Arc::clone(pool)).expect("cpu");
    let mut out = StepBuffers::new(&cpu.sizes());
    let k = pool.max_agents();
    let mut rng = Rng::from_counters(&[17]);
    cpu.reset(1, out.view()).expect("reset");
    (0..pool.len())
        .map(|i| {
            cpu.reset_to(0, i, out.view()).expect("reset_to");
            let n = cpu.state().expect("state").envs[0].agents as usize;
            let mut plan = vec![Vec::new(); n];
            let mut at: Vec<(i64, i64)> = cpu.state().expect("state").agents[..n]
                .iter()
                .map(|r| (r.row.into(), r.col.into()))
                .collect();
            for _ in 0..24 {
                let actions: Vec<u8> =
                    (0..k).map(|_| if rng.below(2) == 0 { 0 } else { 1 + rng.below(4) as u8 }).collect();
                cpu.step(&actions, out.view()).expect("step");
                if out.terminated[0] == 1 || out.truncated[0] == 1 {
                    break;
                }
                let now = cpu.state().expect("state").agents;
                for (a, moves) in plan.iter_mut().enumerate() {
                    let next = (i64::from(now[a].row), i64::from(now[a].col));
                    let d = (next.0 - at[a].0, next.1 - at[a].1);
                    moves.push(*Move::ALL.iter().find(|m| m.delta() == d).expect("one cell at most"));
                    at[a] = next;
                }
            }
            plan
        })
        .collect()
}

/// Batched verification of plans for many agents on crowded maps is identical on both
/// backends: conflict-free walks, and the same walks with moves inserted or cut short, so that
/// plans fail at every kind and at many times and agents, often with several failures at once.
fn crowded_verification_is_identical(ctx: Arc<GpuContext>, pool: &Arc<InstancePool>) {
    let walks = soft_walks(pool);
    let (k, len) = (pool.max_agents(), 30);
    let mut batch = PlanBatch::new(k, len);
    let mut rng = Rng::from_counters(&[23]);
    for n in 0..3000 {
        let i = n % walks.len();
        let mut plan = walks[i].clone();
        for _ in 0..rng.below(4) {
            let a = rng.below(plan.len() as u32) as usize;
            if rng.below(4) == 0 {
                let keep = rng.below(plan[a].len() as u32 + 1) as usize;
                plan[a].truncate(keep);
            } else {
                let at = rng.below(plan[a].len() as u32 + 1) as usize;
                plan[a].insert(at, Move::ALL[1 + rng.below(4) as usize]);
            }
        }
        for m in &mut plan {
            m.truncate(len);
        }
        batch.push(i as u32, &plan).expect("fits");
    }
    let (mut a, mut b) = (vec![VerifyOut::default(); batch.len()], vec![VerifyOut::default(); batch.len()]);
    verify_batch(pool, &batch, &mut a, None).expect("cpu");
    GpuVerifier::new(ctx, Arc::clone(pool)).expect("gpu").verify(&batch, &mut b).expect("gpu");
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "plan {n} (instance {})", batch.instances()[n]);
    }
    let kinds: std::collections::BTreeSet<u32> = a.iter().map(|o| o.kind).collect();
    for kind in [
        FailureKind::OutOfBounds,
        FailureKind::Hole,
        FailureKind::EdgeConflict,
        FailureKind::VertexConflict,
        FailureKind::GoalNotReached,
    ] {
        assert!(kinds.contains(&(kind as u32)), "no {kind:?} among {kinds:?}");
    }
    let late =
        a.iter().filter(|o| o.kind != 0 && o.agent != u32::MAX && o.agent >= 16 && o.time >= 5).count();
    assert!(late > 50, "{late} failures of agents past 16 after time 5");
}

#[test]
fn crowded_verification_with_64_agents_is_identical_on_both_backends() {
    let Some(ctx) = context() else { return };
    let pool = Arc::new(InstancePool::new(&crowded_instances(&CROWDED_64), Optima::AsStored).expect("pool"));
    crowded_verification_is_identical(ctx, &pool);
}

/// An agent that steps onto its goal, off it and back is paid once an episode on both backends:
/// `REACHED` on its first arrival only (the agent word's arrived bit), again after a reset.
#[test]
fn a_goal_is_paid_once_on_both_backends() {
    let Some(ctx) = context() else { return };
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFF", "FFFFH"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [1, 0], "goal": [1, 3]}]}"#,
    )
    .expect("valid");
    let pool = Arc::new(InstancePool::new(&[inst], Optima::AsStored).expect("pool"));
    for mode in [CollisionMode::Strict, CollisionMode::Soft] {
        let cfg = EnvConfig { num_envs: 1, mode, episode_limit: 8, ..EnvConfig::default() };
        let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
        let mut gpu = GpuEngine::new(Arc::clone(&ctx), cfg, Arc::clone(&pool)).expect("gpu");
        let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
        cpu.reset(3, a.view()).expect("reset");
        gpu.reset(3, b.view()).expect("reset");
        let mut reached = Vec::new();
        // Eight steps of on and off the goal; the episode is truncated at the eighth and the
        // next one pays again.
        for t in 0..10 {
            let actions = [if t % 2 == 0 { 4 } else { 3 }, 0];
            step_both((&mut cpu, &mut gpu), (&mut a, &mut b), Some(&actions), &format!("{mode:?}, step {t}"));
            if b.events[0] & event::REACHED != 0 {
                reached.push(t);
            }
        }
        assert_eq!(reached, vec![0, 8], "{mode:?}");
    }
}

/// Level sampling on both backends: weighted draws (with slots of weight 0), new weights between
/// steps, refills of slots with levels of other sizes (their running episodes truncated) and the
/// episode records (returns to the bit): the same bytes on both.
#[test]
fn weighted_draws_and_refills_are_identical_on_both_backends() {
    let Some(ctx) = context() else { return };
    let draw = |size: u32, agents: usize, count: usize, seed: u64| {
        random_instances(
            &GeneratorConfig::default().size(size).agents(agents).hole_ratio(0.2).count(count).seed(seed),
        )
        .expect("draws")
    };
    let levels = draw(5, 3, 12, 1);
    let pool = Arc::new(
        InstancePool::with_room(&levels, Optima::AsStored, Room { agents: 6, side: 11 }).expect("pool"),
    );
    let k = pool.max_agents();
    for (mode, radius, format) in [
        (CollisionMode::Soft, 2, ObsFormat::Bytes),
        (CollisionMode::Strict, 3, ObsFormat::Bits),
        (CollisionMode::Soft, 1, ObsFormat::None),
    ] {
        let cfg = EnvConfig {
            num_envs: 70,
            mode,
            episode_limit: 9,
            obs_radius: radius,
            obs_format: format,
            ..EnvConfig::default()
        };
        let what = format!("{mode:?}/r{radius}/{format:?}");
        let mut cpu = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("cpu");
        let mut gpu = GpuEngine::new(Arc::clone(&ctx), cfg, Arc::clone(&pool)).expect("gpu");
        let (mut a, mut b) = (StepBuffers::new(&cpu.sizes()), StepBuffers::new(&gpu.sizes()));
        let mut weights: Vec<f64> = (0..12).map(|i| if i % 3 == 0 { 0.0 } else { f64::from(i) }).collect();
        cpu.set_weights(Some(&weights)).expect("weights");
        gpu.set_weights(Some(&weights)).expect("weights");
        cpu.reset(21, a.view()).expect("reset");
        gpu.reset(21, b.view()).expect("reset");
        assert_eq!(a.obs, b.obs, "{what}: first observation");
        let mut rng = Rng::from_counters(&[8]);
        let (mut truncated, mut generations) = (0, 0);
        for t in 0..36 {
            let actions: Vec<u8> = (0..70 * k).map(|_| rng.below(5) as u8).collect();
            step_both((&mut cpu, &mut gpu), (&mut a, &mut b), Some(&actions), &format!("{what}, step {t}"));
            let bits =
                |s: &StepBuffers| s.info.iter().map(|i| i.episode_return.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "{what}, step {t}: returns");
            generations += a.info.iter().filter(|i| i.generation > 0).count();
            // Each backend knows its last outputs: both accept them, and refuse the same edits
            // with the same words.
            cpu.check_outputs(&a.view(), None).expect("cpu outputs");
            gpu.check_outputs(&b.view(), None).expect("gpu outputs");
            let running = (0..70).find(|&e| cpu.state().expect("state").envs[e].step > 0);
            if let Some(e) = running {
                let edits: [fn(&mut StepBuffers, usize); 3] = [
                    |o, e| o.info[e].episode_return += 0.5,
                    |o, e| o.truncated[e] = 1,
                    |o, e| {
                        let n = o.obs.len() / 70;
                        if n > 0 {
                            o.obs[e * n] ^= 1;
                        } else {
                            o.info[e].agents_on_goal += 1;
                        }
                    },
                ];
                for edit in edits {
                    let (mut x, mut y) = (a.clone(), b.clone());
                    edit(&mut x, e);
                    edit(&mut y, e);
                    let ec = cpu.check_outputs(&x.view(), None).expect_err("cpu refuses");
                    let eg = gpu.check_outputs(&y.view(), None).expect_err("gpu refuses");
                    assert_eq!(ec.to_string(), eg.to_string(), "{what}, step {t}");
                }
            }
            if t % 6 == 5 {
                // New levels of other sizes in three slots (one of them of weight 0).
                let size = 5 + (t as u32 / 6) % 7;
                let new = draw(size, 2 + t / 6 % 5, 3, t as u64);
                let slots = [t % 12, (t + 4) % 12, (t + 7) % 12];
                let c = cpu.refill(&slots, &new, a.view()).expect("cpu refill");
                let g = gpu.refill(&slots, &new, b.view()).expect("gpu refill");
                assert_eq!(c, g, "{what}, step {t}: refill");
                truncated += c.truncated;
                assert_same(&a, &b, &format!("{what}, step {t}: after the refill"));
                let (sc, sg) = (cpu.state().expect("state"), gpu.state().expect("state"));
                assert_eq!(sc, sg, "{what}, step {t}: state after the refill");
            }
            if t == 17 {
                weights.reverse();
                cpu.set_weights(Some(&weights)).expect("weights");
                gpu.set_weights(Some(&weights)).expect("weights");
            }
            if t == 27 {
                cpu.set_weights(None).expect("weights");
                gpu.set_weights(None).expect("weights");
            }
        }
        assert!(
            truncated > 3 && generations > 3,
            "{what}: {truncated} truncated, {generations} records of refilled slots"
        );
    }
}
