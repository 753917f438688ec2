//! Level sampling in the engine and goals seen beyond the window, on the CPU (the GPU golden
//! tests in `engine_gpu.rs` hold the GPU to the same bytes): the goal on the window's border,
//! weighted draws (equal weights draw exactly what no weights draw), slot refills with their
//! truncations and generations, the episode records a level scorer reads, and the refusals of
//! bad input that leave the engine as it was.

use std::sync::Arc;

use floe_core::engine::{
    outcome, unpack_bits, CollisionMode, CpuEngine, Engine, EnvConfig, InstancePool, ObsFormat, Optima, Room,
    StepBuffers,
};
use floe_core::generator::{random_instances, GeneratorConfig};
use floe_core::rng::Rng;
use floe_core::Instance;

/// One agent on a 3 × 16 map at (1, 1), its goal 12 cells to its right at (1, 13).
fn far_goal() -> Instance {
    Instance::from_json(
        r#"{"grid": ["FFFFFFFFFFFFFFFF", "FFFFFFFFFFFFFFFF", "FFFFFFFFFFFFFFFF"],
            "agents": [{"start": [1, 1], "goal": [1, 13]}]}"#,
    )
    .expect("valid")
}

/// The goal plane of agent 0 of environment 0, as bytes, whatever the format.
fn goal_plane(out: &StepBuffers, format: ObsFormat, radius: u32) -> Vec<u8> {
    let w = (2 * radius + 1) as usize;
    let bytes = match format {
        ObsFormat::Bits => {
            let mut b = vec![0; floe_core::engine::obs_stride(radius)];
            unpack_bits(radius, &out.obs, &mut b).expect("unpacks");
            b
        }
        _ => out.obs.clone(),
    };
    bytes[2 * w * w..3 * w * w].to_vec()
}

#[test]
fn a_goal_beyond_the_window_shows_on_its_border() {
    for format in [ObsFormat::Bytes, ObsFormat::Bits] {
        for radius in [2u32, 4] {
            let pool = Arc::new(InstancePool::new(&[far_goal()], Optima::AsStored).expect("pool"));
            let cfg = EnvConfig {
                num_envs: 1,
                obs_radius: radius,
                obs_format: format,
                episode_limit: 40,
                ..EnvConfig::default()
            };
            let mut env = CpuEngine::new(cfg, pool).expect("engine");
            let mut out = StepBuffers::new(&env.sizes());
            env.reset(0, out.view()).expect("reset");
            let (r, w) = (radius as usize, 2 * radius as usize + 1);
            // The agent walks right: the goal is 12, 11, ... cells away.
            for away in (1..=12usize).rev() {
                let plane = goal_plane(&out, format, radius);
                let col = away.min(r) + r;
                let mut want = vec![0u8; w * w];
                want[r * w + col] = 1;
                assert_eq!(plane, want, "{format:?} r{radius}: the goal {away} cells to the right");
                env.step(&[4], out.view()).expect("steps");
            }
            assert_eq!(out.info[0].outcome, outcome::SUCCESS, "{format:?} r{radius}: it arrives");
        }
    }
    // A goal up and to the left, far in both directions, shows in the window's corner.
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFFFFFFF", "FFFFFFFFFF", "FFFFFFFFFF", "FFFFFFFFFF", "FFFFFFFFFF",
                     "FFFFFFFFFF", "FFFFFFFFFF", "FFFFFFFFFF"],
            "agents": [{"start": [7, 9], "goal": [0, 0]}, {"start": [7, 0], "goal": [6, 0]}]}"#,
    )
    .expect("valid");
    let pool = Arc::new(InstancePool::new(&[inst], Optima::AsStored).expect("pool"));
    let cfg = EnvConfig { num_envs: 1, obs_radius: 1, ..EnvConfig::default() };
    let mut env = CpuEngine::new(cfg, pool).expect("engine");
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(0, out.view()).expect("reset");
    let stride = env.sizes().obs_stride;
    assert_eq!(&out.obs[18..27], &[1, 0, 0, 0, 0, 0, 0, 0, 0], "agent 0's goal: the top-left corner");
    // Agent 1's goal, one row up: inside the window.
    assert_eq!(&out.obs[stride + 18..stride + 27], &[0, 1, 0, 0, 0, 0, 0, 0, 0], "agent 1's goal");
}

fn pool_of(n: usize, room: Room) -> Arc<InstancePool> {
    let levels =
        random_instances(&GeneratorConfig::default().size(6).agents(3).hole_ratio(0.1).count(n).seed(4))
            .expect("draws");
    Arc::new(InstancePool::with_room(&levels, Optima::AsStored, room).expect("pool"))
}

fn soft(num_envs: usize) -> EnvConfig {
    EnvConfig { num_envs, mode: CollisionMode::Soft, episode_limit: 6, ..EnvConfig::default() }
}

