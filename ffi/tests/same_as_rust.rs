//! The C API gives byte-identical results to the Rust API for the same inputs and seed.

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::Arc;

use floe::*;
use floe_core::engine::{
    CollisionMode, CpuEngine, Engine, EnvConfig, EnvInfo, InstancePool, Optima, StepBuffers,
};
use floe_core::generator::{generate, GeneratorConfig};
use floe_core::rng::Rng;

fn ok(status: floe_status) {
    if status != 0 {
        // SAFETY: floe_last_error returns a NUL-terminated string owned by the library.
        let msg = unsafe { CStr::from_ptr(floe_last_error()) };
        panic!("status {status}: {}", msg.to_string_lossy());
    }
}

struct Buffers {
    b: StepBuffers,
}

impl Buffers {
    fn raw(&mut self) -> floe_step_buffers {
        let b = &mut self.b;
        floe_step_buffers {
            obs: b.obs.as_mut_ptr(),
            obs_len: b.obs.len(),
            final_obs: b.final_obs.as_mut_ptr(),
            final_obs_len: b.final_obs.len(),
            rewards: b.rewards.as_mut_ptr(),
            rewards_len: b.rewards.len(),
            events: b.events.as_mut_ptr(),
            events_len: b.events.len(),
            terminated: b.terminated.as_mut_ptr(),
            terminated_len: b.terminated.len(),
            truncated: b.truncated.as_mut_ptr(),
            truncated_len: b.truncated.len(),
            info: b.info.as_mut_ptr(),
            info_len: b.info.len(),
        }
    }
}

