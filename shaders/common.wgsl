// Shared by every floe kernel. The host prepends `const WG: u32 = <workgroup size>u;`,
// `const MAX_K: u32 = <agent slots>u;`, `const MAX_OBS_WORDS: u32 = <words>u;` and the codes
// rendered from the Rust constants (`wgsl::prelude` in core/src/engine/shaders.rs): AGENT_ACTIVE,
// AGENT_ARRIVED, POS_MASK, NONE, STATUS_WORDS, ALIAS_ONE, EV_* (events), OUT_* (outcomes),
// KIND_* (failure kinds). Mirrors core/src/engine/hash.rs and core/src/engine/levels.rs bit for
// bit.

struct Params {
    num_envs: u32,
    k_max: u32,
    words: u32,
    pool_len: u32,
    off_starts: u32,
    off_goals: u32,
    off_holes: u32,
    stride_words: u32,
    mode: u32,          // 0 strict, 1 soft
    hole_block: u32,    // soft: 1 if holes block like walls
    episode_limit: u32,
    radius: u32,
    seed_lo: u32,
    seed_hi: u32,
    random_actions: u32,
    num_plans: u32,
    w_reach: f32,
    w_step: f32,
    w_blocked: f32,
    w_off: f32,
    w_hole: f32,
    w_conflict: f32,
    plan_len: u32,
    off_moves: u32,
    plan_k: u32,
    off_opt: u32,
    obs_bits: u32,      // 1: observations as bits (plane_words words a plane); 0: bytes
    plane_words: u32,
    weighted: u32,      // 1: level draws follow the alias table at off_alias in the pool
    off_alias: u32,
    skip_final: u32,    // 1: the observation kernel writes no final observations
    pad1: u32,
}

fn mix32(x0: u32) -> u32 {
    var x = x0;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

fn hash4(a: u32, b: u32, c: u32, d: u32) -> u32 {
    var h = mix32(a ^ 0x9e3779b9u);
    h = mix32(h ^ b);
    h = mix32(h ^ c);
    return mix32(h ^ d);
}

// (seed_lo, seed_hi) + env as a 64-bit sum.
fn env_seed(lo: u32, hi: u32, env: u32) -> vec2<u32> {
    let s = lo + env;
    return vec2<u32>(s, hi + select(0u, 1u, s < lo));
}

fn pool_pick(seed: vec2<u32>, episode: u32, pool_len: u32) -> u32 {
    return hash4(seed.x, seed.y, episode, 0x00a11ce0u) % pool_len;
}

// The slot an episode plays (core/src/engine/levels.rs, level_pick): pool_pick's column, kept or
// swapped for its alias by a second hash when the draw is weighted. `pool` is the kernel's pool
// buffer, which holds the alias table (two words a slot) at params.off_alias.
fn level_pick_in(seed: vec2<u32>, episode: u32, keep: u32, other: u32, i: u32) -> u32 {
    if ((hash4(seed.x, seed.y, episode, 0x00a11ce1u) >> 8u) < keep) { return i; }
    return other;
}

fn step_hash(seed: vec2<u32>, episode: u32, step: u32) -> u32 {
    return hash4(seed.x, seed.y, episode, step);
}

fn random_action(h: u32, agent: u32) -> u32 {
    return mix32(h ^ (agent * 0x9e3779b9u)) % 5u;
}

fn dims_w(d: u32) -> u32 { return d & 0xfffu; }
fn dims_h(d: u32) -> u32 { return (d >> 12u) & 0xfffu; }
fn dims_k(d: u32) -> u32 { return d >> 24u; }
fn rc_row(rc: u32) -> u32 { return (rc >> 12u) & 0xfffu; }
fn rc_col(rc: u32) -> u32 { return rc & 0xfffu; }