/// Random actions for `n` agent slots.
fn actions(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.below(5) as u8).collect()
}

#[test]
fn equal_weights_step_exactly_as_no_weights() {
    let pool = pool_of(13, Room::default());
    let mut plain = CpuEngine::new(soft(40), Arc::clone(&pool)).expect("engine");
    let mut equal = CpuEngine::new(soft(40), Arc::clone(&pool)).expect("engine");
    equal.set_weights(Some(&[0.25; 13])).expect("weights");
    let (mut a, mut b) = (StepBuffers::new(&plain.sizes()), StepBuffers::new(&equal.sizes()));
    plain.reset(5, a.view()).expect("reset");
    equal.reset(5, b.view()).expect("reset");
    let mut rng = Rng::from_counters(&[1]);
    for _ in 0..30 {
        let acts = actions(&mut rng, a.rewards.len());
        plain.step(&acts, a.view()).expect("step");
        equal.step(&acts, b.view()).expect("step");
        assert_eq!(a, b);
    }
    assert_eq!(equal.weights(), Some(&[0.25; 13][..]));
    equal.set_weights(None).expect("no weights");
    assert_eq!(equal.weights(), None);
}

#[test]
fn weights_steer_every_draw_and_a_zero_weight_slot_is_never_played() {
    let pool = pool_of(8, Room::default());
    let mut env = CpuEngine::new(soft(64), Arc::clone(&pool)).expect("engine");
    let weights = [0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0];
    env.set_weights(Some(&weights)).expect("weights");
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(2, out.view()).expect("reset");
    let mut played = [0u32; 8];
    let mut rng = Rng::from_counters(&[2]);
    for _ in 0..60 {
        for e in env.state().expect("state").envs {
            played[e.instance as usize] += u32::from(e.step == 0);
        }
        env.step(&actions(&mut rng, out.rewards.len()), out.view()).expect("step");
    }
    let started = played.iter().sum::<u32>();
    assert_eq!(started, played[1] + played[4], "only slots 1 and 4 are played: {played:?}");
    let share = f64::from(played[4]) / f64::from(started);
    assert!((share - 0.75).abs() < 0.06, "slot 4 has 3/4 of the weight and {share} of the episodes");
}

