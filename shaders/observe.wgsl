// Local observations: one invocation per agent slot. Writes `obs` from the current state and,
// for environments whose episode ended in the last step, `final_obs` from the state before the
// reset. Mirrors observe_env in core/src/engine/cpu/observe.rs, in the `bytes` or `bits` layout
// (with the `none` format the host runs no observation kernel).
//
// Other agents: when the host sets OCC_WORDS > 0 (`wgsl::occupancy_map`), the workgroup first
// marks every active agent of the environments its invocations cover (also the slots of such an
// environment that fall in a neighbouring workgroup) on bitmaps of cells in workgroup memory
// (OCC_WORDS words an environment, cell row · width + column), so that each window cell is one
// bit test: O(k) work per environment. Otherwise (and for final observations, which read the agents before the
// reset) each invocation looks at every agent of its environment.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pool: array<u32>;
@group(0) @binding(2) var<storage, read> env_state: array<u32>;
@group(0) @binding(3) var<storage, read> agents: array<u32>;
@group(0) @binding(4) var<storage, read> final_agents: array<u32>;
@group(0) @binding(5) var<storage, read> status: array<u32>;
@group(0) @binding(6) var<storage, read_write> obs: array<u32>;
@group(0) @binding(7) var<storage, read_write> final_obs: array<u32>;

var<private> words: array<u32, MAX_OBS_WORDS>;
var<workgroup> occ: array<atomic<u32>, OCC_SLOTS>;

// Sets cell `j` of plane `c` (j = row · window width + column): a byte in the `bytes` layout, a
// bit in the `bits` layout (see ObsFormat in core/src/engine/layout.rs).
fn set_cell(c: u32, j: u32, plane: u32) {
    if (params.obs_bits == 1u) {
        let i = c * params.plane_words * 32u + j;
        words[i / 32u] |= 1u << (i % 32u);
    } else {
        let i = c * plane + j;
        words[i / 4u] |= 1u << (8u * (i % 4u));
    }
}

fn is_hole(p: u32, cell: u32) -> bool {
    let word = pool[params.off_holes + p * params.words + cell / 32u];
    return ((word >> (cell % 32u)) & 1u) == 1u;
}

fn agent_word(use_final: bool, i: u32) -> u32 {
    if (use_final) { return final_agents[i]; }
    return agents[i];
}

// Fills `words` with agent `a`'s observation of environment `e` (dims and pool instance from
// `dims` and `p`; agents from the current or the final array). `slot`: the environment's bitmap
// in `occ`, or NONE to look at every agent instead.
fn build(e: u32, a: u32, dims: u32, p: u32, use_final: bool, slot: u32) {
    for (var i = 0u; i < params.stride_words; i++) { words[i] = 0u; }
    let kk = params.k_max;
    let k = dims_k(dims);
    let ag = agent_word(use_final, e * kk + a);
    if (a >= k || (ag & AGENT_ACTIVE) == 0u) { return; }
    let w = i32(dims_w(dims));
    let h = i32(dims_h(dims));
    let r = i32(params.radius);
    let win = 2 * r + 1;
    let plane = u32(win * win);
    let r0 = i32(rc_row(ag & POS_MASK));
    let c0 = i32(rc_col(ag & POS_MASK));
    for (var dy = 0; dy < win; dy++) {
        for (var dx = 0; dx < win; dx++) {
            let rr = r0 + dy - r;
            let cc = c0 + dx - r;
            let idx = u32(dy * win + dx);
            if (rr < 0 || cc < 0 || rr >= h || cc >= w) {
                set_cell(0u, idx, plane);
            } else {
                let cell = u32(rr * w + cc);
                if (is_hole(p, cell)) {
                    set_cell(0u, idx, plane);
                }
                if (slot != NONE && (dy != r || dx != r)) {
                    let bits = atomicLoad(&occ[slot * OCC_WORDS + cell / 32u]);
                    if (((bits >> (cell % 32u)) & 1u) == 1u) {
                        set_cell(1u, idx, plane);
                    }
                }
            }
        }
    }
    if (slot == NONE) {
        for (var b = 0u; b < k; b++) {
            let bw = agent_word(use_final, e * kk + b);
            if (b == a || (bw & AGENT_ACTIVE) == 0u) { continue; }
            let dr = i32(rc_row(bw & POS_MASK)) - r0 + r;
            let dc = i32(rc_col(bw & POS_MASK)) - c0 + r;
            if (dr >= 0 && dc >= 0 && dr < win && dc < win) {
                set_cell(1u, u32(dr * win + dc), plane);
            }
        }
    }
    // The goal always shows: outside the window, on its border in the goal's direction (the
    // offset clamped to the radius, as core/src/engine/cpu/maps.rs's goal_place).
    let goal = pool[params.off_goals + p * kk + a];
    let gr = clamp(i32(rc_row(goal)) - r0, -r, r) + r;
    let gc = clamp(i32(rc_col(goal)) - c0, -r, r) + r;
    set_cell(2u, u32(gr * win + gc), plane);
}

@compute @workgroup_size(WG)
fn observe(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = gid.x + gid.y * nwg.x * WG;
    let inside = i < params.num_envs * params.k_max;
    let e = i / params.k_max;
    let a = i % params.k_max;
    var slot = NONE;
    if (OCC_WORDS > 0u) {
        // This workgroup's first environment; its environments are bitmaps 0, 1, ... of `occ`.
        let first = (i - lid) / params.k_max;
        for (var j = lid; j < OCC_SLOTS; j += WG) { atomicStore(&occ[j], 0u); }
        workgroupBarrier();
        // Every agent of the workgroup's environments, also those whose slots fall in the next
        // or the last workgroup (an environment may straddle two).
        let last = min((i - lid + WG - 1u) / params.k_max, params.num_envs - 1u);
        for (var j = lid; first + j / params.k_max <= last; j += WG) {
            let f = first + j / params.k_max;
            let dims = env_state[f * 4u];
            let ag = agents[f * params.k_max + j % params.k_max];
            if (j % params.k_max < dims_k(dims) && (ag & AGENT_ACTIVE) != 0u) {
                let cell = rc_row(ag & POS_MASK) * dims_w(dims) + rc_col(ag & POS_MASK);
                atomicOr(&occ[(f - first) * OCC_WORDS + cell / 32u], 1u << (cell % 32u));
            }
        }
        workgroupBarrier();
        slot = e - first;
    }
    if (!inside) { return; }
    let base = i * params.stride_words;
    build(e, a, env_state[e * 4u], env_state[e * 4u + 3u], false, slot);
    for (var j = 0u; j < params.stride_words; j++) { obs[base + j] = words[j]; }
    if (params.skip_final == 0u && (status[e * STATUS_WORDS] & 3u) != 0u) {
        // The episode that ended played pool instance status[e * STATUS_WORDS + 5].
        let fp = status[e * STATUS_WORDS + 5u];
        build(e, a, pool[fp], fp, true, NONE);
        for (var j = 0u; j < params.stride_words; j++) { final_obs[base + j] = words[j]; }
    }
}