#[test]
fn stepping_through_the_c_api_matches_the_rust_api() {
    let setting = CString::new(r#"{"size": 6, "agents": 3, "hole_ratio": 0.2, "wait_ratio": 0.5}"#).unwrap();
    let mut pool: *mut floe_pool = ptr::null_mut();
    // SAFETY: valid string and out-pointer.
    ok(unsafe { floe_pool_generate(setting.as_ptr(), 12, 9, &mut pool) });
    let instances = generate(
        &GeneratorConfig::default().size(6).agents(3).hole_ratio(0.2).wait_ratio(0.5).count(12).seed(9),
    )
    .expect("generates");
    let rust_pool = Arc::new(InstancePool::new(&instances, Optima::AsStored).expect("pool"));

    for (mode, json) in [
        (CollisionMode::Strict, r#"{"num_envs": 33, "episode_limit": 16}"#),
        (CollisionMode::Soft, r#"{"num_envs": 33, "episode_limit": 16, "mode": "soft", "obs_radius": 3}"#),
    ] {
        let cfg = CString::new(json).unwrap();
        let mut engine: *mut floe_engine = ptr::null_mut();
        // SAFETY: live pool, valid string and out-pointer.
        ok(unsafe { floe_engine_new(pool, cfg.as_ptr(), &mut engine) });
        let mut sizes = floe_core::engine::BufferSizes::default();
        // SAFETY: live engine, valid out-pointer.
        ok(unsafe { floe_engine_sizes(engine, &mut sizes) });

        let rust_cfg = EnvConfig {
            num_envs: 33,
            episode_limit: 16,
            mode,
            obs_radius: if mode == CollisionMode::Soft { 3 } else { 2 },
            ..EnvConfig::default()
        };
        let mut rust = CpuEngine::new(rust_cfg, Arc::clone(&rust_pool)).expect("engine");
        assert_eq!(sizes.obs, rust.sizes().obs);
        let mut ours = StepBuffers::new(&rust.sizes());
        let mut theirs = Buffers { b: StepBuffers::new(&rust.sizes()) };
        rust.reset(5, ours.view()).expect("reset");
        let raw = theirs.raw();
        // SAFETY: buffers sized from floe_engine_sizes, alive for the call.
        ok(unsafe { floe_engine_reset(engine, 5, &raw) });
        assert_eq!(ours, theirs.b, "{json}: reset");
        let mut rng = Rng::from_counters(&[1]);
        for t in 0..60 {
            let actions: Vec<u8> = (0..sizes.actions).map(|_| rng.below(5) as u8).collect();
            rust.step(&actions, ours.view()).expect("step");
            let raw = theirs.raw();
            // SAFETY: as above.
            ok(unsafe { floe_engine_step(engine, actions.as_ptr(), actions.len(), &raw) });
            assert_eq!(ours, theirs.b, "{json}: step {t}");
        }
        let mut envs = vec![Default::default(); sizes.envs];
        let mut agents = vec![Default::default(); sizes.agents];
        // SAFETY: arrays of the sizes given.
        ok(unsafe {
            floe_engine_state(engine, envs.as_mut_ptr(), envs.len(), agents.as_mut_ptr(), agents.len())
        });
        let state = rust.state().expect("state");
        assert_eq!((envs, agents), (state.envs, state.agents));
        // SAFETY: live engine, freed once.
        ok(unsafe { floe_engine_free(engine) });
    }
    // SAFETY: live pool, freed once.
    ok(unsafe { floe_pool_free(pool) });
}

#[test]
fn misuse_is_a_status_and_a_message_never_a_crash() {
    let mut pool: *mut floe_pool = ptr::null_mut();
    let text =
        CString::new(r#"{"grid": ["FF", "FF"], "agents": [{"start": [0, 0], "goal": [1, 1]}]}"#).unwrap();
    // SAFETY: valid arguments.
    ok(unsafe { floe_pool_from_json(text.as_ptr(), 1, &mut pool) });
    let mut engine: *mut floe_engine = ptr::null_mut();
    // SAFETY: NULL configuration is the defaults.
    ok(unsafe { floe_engine_new(pool, ptr::null(), &mut engine) });
    let mut n = 0usize;
    // An engine where a pool is expected, NULL, a freed handle.
    // SAFETY: the library checks handle kinds before reading.
    assert_eq!(unsafe { floe_pool_count(engine.cast(), &mut n) }, 10);
    // SAFETY: as above.
    assert_eq!(unsafe { floe_pool_count(ptr::null(), &mut n) }, 8);
    let msg = || {
        // SAFETY: library-owned string.
        unsafe { CStr::from_ptr(floe_last_error()) }.to_string_lossy().into_owned()
    };
    assert!(msg().contains("pool"), "{}", msg());
    // Stepping before reset, with buffers that overlap.
    let mut sizes = floe_core::engine::BufferSizes::default();
    // SAFETY: valid arguments.
    ok(unsafe { floe_engine_sizes(engine, &mut sizes) });
    let mut b = Buffers {
        b: StepBuffers::new(&floe_core::engine::BufferSizes::new(
            &EnvConfig::default(),
            &InstancePool::new(
                &[floe_core::Instance::from_json(text.to_str().unwrap()).unwrap()],
                Optima::AsStored,
            )
            .unwrap(),
        )),
    };
    let acts = vec![0u8; sizes.actions];
    let raw = b.raw();
    // SAFETY: valid buffers.
    assert_eq!(unsafe { floe_engine_step(engine, acts.as_ptr(), acts.len(), &raw) }, 14);
    let mut overlapping = raw;
    overlapping.final_obs = overlapping.obs;
    // SAFETY: the library refuses overlapping buffers before writing.
    assert_eq!(unsafe { floe_engine_reset(engine, 0, &overlapping) }, 4);
    assert!(msg().contains("overlap"), "{}", msg());
    // Bad UTF-8 and bad JSON.
    let bad = [0xffu8, 0xfe, 0];
    // SAFETY: NUL-terminated bytes.
    assert_eq!(unsafe { floe_engine_new(pool, bad.as_ptr().cast::<c_char>(), &mut engine) }, 11);
    let bad_json = CString::new(r#"{"num_envs": 0}"#).unwrap();
    let mut other: *mut floe_engine = ptr::null_mut();
    // SAFETY: valid string.
    assert_eq!(unsafe { floe_engine_new(pool, bad_json.as_ptr(), &mut other) }, 6);
    assert!(other.is_null(), "nothing is written on failure");
    // SAFETY: live handles freed once, then a second free of a freed handle is refused.
    unsafe {
        ok(floe_engine_free(engine));
        assert_eq!(floe_engine_free(engine), 10);
        ok(floe_pool_free(pool));
        ok(floe_pool_free(ptr::null_mut()));
    }
    let _ = EnvInfo::default();
}
