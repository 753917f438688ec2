//! The CPU engine: batched verification equals the single-plan verifier, strict stepping fails
//! exactly where the verifier does, soft stepping keeps the invariants, and results depend only
//! on (seed, env), not on batch size or threads.

use std::sync::Arc;

use floe_core::engine::{
    event, obs_stride, outcome, AgentRecord, CollisionMode, CpuEngine, Engine, EnvConfig, EnvState,
    InstancePool, Optima, StepBuffers,
};
use floe_core::generator::GeneratorConfig;
use floe_core::rng::Rng;
use floe_core::verify::batch::END;
use floe_core::verify::{verify, verify_batch, Check, PlanBatch, VerifyOut};
use floe_core::{Instance, Move, Plan};
use proptest::prelude::*;

fn instances() -> Vec<Instance> {
    floe_tests::random::generated_mix(&[(3, 2, 1), (5, 3, 2), (8, 3, 3), (6, 4, 4), (10, 5, 5)], 6)
}

/// A plan near the optimal one: random edits (insert, delete, replace moves; drop an agent).
fn mutated_plan(inst: &Instance, rng: &mut Rng) -> Vec<Vec<Move>> {
    let opt = Plan::from_move_strings(&inst.optimal.as_ref().expect("stored").moves).expect("letters");
    let Plan::Moves(mut plan) = opt else { unreachable!("move strings give moves") };
    for _ in 0..rng.below(4) {
        let a = rng.below(plan.len() as u32) as usize;
        let m = Move::ALL[rng.below(5) as usize];
        let len = plan[a].len() as u32;
        match rng.below(4) {
            0 => plan[a].insert(rng.below(len + 1) as usize, m),
            1 if len > 0 => {
                plan[a].remove(rng.below(len) as usize);
            }
            2 if len > 0 => plan[a][rng.below(len) as usize] = m,
            _ => plan[a].push(m),
        }
    }
    if rng.below(20) == 0 {
        plan.pop();
    }
    plan
}

#[test]
fn batched_verification_equals_the_single_verifier() {
    let insts = instances();
    let pool = InstancePool::new(&insts, Optima::AsStored).expect("pool");
    let mut batch = PlanBatch::new(pool.max_agents(), 24);
    let mut expected = Vec::new();
    let mut rng = Rng::from_counters(&[42]);
    for round in 0..40 {
        for (i, inst) in insts.iter().enumerate() {
            let plan = if round % 3 == 0 {
                // Fully random plans fail in every way.
                (0..inst.num_agents())
                    .map(|_| (0..rng.below(12)).map(|_| Move::ALL[rng.below(5) as usize]).collect())
                    .collect()
            } else {
                mutated_plan(inst, &mut rng)
            };
            batch.push(i as u32, &plan).expect("fits");
            let v = verify(inst, &Plan::Moves(plan), Check::against(Some(pool.optimal_soc(i))));
            expected.push(VerifyOut::from_verdict(&v));
        }
    }
    // A code that is not a move is a parse error.
    batch.push(0, &[vec![Move::Up], vec![]]).expect("fits");
    let n = batch.len();
    let mut moves = batch.moves().to_vec();
    moves[(n - 1) * pool.max_agents() * 24] = 9;
    let batch = PlanBatch::from_arrays(
        pool.max_agents(),
        24,
        batch.instances().to_vec(),
        batch.agent_counts().to_vec(),
        moves,
    )
    .expect("the same shape");
    expected.push(VerifyOut { kind: 1, optimal_soc: pool.optimal_soc(0), ..VerifyOut::default() });

    let mut out = vec![VerifyOut::default(); batch.len()];
    verify_batch(&pool, &batch, &mut out, None).expect("verifies");
    let mut kinds = std::collections::BTreeSet::new();
    for (i, (got, want)) in out.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "plan {i}");
        kinds.insert(got.kind);
    }
    // Valid, parse error, wrong count, out of bounds, hole, vertex, edge, goal not reached.
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 4, 5, 6, 7, 8]);
    assert!(out.iter().any(|o| o.optimal == 1) && out.iter().any(|o| o.valid == 1 && o.optimal == 0));
    assert!(batch.moves().contains(&END));
}