#[test]
fn an_episode_record_carries_what_a_level_scorer_reads() {
    let pool = pool_of(6, Room::default());
    let mut env = CpuEngine::new(soft(16), Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(9, out.view()).expect("reset");
    let k = pool.max_agents();
    let mut running = [0f32; 16];
    let mut rng = Rng::from_counters(&[3]);
    let mut ended = 0;
    for _ in 0..40 {
        let before = env.state().expect("state").envs;
        env.step(&actions(&mut rng, out.rewards.len()), out.view()).expect("step");
        for e in 0..16 {
            running[e] = out.rewards[e * k..(e + 1) * k].iter().fold(running[e], |s, &r| s + r);
            let info = out.info[e];
            assert_eq!(info.instance, before[e].instance, "the slot the episode played");
            assert_eq!(info.generation, 0);
            assert_eq!(
                info.episode_return.to_bits(),
                running[e].to_bits(),
                "the return, summed as the engine sums it"
            );
            assert_eq!(info.episode_steps, before[e].step + 1);
            if out.terminated[e] + out.truncated[e] > 0 {
                ended += 1;
                running[e] = 0.0;
                if info.outcome == outcome::SUCCESS {
                    assert_eq!(info.agents_on_goal, pool.dims(info.instance as usize).2);
                }
            }
        }
    }
    assert!(ended > 40, "{ended} episodes ended");
}

#[test]
fn a_refill_replaces_slots_truncates_their_episodes_and_counts_generations() {
    let pool = pool_of(4, Room { agents: 5, side: 9 });
    let mut env = CpuEngine::new(soft(24), Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&env.sizes());
    env.reset(1, out.view()).expect("reset");
    let mut rng = Rng::from_counters(&[4]);
    for _ in 0..3 {
        env.step(&actions(&mut rng, out.rewards.len()), out.view()).expect("step");
    }
    let new =
        random_instances(&GeneratorConfig::default().size(9).agents(5).hole_ratio(0.2).count(2).seed(7))
            .expect("draws");
    let before = env.state().expect("state").envs;
    let last = out.clone();
    let done = env.refill(&[2, 0], &new, out.view()).expect("refill");
    let after = env.state().expect("state").envs;
    let k = pool.max_agents();
    let per_env = k * env.sizes().obs_stride;
    let (mut truncated, mut restarted) = (0, 0);
    for e in 0..24 {
        let (b, a) = (before[e], after[e]);
        if b.instance != 0 && b.instance != 2 {
            assert_eq!(
                (a, out.truncated[e], &out.obs[e * per_env..(e + 1) * per_env]),
                (b, last.truncated[e], &last.obs[e * per_env..(e + 1) * per_env]),
                "env {e} is left alone"
            );
            continue;
        }
        if b.step == 0 {
            restarted += 1;
            assert_eq!(
                (a.instance, a.episode, a.step, a.width),
                (b.instance, b.episode, 0, 9),
                "env {e}: the new level"
            );
        } else {
            truncated += 1;
            assert_eq!((out.truncated[e], out.terminated[e]), (1, 0), "env {e}");
            assert_eq!(out.info[e].outcome, outcome::TRUNCATED);
            assert_eq!(out.info[e].generation, 0, "the ended episode played the old level");
            assert_eq!(
                &out.final_obs[e * per_env..(e + 1) * per_env],
                &last.obs[e * per_env..(e + 1) * per_env]
            );
            assert_eq!((a.episode, a.step), (b.episode + 1, 0), "env {e} starts its next episode");
        }
    }
    assert_eq!((done.truncated, done.restarted), (truncated, restarted));
    assert!(truncated > 0 && restarted + truncated >= 6, "{done:?}");
    let now = env.pool();
    assert_eq!((now.generation(0), now.generation(1), now.generation(2)), (1, 0, 1));
    assert_eq!(now.dims(2), (9, 9, 5));
    assert_eq!(pool.dims(2), (6, 6, 3), "the pool the engine was made with is left as it was");
    // Episodes on the refilled slots record their new generation; the observations are those
    // of a new engine on the refilled pool.
    let mut seen = false;
    for _ in 0..20 {
        env.step(&actions(&mut rng, out.rewards.len()), out.view()).expect("step");
        for e in 0..24 {
            if out.terminated[e] + out.truncated[e] > 0 && out.info[e].instance == 2 {
                assert_eq!(out.info[e].generation, 1);
                seen = true;
            }
        }
    }
    assert!(seen, "an episode on slot 2 ended");
    let mut fresh = CpuEngine::new(soft(24), Arc::clone(env.pool())).expect("engine");
    let mut again = StepBuffers::new(&fresh.sizes());
    fresh.reset(3, again.view()).expect("reset");
    env.reset(3, out.view()).expect("reset");
    assert_eq!(out.obs, again.obs, "a refilled engine observes as one made on its pool");
}

#[test]
fn bad_weights_and_refills_are_refused_and_change_nothing() {
    let pool = pool_of(4, Room { agents: 3, side: 6 });
    let mut env = CpuEngine::new(soft(8), Arc::clone(&pool)).expect("engine");
    let mut out = StepBuffers::new(&env.sizes());
    let too_big =
        random_instances(&GeneratorConfig::default().size(7).agents(2).count(1).seed(1)).expect("draws");
    let fits =
        random_instances(&GeneratorConfig::default().size(5).agents(2).count(2).seed(1)).expect("draws");
    let e = env.refill(&[0], &fits[..1], out.view()).unwrap_err();
    assert!(e.to_string().contains("not been reset"), "{e}");
    env.set_weights(Some(&[1.0, 2.0, 0.0, 1.0])).expect("weights");
    env.reset(0, out.view()).expect("reset");
    let state = env.state().expect("state");
    for (bad, says) in [
        (vec![1.0, 2.0], "2 weights for a pool of 4 slots"),
        (vec![1.0, -1.0, 0.0, 0.0], "weight 1 is -1"),
        (vec![1.0, f64::NAN, 0.0, 0.0], "weight 1 is NaN"),
        (vec![f64::INFINITY, 1.0, 0.0, 0.0], "weight 0 is inf"),
        (vec![0.0; 4], "all 4 weights are zero"),
    ] {
        let e = env.set_weights(Some(&bad)).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
        assert_eq!(env.weights(), Some(&[1.0, 2.0, 0.0, 1.0][..]), "the weights are kept");
    }
    for (slots, levels, says) in [
        (vec![4], &fits[..1], "slot 4 is out of range"),
        (vec![1, 1], &fits[..2], "slot 1 is named twice"),
        (vec![1, 2], &fits[..1], "2 slots but 1 levels"),
        (vec![3], &too_big[..], "does not fit the pool's room"),
    ] {
        let e = env.refill(&slots, levels, out.view()).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
    // Buffers that are not the last step's outputs: refused before anything changes.
    env.step(&vec![0; out.rewards.len()], out.view()).expect("step");
    let state_after_step = env.state().expect("state");
    let mut stale = out.clone();
    for info in &mut stale.info {
        info.episode_steps += 7;
    }
    let slot = state_after_step.envs[0].instance as usize;
    let e = env.refill(&[slot], &fits[..1], stale.view()).unwrap_err().to_string();
    assert!(e.contains("pass the outputs of the last step"), "{e}");
    assert_eq!(env.state().expect("state"), state_after_step);
    assert_eq!(env.pool().generation(slot), 0);
    assert_ne!(state, state_after_step);
}
