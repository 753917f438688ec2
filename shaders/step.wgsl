// One step of every environment: one invocation per environment. Mirrors step_env in
// core/src/engine/cpu/ (the reference). Collision checks go through the cell table
// (shaders/cells.wgsl, which the host puts before this file): O(k) per environment, as the
// CPU's occupancy grid, with the same results.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pool: array<u32>;
@group(0) @binding(2) var<storage, read_write> env_state: array<u32>;
@group(0) @binding(3) var<storage, read_write> agents: array<u32>;
@group(0) @binding(4) var<storage, read> actions: array<u32>;
@group(0) @binding(5) var<storage, read_write> rewards: array<f32>;
@group(0) @binding(6) var<storage, read_write> events: array<u32>;
@group(0) @binding(7) var<storage, read_write> status: array<u32>;
@group(0) @binding(8) var<storage, read_write> final_agents: array<u32>;

var<private> cur: array<u32, MAX_K>;
var<private> tgt: array<u32, MAX_K>;
var<private> tgt_rc: array<u32, MAX_K>;
var<private> alive: array<u32, MAX_K>;
var<private> moving: array<u32, MAX_K>;
var<private> stay: array<u32, MAX_K>;
var<private> ev: array<u32, MAX_K>;
// Soft mode's work list of agents that stay, and each agent's cell table slots (its cell, its
// target).
var<private> work: array<u32, MAX_K>;
var<private> at_slot: array<u32, MAX_K>;
var<private> to_slot: array<u32, MAX_K>;

fn is_hole(p: u32, cell: u32) -> bool {
    let word = pool[params.off_holes + p * params.words + cell / 32u];
    return ((word >> (cell % 32u)) & 1u) == 1u;
}

fn action_of(e: u32, a: u32, h: u32) -> u32 {
    if (params.random_actions == 1u) {
        return random_action(h, a);
    }
    let idx = e * params.k_max + a;
    return (actions[idx / 4u] >> (8u * (idx % 4u))) & 0xffu;
}

// The slot episode `episode` of an environment with seed words `seed` plays: pool_pick, or with
// sampling weights the alias table's choice (core/src/engine/levels.rs).
fn pick(seed: vec2<u32>, episode: u32) -> u32 {
    let i = pool_pick(seed, episode, params.pool_len);
    if (params.weighted == 0u) { return i; }
    let at = params.off_alias + 2u * i;
    return level_pick_in(seed, episode, pool[at], pool[at + 1u], i);
}

fn reward_of(x: u32) -> f32 {
    var r: f32 = 0.0;
    if ((x & EV_REACHED) != 0u) { r += params.w_reach; }
    if ((x & (EV_AT_GOAL | EV_INACTIVE)) == 0u) { r += params.w_step; }
    if ((x & EV_BLOCKED) != 0u) { r += params.w_blocked; }
    if ((x & EV_OFF_GRID) != 0u) { r += params.w_off; }
    if ((x & EV_HOLE) != 0u) { r += params.w_hole; }
    if ((x & EV_CONFLICT) != 0u) { r += params.w_conflict; }
    return r;
}

const CONFLICT_SWAP: u32 = 1u;
const CONFLICT_SHARED: u32 = 2u;

// rules::step_conflict for agents a < b of a strict step (their cells differ at its start);
// an agent in a conflict gets EV_CONFLICT.
fn step_conflict(a: u32, b: u32) -> u32 {
    var c = 0u;
    if (tgt[a] == tgt[b]) {
        c = CONFLICT_SHARED;
    } else if (cur[a] != tgt[a] && tgt[a] == cur[b] && cur[a] == tgt[b]) {
        c = CONFLICT_SWAP;
    }
    if (c != 0u) {
        ev[a] |= EV_CONFLICT;
        ev[b] |= EV_CONFLICT;
    }
    return c;
}