fn state(env: &CpuEngine) -> EnvState {
    env.state().expect("the CPU state")
}

fn engine(mode: CollisionMode, num_envs: usize, insts: &[Instance], seed: u64) -> (CpuEngine, StepBuffers) {
    let pool = Arc::new(InstancePool::new(insts, Optima::AsStored).expect("pool"));
    let cfg = EnvConfig { num_envs, mode, episode_limit: 20, obs_radius: 2, ..EnvConfig::default() };
    let mut e = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&e.sizes());
    e.reset(seed, out.view()).expect("reset");
    (e, out)
}

#[test]
fn strict_episodes_fail_exactly_where_the_verifier_does() {
    let insts = instances();
    let (mut env, mut out) = engine(CollisionMode::Strict, 64, &insts, 7);
    let k = env.pool().max_agents();
    let mut rng = Rng::from_counters(&[8]);
    // Per env: the instance it plays and the actions taken so far.
    let mut history: Vec<(usize, Vec<Vec<Move>>)> =
        (0..64).map(|e| (state(&env).envs[e].instance as usize, Vec::new())).collect();
    let mut checked = [0usize; 4];
    for _ in 0..200 {
        let mut actions = vec![0u8; 64 * k];
        for (e, (p, moves)) in history.iter_mut().enumerate() {
            let agents = insts[*p].num_agents();
            moves.resize(agents, Vec::new());
            for (a, m) in moves.iter_mut().enumerate() {
                // Mostly the optimal next move, sometimes a random one.
                let opt = &insts[*p].optimal.as_ref().expect("stored").moves[a];
                let t = m.len();
                let code = if rng.below(6) == 0 {
                    rng.below(5) as u8
                } else {
                    opt.chars().nth(t).and_then(Move::from_letter).map_or(0, |mv| mv as u8)
                };
                actions[e * k + a] = code;
                m.push(Move::from_code(code).expect("0..=4"));
            }
        }
        env.step(&actions, out.view()).expect("steps");
        for (e, (p, moves)) in history.iter_mut().enumerate() {
            let info = out.info[e];
            if out.terminated[e] == 0 && out.truncated[e] == 0 {
                continue;
            }
            let inst = &insts[*p];
            let v = verify(inst, &Plan::Moves(moves.clone()), Check::against(None));
            match info.outcome {
                outcome::SUCCESS => assert!(v.valid, "env {e}: {v:?}"),
                outcome::FAILURE => {
                    let f = v.failure.expect("the verifier fails too");
                    assert_eq!(
                        (f.kind as u32, f.agent.map(|a| a as u32), f.time),
                        (info.failure_kind, Some(info.failure_agent), Some(info.episode_steps)),
                        "env {e}"
                    );
                }
                outcome::TRUNCATED => {
                    assert_eq!(info.episode_steps, 20);
                    assert_eq!(v.failure.map(|f| f.kind as u32), Some(8), "not on goals yet");
                }
                o => panic!("ended with outcome {o}"),
            }
            checked[info.outcome as usize] += 1;
            *p = state(&env).envs[e].instance as usize;
            moves.clear();
        }
    }
    assert!(checked[1] > 20 && checked[2] > 20 && checked[3] > 0, "{checked:?}");
}