@compute @workgroup_size(WG)
fn step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = gid.x + gid.y * nwg.x * WG;
    if (e >= params.num_envs) { return; }
    let kk = params.k_max;
    let base = e * 4u;
    let dims = env_state[base];
    let w = dims_w(dims);
    let h = dims_h(dims);
    let k = dims_k(dims);
    let p = env_state[base + 3u];
    let seed = env_seed(params.seed_lo, params.seed_hi, e);
    let episode = env_state[base + 2u];
    let hsh = step_hash(seed, episode, env_state[base + 1u]);
    let steps = env_state[base + 1u] + 1u;
    env_state[base + 1u] = steps;

    for (var a = 0u; a < k; a++) {
        let ag = agents[e * kk + a];
        let rc = ag & POS_MASK;
        let r = rc_row(rc);
        let c = rc_col(rc);
        cur[a] = r * w + c;
        tgt[a] = cur[a];
        tgt_rc[a] = rc;
        ev[a] = 0u;
        alive[a] = select(0u, 1u, (ag & AGENT_ACTIVE) != 0u);
        if (alive[a] == 0u) {
            ev[a] = EV_INACTIVE;
            continue;
        }
        let act = action_of(e, a, hsh);
        var nr = r;
        var nc = c;
        var on = true;
        switch act {
            case 1u: { if (r > 0u) { nr = r - 1u; } else { on = false; } }
            case 2u: { if (r + 1u < h) { nr = r + 1u; } else { on = false; } }
            case 3u: { if (c > 0u) { nc = c - 1u; } else { on = false; } }
            case 4u: { if (c + 1u < w) { nc = c + 1u; } else { on = false; } }
            default: {}
        }
        if (!on) {
            ev[a] |= EV_OFF_GRID;
        } else {
            tgt_rc[a] = (nr << 12u) | nc;
            tgt[a] = nr * w + nc;
            if (is_hole(p, tgt[a])) { ev[a] |= EV_HOLE; }
        }
    }

    var fail_kind = 0u;
    var fail_agent = NONE;
    if (params.mode == 0u) {
        for (var a = 0u; a < k; a++) {
            if ((ev[a] & EV_OFF_GRID) != 0u) { fail_kind = KIND_OUT_OF_BOUNDS; fail_agent = a; break; }
            if ((ev[a] & EV_HOLE) != 0u) { fail_kind = KIND_HOLE; fail_agent = a; break; }
        }
        if (fail_kind == 0u) {
            // As rules::judge_conflicts with its occupancy map: each agent's step is judged
            // with the agent on its target and with the first agent whose step ends there.
            for (var a = 0u; a < k; a++) {
                if (alive[a] == 1u) { t_here[cell_slot(cur[a])] = a + 1u; }
            }
            var edge_a = NONE;
            var va = NONE;
            for (var b = 0u; b < k; b++) {
                if (alive[b] == 0u) { continue; }
                let s = cell_slot(tgt[b]);
                let on = t_here[s];
                if (on != 0u && on - 1u != b) {
                    let c = step_conflict(min(on - 1u, b), max(on - 1u, b));
                    if (c == CONFLICT_SWAP) { edge_a = min(edge_a, min(on - 1u, b)); }
                    if (c == CONFLICT_SHARED) { va = min(va, min(on - 1u, b)); }
                }
                let first = t_in[s];
                if (first == 0u) {
                    t_in[s] = b + 1u;
                } else if (step_conflict(first - 1u, b) == CONFLICT_SHARED) {
                    // The first agent whose step ends on b's target is lower than b.
                    va = min(va, first - 1u);
                }
            }
            if (edge_a != NONE) {
                fail_kind = KIND_EDGE_CONFLICT;
                fail_agent = edge_a;
            } else if (va != NONE) {
                fail_kind = KIND_VERTEX_CONFLICT;
                fail_agent = va;
            }
        }
        if (fail_kind == 0u) {
            for (var a = 0u; a < k; a++) {
                if (alive[a] == 1u && tgt[a] != cur[a]) {
                    ev[a] |= EV_MOVED;
                    agents[e * kk + a] = tgt_rc[a] | (agents[e * kk + a] & (AGENT_ACTIVE | AGENT_ARRIVED));
                }
            }
        }
    } else {
        for (var a = 0u; a < k; a++) {
            if ((ev[a] & EV_HOLE) != 0u) {
                if (params.hole_block == 1u) {
                    tgt[a] = cur[a];
                    tgt_rc[a] = agents[e * kk + a] & POS_MASK;
                } else {
                    alive[a] = 0u;
                    agents[e * kk + a] = tgt_rc[a];
                }
            }
        }
        // The table holds, per cell, 1 + the agent on it (of those still in the episode) and
        // the movers that target it: their count from bit 16, and 1 + the last of them.
        for (var a = 0u; a < k; a++) {
            moving[a] = select(0u, 1u, alive[a] == 1u && tgt[a] != cur[a]);
            stay[a] = 0u;
            if (alive[a] == 1u) {
                at_slot[a] = cell_slot(cur[a]);
                t_here[at_slot[a]] = a + 1u;
            }
        }
        for (var a = 0u; a < k; a++) {
            if (moving[a] == 1u) {
                let s = cell_slot(tgt[a]);
                to_slot[a] = s;
                t_in[s] = (((t_in[s] >> 16u) + 1u) << 16u) | (a + 1u);
            }
        }
        // Movers that stay at once: a contested target, or one whose agent does not move or
        // moves onto the mover's cell (a swap).
        var len = 0u;
        for (var a = 0u; a < k; a++) {
            if (moving[a] == 0u) { continue; }
            let s = to_slot[a];
            let on = t_here[s];
            var blocked = (t_in[s] >> 16u) >= 2u;
            if (on != 0u) {
                let b = on - 1u;
                blocked = blocked || moving[b] == 0u || tgt[b] == cur[a];
            }
            if (blocked) {
                stay[a] = 1u;
                work[len] = a;
                len++;
            }
        }
        // Until nothing changes: an agent that stays blocks the single mover (if any) that
        // targets its cell (two or more stay already). Each agent enters the list at most once.
        while (len > 0u) {
            len--;
            let w = t_in[at_slot[work[len]]];
            if ((w >> 16u) == 1u) {
                let m = (w & 0xffffu) - 1u;
                if (stay[m] == 0u) {
                    stay[m] = 1u;
                    work[len] = m;
                    len++;
                }
            }
        }
        for (var a = 0u; a < k; a++) {
            if (stay[a] == 1u) {
                tgt[a] = cur[a];
                ev[a] |= EV_BLOCKED;
            }
            if (alive[a] == 1u && tgt[a] != cur[a]) {
                ev[a] |= EV_MOVED;
                agents[e * kk + a] = tgt_rc[a] | (agents[e * kk + a] & (AGENT_ACTIVE | AGENT_ARRIVED));
            }
        }
    }

    var all_home = true;
    var any_alive = false;
    var dropped = NONE;
    var home = 0u;
    for (var a = 0u; a < k; a++) {
        let ag = agents[e * kk + a];
        if ((ag & AGENT_ACTIVE) == 0u) {
            if (dropped == NONE) { dropped = a; }
            ev[a] |= EV_INACTIVE;
            continue;
        }
        any_alive = true;
        let goal = pool[params.off_goals + p * kk + a];
        if ((ag & POS_MASK) == goal) {
            ev[a] |= EV_AT_GOAL;
            home++;
            // Paid once an episode: the first arrival sets the agent's ARRIVED bit.
            if (cur[a] != rc_row(goal) * w + rc_col(goal) && (ag & AGENT_ARRIVED) == 0u) {
                ev[a] |= EV_REACHED;
                agents[e * kk + a] = ag | AGENT_ARRIVED;
            }
        } else {
            all_home = false;
        }
    }
    // The episode's return: this step's rewards added agent by agent, as the CPU adds them.
    let sw = e * STATUS_WORDS;
    var ret = bitcast<f32>(status[sw + 8u]);
    for (var a = 0u; a < kk; a++) {
        if (a < k) {
            events[e * kk + a] = ev[a];
            let rw = reward_of(ev[a]);
            rewards[e * kk + a] = rw;
            ret = ret + rw;
        } else {
            events[e * kk + a] = EV_INACTIVE;
            rewards[e * kk + a] = 0.0;
        }
    }

    var out = OUT_RUNNING;
    var kind = 0u;
    var who = NONE;
    if (fail_kind != 0u) {
        out = OUT_FAILURE;
        kind = fail_kind;
        who = fail_agent;
    } else if (!any_alive || all_home) {
        if (dropped != NONE) {
            out = OUT_FAILURE;
            kind = KIND_HOLE;
            who = dropped;
        } else {
            out = OUT_SUCCESS;
        }
    } else if (steps >= params.episode_limit) {
        out = OUT_TRUNCATED;
    }
    let terminated = out == OUT_SUCCESS || out == OUT_FAILURE;
    let truncated = out == OUT_TRUNCATED;
    status[sw] = select(0u, 1u, terminated) | select(0u, 2u, truncated);
    status[sw + 1u] = steps;
    status[sw + 2u] = out;
    status[sw + 3u] = kind;
    status[sw + 4u] = who;
    status[sw + 5u] = p;
    status[sw + 6u] = bitcast<u32>(ret);
    status[sw + 7u] = home;
    status[sw + 8u] = select(bitcast<u32>(ret), 0u, terminated || truncated);

    if (terminated || truncated) {
        for (var a = 0u; a < kk; a++) {
            final_agents[e * kk + a] = agents[e * kk + a];
        }
        let next = episode + 1u;
        let q = pick(seed, next);
        let qd = pool[q];
        env_state[base] = qd;
        env_state[base + 1u] = 0u;
        env_state[base + 2u] = next;
        env_state[base + 3u] = q;
        for (var a = 0u; a < kk; a++) {
            if (a < dims_k(qd)) {
                agents[e * kk + a] = pool[params.off_starts + q * kk + a] | AGENT_ACTIVE;
            } else {
                agents[e * kk + a] = 0u;
            }
        }
    }
}

// Starts episode 0 in every environment.
@compute @workgroup_size(WG)
fn reset(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = gid.x + gid.y * nwg.x * WG;
    if (e >= params.num_envs) { return; }
    let kk = params.k_max;
    let seed = env_seed(params.seed_lo, params.seed_hi, e);
    let q = pick(seed, 0u);
    let qd = pool[q];
    env_state[e * 4u] = qd;
    env_state[e * 4u + 1u] = 0u;
    env_state[e * 4u + 2u] = 0u;
    env_state[e * 4u + 3u] = q;
    for (var a = 0u; a < kk; a++) {
        if (a < dims_k(qd)) {
            agents[e * kk + a] = pool[params.off_starts + q * kk + a] | AGENT_ACTIVE;
        } else {
            agents[e * kk + a] = 0u;
        }
    }
    for (var i = 0u; i < STATUS_WORDS; i++) { status[e * STATUS_WORDS + i] = 0u; }
}