#[test]
fn soft_collisions_follow_the_documented_rule() {
    // One row "FFFFF" plus a second row; agents placed to exercise each case.
    let inst = |agents: &str| {
        Instance::from_json(&format!(r#"{{"grid": ["FFFFF", "FFFFH"], "agents": [{agents}]}}"#))
            .expect("valid")
    };
    let run = |insts: &[Instance], actions: &[u8]| {
        let (mut env, mut out) = engine(CollisionMode::Soft, 1, insts, 0);
        env.reset_to(0, 0, out.view()).expect("reset");
        let mut acts = actions.to_vec();
        acts.resize(env.pool().max_agents(), 0);
        env.step(&acts, out.view()).expect("steps");
        // The maps here are 5 wide.
        let cells: Vec<u32> = state(&env).agents.iter().map(|a| a.row * 5 + a.col).collect();
        (cells, out.events.clone())
    };
    // Contest: agents at (0,0) and (0,2) both move into (0,1): both stay.
    let a = inst(r#"{"start": [0, 0], "goal": [1, 0]}, {"start": [0, 2], "goal": [1, 2]}"#);
    let (cells, ev) = run(&[a], &[4, 3]);
    assert_eq!(cells, vec![0, 2]);
    assert!(ev[0] & event::BLOCKED != 0 && ev[1] & event::BLOCKED != 0);
    // Swap: (0,0)->(0,1) and (0,1)->(0,0): both stay.
    let b = inst(r#"{"start": [0, 0], "goal": [1, 0]}, {"start": [0, 1], "goal": [1, 2]}"#);
    assert_eq!(run(std::slice::from_ref(&b), &[4, 3]).0, vec![0, 1]);
    // Following: (0,0)->(0,1) while (0,1)->(0,2): both move.
    assert_eq!(run(std::slice::from_ref(&b), &[4, 4]).0, vec![1, 2]);
    // Chain: the leader waits, so both stay.
    let (cells, ev) = run(&[b], &[4, 0]);
    assert_eq!(cells, vec![0, 1]);
    assert!(ev[0] & event::BLOCKED != 0 && ev[1] & event::BLOCKED == 0);
    // Rotation of four agents around a 2x2 square: all move.
    let c = inst(
        r#"{"start": [0, 0], "goal": [0, 4]}, {"start": [0, 1], "goal": [0, 3]}, {"start": [1, 1], "goal": [1, 3]}, {"start": [1, 0], "goal": [1, 2]}"#,
    );
    assert_eq!(run(&[c], &[4, 2, 3, 1]).0, vec![1, 6, 5, 0]);
    // Off the grid is a wait; a hole drops the agent and frees its cell for a follower.
    let d = inst(r#"{"start": [0, 4], "goal": [0, 0]}, {"start": [0, 3], "goal": [1, 0]}"#);
    let (cells, ev) = run(&[d], &[2, 4]);
    assert_eq!(cells[1], 4, "follows into the freed cell");
    assert!(ev[0] & event::HOLE != 0 && ev[0] & event::INACTIVE != 0);
    let e = inst(r#"{"start": [0, 4], "goal": [0, 0]}, {"start": [0, 3], "goal": [1, 0]}"#);
    let (cells, ev) = run(&[e], &[1, 0]);
    assert_eq!(cells[0], 4);
    assert!(ev[0] & event::OFF_GRID != 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, rng_seed: proptest::test_runner::RngSeed::Fixed(20261130), ..ProptestConfig::default() })]

    #[test]
    fn soft_stepping_keeps_agents_apart_on_frozen_cells(seed in any::<u64>()) {
        let insts = instances();
        let (mut env, mut out) = engine(CollisionMode::Soft, 32, &insts, seed);
        let k = env.pool().max_agents();
        for _ in 0..60 {
            env.step_random(out.view()).expect("steps");
            for e in 0..32 {
                let state = state(&env);
                let st = state.envs[e];
                let (w, h) = (st.width, st.height);
                let p = st.instance as usize;
                let cells: Vec<u32> = state.agents[e * k..(e + 1) * k]
                    .iter()
                    .filter(|a| a.active == 1)
                    .map(|a| a.row * w + a.col)
                    .collect();
                let mut sorted = cells.clone();
                sorted.sort_unstable();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), cells.len(), "two agents share a cell");
                for &c in &cells {
                    prop_assert!(c < w * h && !env.pool().is_hole(p, c));
                }
            }
        }
    }
}

#[test]
fn results_depend_only_on_seed_and_env() {
    let insts = instances();
    let run = |num_envs: usize, threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        pool.install(|| {
            let (mut env, mut out) = engine(CollisionMode::Soft, num_envs, &insts, 99);
            let mut trace = Vec::new();
            for _ in 0..50 {
                env.step_random(out.view()).expect("steps");
                trace.push((
                    out.rewards[..40].to_vec(),
                    out.events[..40].to_vec(),
                    out.obs[..40 * 76].to_vec(),
                ));
            }
            (trace, state(&env).agents[..40].to_vec())
        })
    };
    let small = run(10, 1);
    assert_eq!(small, run(200, 2));
    assert_eq!(small, run(10, 3));
}

/// The soft rule, written naively from its definition: movers sharing a target stay, swapping
/// movers stay, then movers into the cell of a staying agent stay, until nothing changes.
fn reference_soft_step(
    w: u32,
    h: u32,
    hole: &dyn Fn(u32) -> bool,
    block_holes: bool,
    cells: &[Option<u32>],
    actions: &[u8],
) -> Vec<Option<u32>> {
    let k = cells.len();
    let mut target: Vec<Option<u32>> = vec![None; k];
    let mut dropped = vec![false; k];
    for a in 0..k {
        let Some(c) = cells[a] else { continue };
        let (r, col) = ((c / w) as i64, (c % w) as i64);
        let (dr, dc) = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)][actions[a] as usize];
        let (nr, nc) = (r + dr, col + dc);
        let t = if nr < 0 || nc < 0 || nr >= h as i64 || nc >= w as i64 {
            c
        } else {
            (nr * w as i64 + nc) as u32
        };
        if hole(t) && t != c {
            if block_holes {
                target[a] = Some(c);
            } else {
                dropped[a] = true;
            }
        } else {
            target[a] = Some(t);
        }
    }
    let moving = |a: usize| !dropped[a] && cells[a].is_some() && target[a] != cells[a];
    let mut stay: Vec<bool> = (0..k).map(|a| !moving(a)).collect();
    for a in (0..k).filter(|&a| moving(a)) {
        let contest = (0..k).any(|b| b != a && moving(b) && target[b] == target[a]);
        let swap = (0..k).any(|b| b != a && moving(b) && target[b] == cells[a] && cells[b] == target[a]);
        if contest || swap {
            stay[a] = true;
        }
    }
    loop {
        let mut changed = false;
        for a in 0..k {
            if !moving(a) || stay[a] {
                continue;
            }
            if (0..k).any(|b| b != a && !dropped[b] && cells[b].is_some() && stay[b] && cells[b] == target[a])
            {
                stay[a] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (0..k)
        .map(|a| {
            if dropped[a] || cells[a].is_none() {
                None
            } else if stay[a] {
                cells[a]
            } else {
                target[a]
            }
        })
        .collect()
}

#[test]
fn soft_steps_match_the_reference_rule_in_crowds() {
    use floe_core::engine::HoleRule;
    // Crowds (12 agents on 6x6) and a sparse map (5 agents on 12x12): the step clears its cell
    // words whole in the first, per agent in the second.
    for (holes, size, agents, min_blocked) in [
        (HoleRule::Drop, 6, 12, 500),
        (HoleRule::Block, 6, 12, 500),
        (HoleRule::Drop, 12, 5, 20),
        (HoleRule::Block, 12, 5, 20),
    ] {
        let insts = floe_core::generator::random_instances(
            &GeneratorConfig::default().size(size).agents(agents).hole_ratio(0.15).count(8).seed(3),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let cfg = EnvConfig {
            num_envs: 16,
            mode: CollisionMode::Soft,
            holes,
            episode_limit: 1000,
            obs_radius: 1,
            ..EnvConfig::default()
        };
        let mut env = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
        let mut out = StepBuffers::new(&env.sizes());
        env.reset(5, out.view()).expect("reset");
        let k = pool.max_agents();
        let mut rng = Rng::from_counters(&[77]);
        let mut blocked = 0;
        for _ in 0..300 {
            let before = state(&env);
            let actions: Vec<u8> = (0..16 * k).map(|_| rng.below(5) as u8).collect();
            env.step(&actions, out.view()).expect("steps");
            for e in 0..16 {
                if out.terminated[e] == 1 || out.truncated[e] == 1 {
                    continue;
                }
                let st = before.envs[e];
                let (w, h, p) = (st.width, st.height, st.instance as usize);
                let decode = |x: &AgentRecord| (x.active == 1).then(|| x.row * w + x.col);
                let cells: Vec<Option<u32>> = before.agents[e * k..(e + 1) * k].iter().map(decode).collect();
                let want = reference_soft_step(
                    w,
                    h,
                    &|c| pool.is_hole(p, c),
                    holes == HoleRule::Block,
                    &cells,
                    &actions[e * k..(e + 1) * k],
                );
                let got: Vec<Option<u32>> =
                    state(&env).agents[e * k..(e + 1) * k].iter().map(decode).collect();
                assert_eq!(got, want, "env {e}");
                blocked +=
                    out.events[e * k..(e + 1) * k].iter().filter(|&&ev| ev & event::BLOCKED != 0).count();
            }
        }
        assert!(blocked > min_blocked, "{agents} agents on {size}x{size} should block often: {blocked}");
    }
}

#[test]
fn observations_match_a_naive_window() {
    // A crowded map (9 agents on 7x7) and a sparse one (3 on 14x14): the observation clears its
    // map of agents whole in the first, per agent in the second.
    for (size, n, radius) in [
        (7, 9, 1u32),
        (7, 9, 2),
        (7, 9, 4),
        (14, 3, 1),
        (14, 3, 2),
        (14, 3, 4),
        (9, 6, 6),
        (14, 3, 7),
        (12, 5, 9),
    ] {
        let insts = floe_core::generator::random_instances(
            &GeneratorConfig::default().size(size).agents(n).hole_ratio(0.2).count(6).seed(8),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let cfg =
            EnvConfig { num_envs: 8, mode: CollisionMode::Soft, obs_radius: radius, ..EnvConfig::default() };
        let mut env = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
        let mut out = StepBuffers::new(&env.sizes());
        env.reset(3, out.view()).expect("reset");
        let (k, stride) = (pool.max_agents(), floe_core::engine::obs_stride(radius));
        let win = (2 * radius + 1) as i64;
        for _ in 0..30 {
            env.step_random(out.view()).expect("steps");
            let state = state(&env);
            for e in 0..8 {
                let st = state.envs[e];
                let (w, h, p) = (i64::from(st.width), i64::from(st.height), st.instance as usize);
                let pos = |x: &AgentRecord| (i64::from(x.row), i64::from(x.col));
                let agents = &state.agents[e * k..(e + 1) * k];
                for a in 0..k {
                    let o = &out.obs[(e * k + a) * stride..(e * k + a + 1) * stride];
                    if agents[a].active == 0 {
                        assert!(o.iter().all(|&b| b == 0));
                        continue;
                    }
                    let (r0, c0) = pos(&agents[a]);
                    let (gr, gc) = pool.goal(p, a);
                    // The goal shows in the window, or on its border in its direction.
                    let rr = i64::from(radius);
                    let goal =
                        ((i64::from(gr) - r0).clamp(-rr, rr) + rr, (i64::from(gc) - c0).clamp(-rr, rr) + rr);
                    for dy in 0..win {
                        for dx in 0..win {
                            let (r, c) = (r0 + dy - i64::from(radius), c0 + dx - i64::from(radius));
                            let i = (dy * win + dx) as usize;
                            let plane = (win * win) as usize;
                            let inside = r >= 0 && c >= 0 && r < h && c < w;
                            let hole = !inside || pool.is_hole(p, (r * w + c) as u32);
                            let other = inside
                                && (0..k)
                                    .any(|b| b != a && agents[b].active == 1 && pos(&agents[b]) == (r, c));
                            assert_eq!(o[i], u8::from(hole), "hole channel, env {e} agent {a}");
                            assert_eq!(o[plane + i], u8::from(other), "agent channel, env {e} agent {a}");
                            assert_eq!(o[2 * plane + i], u8::from(goal == (dy, dx)), "goal channel");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn bits_unpack_to_the_bytes_and_none_steps_the_same() {
    use floe_core::engine::{unpack_bits, ObsFormat};
    // Radius 0 to 7 take the fixed-width paths (row masks on maps of padded width up to 64, bit
    // maps on wider ones), 9 the general one, 30 (61-cell rows) reads each row in two pieces.
    for (size, n, radius, mode) in [
        (7, 9, 0u32, CollisionMode::Soft),
        (7, 9, 1, CollisionMode::Strict),
        (7, 9, 2, CollisionMode::Soft),
        (14, 3, 3, CollisionMode::Strict),
        (7, 9, 4, CollisionMode::Soft),
        (14, 6, 5, CollisionMode::Soft),
        (14, 6, 5, CollisionMode::Strict),
        (9, 5, 6, CollisionMode::Soft),
        (12, 8, 7, CollisionMode::Strict),
        (70, 10, 7, CollisionMode::Soft),
        (14, 3, 9, CollisionMode::Strict),
        (40, 12, 30, CollisionMode::Soft),
        // Padded widths over 64: bit windows read from bit maps instead of row masks.
        (70, 12, 2, CollisionMode::Soft),
        (60, 8, 5, CollisionMode::Strict),
    ] {
        let insts = floe_core::generator::random_instances(
            &GeneratorConfig::default().size(size).agents(n).hole_ratio(0.2).count(6).seed(8),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let engine = |obs_format| {
            let cfg = EnvConfig {
                num_envs: 70,
                mode,
                episode_limit: 9,
                obs_radius: radius,
                obs_format,
                ..EnvConfig::default()
            };
            let env = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
            let out = StepBuffers::new(&env.sizes());
            (env, out)
        };
        let (mut by, mut yb) = engine(ObsFormat::Bytes);
        let (mut bi, mut ib) = engine(ObsFormat::Bits);
        let (mut no, mut on) = engine(ObsFormat::None);
        let what = format!("{size}x{size}, {n} agents, radius {radius}, {mode:?}");
        assert_eq!(
            ib.obs.len() * obs_stride(radius),
            yb.obs.len() * ObsFormat::Bits.stride(radius),
            "{what}"
        );
        assert!(on.obs.is_empty() && on.final_obs.is_empty(), "{what}");
        let bytes_len = yb.obs.len();
        let unpacked = |bits: &[u8]| {
            let mut out = vec![0xAAu8; bytes_len];
            unpack_bits(radius, bits, &mut out).expect("whole observations");
            out
        };
        by.reset(4, yb.view()).expect("reset");
        bi.reset(4, ib.view()).expect("reset");
        no.reset(4, on.view()).expect("reset");
        assert_eq!(unpacked(&ib.obs), yb.obs, "{what}: first observation");
        let mut ended = 0;
        for t in 0..24 {
            by.step_random(yb.view()).expect("step");
            bi.step_random(ib.view()).expect("step");
            no.step_random(on.view()).expect("step");
            assert_eq!(unpacked(&ib.obs), yb.obs, "{what}, step {t}: obs");
            assert_eq!(unpacked(&ib.final_obs), yb.final_obs, "{what}, step {t}: final obs");
            for other in [&ib, &on] {
                assert_eq!(other.events, yb.events, "{what}, step {t}: events");
                assert_eq!(other.info, yb.info, "{what}, step {t}: info");
                assert_eq!(other.terminated, yb.terminated, "{what}, step {t}: terminated");
            }
            ended += yb.terminated.iter().chain(&yb.truncated).filter(|&&x| x == 1).count();
            if t == 10 {
                by.reset_to(3, 2, yb.view()).expect("reset_to");
                bi.reset_to(3, 2, ib.view()).expect("reset_to");
                no.reset_to(3, 2, on.view()).expect("reset_to");
                assert_eq!(unpacked(&ib.obs), yb.obs, "{what}: after reset_to");
            }
        }
        assert!(ended > 0, "{what}: episodes should end so that final observations are compared");
        assert_eq!(state(&by), state(&bi), "{what}: state");
        assert_eq!(state(&by), state(&no), "{what}: state");
    }
}

#[test]
fn the_step_compiled_for_avx2_equals_the_baseline_one() {
    use floe_core::engine::{HoleRule, ObsFormat};
    // Where the CPU has AVX2 the engine runs its step compiled for it; the other engine here runs
    // the build's baseline code and, for `bits`, builds the holes planes row by row instead of
    // copying them from the table.
    for (size, n, radius, mode, holes, obs_format) in [
        (16, 40, 2, CollisionMode::Soft, HoleRule::Block, ObsFormat::Bytes),
        (16, 40, 5, CollisionMode::Soft, HoleRule::Drop, ObsFormat::Bits),
        (9, 12, 1, CollisionMode::Soft, HoleRule::Drop, ObsFormat::Bytes),
        (9, 12, 3, CollisionMode::Soft, HoleRule::Block, ObsFormat::Bits),
        (12, 8, 7, CollisionMode::Strict, HoleRule::Drop, ObsFormat::Bits),
        (70, 12, 4, CollisionMode::Soft, HoleRule::Block, ObsFormat::Bits),
        (10, 6, 2, CollisionMode::Strict, HoleRule::Drop, ObsFormat::None),
        (30, 5, 9, CollisionMode::Soft, HoleRule::Drop, ObsFormat::Bytes),
    ] {
        let insts = floe_core::generator::random_instances(
            &GeneratorConfig::default().size(size).agents(n).hole_ratio(0.2).count(6).seed(9),
        )
        .expect("draws");
        let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
        let cfg = EnvConfig {
            num_envs: 67,
            mode,
            holes,
            episode_limit: 12,
            obs_radius: radius,
            obs_format,
            ..EnvConfig::default()
        };
        let mut fast = CpuEngine::new(cfg.clone(), Arc::clone(&pool)).expect("engine");
        let mut base = CpuEngine::new(cfg, Arc::clone(&pool)).expect("engine");
        base.force_baseline();
        base.drop_hole_windows();
        assert_eq!(base.isa(), "baseline");
        let what = format!(
            "{size}x{size}, {n} agents, radius {radius}, {mode:?}, {holes:?}, {obs_format:?}, {}",
            fast.isa()
        );
        let (mut f, mut b) = (StepBuffers::new(&fast.sizes()), StepBuffers::new(&base.sizes()));
        fast.reset(11, f.view()).expect("reset");
        base.reset(11, b.view()).expect("reset");
        let mut rng = Rng::from_counters(&[5]);
        let (mut ended, mut blocked) = (0, 0);
        for t in 0..40 {
            if t % 2 == 0 {
                fast.step_random(f.view()).expect("step");
                base.step_random(b.view()).expect("step");
            } else {
                let actions: Vec<u8> = (0..67 * pool.max_agents()).map(|_| rng.below(5) as u8).collect();
                fast.step(&actions, f.view()).expect("step");
                base.step(&actions, b.view()).expect("step");
            }
            assert_eq!(f.obs, b.obs, "{what}, step {t}: obs");
            assert_eq!(f.final_obs, b.final_obs, "{what}, step {t}: final obs");
            assert_eq!(f.events, b.events, "{what}, step {t}: events");
            assert_eq!(f.rewards, b.rewards, "{what}, step {t}: rewards");
            assert_eq!(f.info, b.info, "{what}, step {t}: info");
            assert_eq!(f.terminated, b.terminated, "{what}, step {t}: terminated");
            assert_eq!(f.truncated, b.truncated, "{what}, step {t}: truncated");
            ended += f.terminated.iter().chain(&f.truncated).filter(|&&x| x == 1).count();
            blocked += f.events.iter().filter(|&&e| e & event::BLOCKED != 0).count();
        }
        assert_eq!(state(&fast), state(&base), "{what}: state");
        assert!(ended > 0, "{what}: episodes should end");
        assert!(mode == CollisionMode::Strict || blocked > 0, "{what}: soft steps should block");
    }
}

#[test]
fn unpacking_refuses_partial_observations() {
    use floe_core::engine::{unpack_bits, ObsFormat};
    let bs = ObsFormat::Bits.stride(5);
    assert_eq!(bs, 48);
    let mut out = vec![0u8; 2 * obs_stride(5)];
    let err = unpack_bits(5, &[0u8; 47], &mut out[..obs_stride(5)]).expect_err("a partial observation");
    assert!(err.contains("whole number"), "{err}");
    let err = unpack_bits(5, &[0u8; 96], &mut out[..obs_stride(5)]).expect_err("too short an output");
    assert!(err.contains("unpack to"), "{err}");
    // Every bit lands on its own byte: bit j of plane c is byte c·121 + j.
    let mut bits = vec![0u8; 2 * bs];
    bits[bs + 16 + 15] = 0x80; // second agent, plane 1, word 3, bit 31: cell 127 does not exist
    bits[bs + 16 + 14] = 0x01; // ... word 3, bit 16: cell 112
    bits[0] = 0b10; // first agent, plane 0, cell 1
    unpack_bits(5, &bits, &mut out).expect("unpacks");
    let ones: Vec<usize> = out.iter().enumerate().filter(|(_, &b)| b != 0).map(|(i, _)| i).collect();
    assert_eq!(ones, vec![1, obs_stride(5) + 121 + 112]);
}

#[test]
fn an_observation_radius_over_the_limit_is_an_error() {
    let insts = floe_core::generator::random_instances(
        &GeneratorConfig::default().size(5).agents(2).hole_ratio(0.2).count(2).seed(1),
    )
    .expect("draws");
    let pool = Arc::new(InstancePool::new(&insts, Optima::AsStored).expect("pool"));
    let cfg = |obs_radius| EnvConfig { num_envs: 2, obs_radius, ..EnvConfig::default() };
    let max = floe_core::engine::MAX_OBS_RADIUS;
    let err = CpuEngine::new(cfg(max + 1), Arc::clone(&pool)).expect_err("over the limit");
    assert!(err.to_string().contains("observation radius"), "{err}");
    let mut env = CpuEngine::new(cfg(max), Arc::clone(&pool)).expect("at the limit");
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(1, out.view()).expect("reset");
    env.step_random(out.view()).expect("step");
}

/// Agent 0 steps onto its goal, off it and back, five times; agent 1 waits far from its goal, so
/// the episode goes on. Returns agent 0's events and rewards per step, in `mode`.
fn goal_revisits(mode: CollisionMode) -> Vec<(u32, f32)> {
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFF", "FFFFH"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [1, 0], "goal": [1, 3]}]}"#,
    )
    .expect("valid");
    let (mut env, mut out) = engine(mode, 1, &[inst], 0);
    env.reset_to(0, 0, out.view()).expect("reset");
    let mut seen = Vec::new();
    for t in 0..10 {
        env.step(&[if t % 2 == 0 { 4 } else { 3 }, 0], out.view()).expect("steps");
        assert_eq!(out.terminated[0] + out.truncated[0], 0, "step {t}: the episode goes on");
        seen.push((out.events[0], out.rewards[0]));
    }
    // A new episode pays again.
    env.reset_to(0, 0, out.view()).expect("reset");
    env.step(&[4, 0], out.view()).expect("steps");
    seen.push((out.events[0], out.rewards[0]));
    seen
}

#[test]
fn a_goal_is_paid_once_per_agent_and_episode() {
    let w = EnvConfig::default().rewards;
    for mode in [CollisionMode::Strict, CollisionMode::Soft] {
        let seen = goal_revisits(mode);
        let reached: Vec<usize> =
            seen.iter().enumerate().filter(|(_, (ev, _))| ev & event::REACHED != 0).map(|(t, _)| t).collect();
        assert_eq!(reached, vec![0, 10], "{mode:?}: REACHED on the first arrival of each episode only");
        for t in (2..10).step_by(2) {
            assert_eq!(seen[t].0, event::MOVED | event::AT_GOAL, "{mode:?}: a return at step {t}");
        }
        let farmed: f32 = seen[..10].iter().map(|(_, r)| r).sum();
        assert!(farmed <= w.reach_goal, "{mode:?}: ten steps of leaving and returning earn {farmed}");
        assert_eq!(seen[10].1, w.reward(event::MOVED | event::REACHED | event::AT_GOAL));
    }
}

#[test]
fn leaving_the_grid_costs_at_least_as_much_as_a_hole_by_default() {
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFF", "FFFFH"], "agents": [{"start": [0, 4], "goal": [0, 3]}, {"start": [1, 0], "goal": [1, 1]}]}"#,
    )
    .expect("valid");
    for mode in [CollisionMode::Strict, CollisionMode::Soft] {
        let mut ends = Vec::new();
        // Agent 0 moves up, off the grid, or down, into the hole at (1, 4).
        for act in [1u8, 2] {
            let (mut env, mut out) = engine(mode, 1, std::slice::from_ref(&inst), 0);
            env.reset_to(0, 0, out.view()).expect("reset");
            env.step(&[act, 0], out.view()).expect("steps");
            ends.push((out.events[0], out.rewards[0]));
        }
        let [(off_ev, off), (hole_ev, hole)] = ends[..] else { unreachable!() };
        assert!(off_ev & event::OFF_GRID != 0 && hole_ev & event::HOLE != 0, "{mode:?}");
        assert!(off <= hole, "{mode:?}: leaving the grid earns {off}, a hole {hole}");
    }
}
