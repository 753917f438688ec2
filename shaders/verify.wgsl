// Batched plan verification: one invocation per plan. Mirrors the verification kernel
// (core/src/verify/kernel.rs, as core/src/engine/verify_batch.rs runs it) and the rules it
// judges by (core/src/rules.rs: agent_fault, step_conflict, judge_conflicts). The plan buffer
// holds the instance index of each plan, then its agent count, then the move codes (bytes, four
// to a word) at word `off_moves`. Conflicts are found through the cell table
// (shaders/cells.wgsl, which the host puts before this file): O(k) per time step.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pool: array<u32>;
@group(0) @binding(2) var<storage, read> plans: array<u32>;
@group(0) @binding(3) var<storage, read_write> results: array<u32>;

var<private> row: array<u32, MAX_K>;
var<private> col: array<u32, MAX_K>;
var<private> pos: array<u32, MAX_K>;
var<private> prev: array<u32, MAX_K>;
var<private> last_off: array<u32, MAX_K>;
var<private> off: array<u32, MAX_K>;
var<private> len: array<u32, MAX_K>;
var<private> goal: array<u32, MAX_K>;
// The cell table's slots of each agent's cells before and after the time step.
var<private> prev_slot: array<u32, MAX_K>;
var<private> pos_slot: array<u32, MAX_K>;

fn move_code(n: u32, a: u32, t: u32) -> u32 {
    let idx = (n * params.plan_k + a) * params.plan_len + t;
    return (plans[params.off_moves + idx / 4u] >> (8u * (idx % 4u))) & 0xffu;
}

fn is_hole(p: u32, cell: u32) -> bool {
    let word = pool[params.off_holes + p * params.words + cell / 32u];
    return ((word >> (cell % 32u)) & 1u) == 1u;
}

fn write(n: u32, valid: u32, optimal: u32, kind: u32, agent: u32, time: u32, soc: u32, makespan: u32, opt: u32) {
    let b = n * 8u;
    results[b] = valid;
    results[b + 1u] = optimal;
    results[b + 2u] = kind;
    results[b + 3u] = agent;
    results[b + 4u] = time;
    results[b + 5u] = soc;
    results[b + 6u] = makespan;
    results[b + 7u] = opt;
}

@compute @workgroup_size(WG)
fn verify(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = gid.x + gid.y * nwg.x * WG;
    if (n >= params.num_plans) { return; }
    let p = plans[n];
    let dims = pool[p];
    let w = dims_w(dims);
    let h = dims_h(dims);
    let k = dims_k(dims);
    let opt = pool[params.off_opt + p];
    let kk = params.k_max;
    if (plans[params.num_plans + n] != k) {
        write(n, 0u, 0u, KIND_WRONG_AGENT_COUNT, NONE, NONE, NONE, NONE, opt);
        return;
    }
    var horizon = 0u;
    for (var a = 0u; a < k; a++) {
        var l = params.plan_len;
        for (var t = 0u; t < params.plan_len; t++) {
            let c = move_code(n, a, t);
            if (c == 255u) { l = t; break; }
            if (c > 4u) {
                write(n, 0u, 0u, KIND_PARSE_ERROR, NONE, NONE, NONE, NONE, opt);
                return;
            }
        }
        len[a] = l;
        horizon = max(horizon, l);
        let s = pool[params.off_starts + p * kk + a];
        let g = pool[params.off_goals + p * kk + a];
        row[a] = rc_row(s);
        col[a] = rc_col(s);
        pos[a] = row[a] * w + col[a];
        goal[a] = rc_row(g) * w + rc_col(g);
        off[a] = select(0u, 1u, pos[a] != goal[a]);
        last_off[a] = 0u;
    }
    for (var t = 1u; t <= horizon; t++) {
        for (var a = 0u; a < k; a++) {
            prev[a] = pos[a];
            if (t > len[a]) { continue; }
            let r = row[a];
            let c = col[a];
            var ok = true;
            switch move_code(n, a, t - 1u) {
                case 1u: { if (r > 0u) { row[a] = r - 1u; } else { ok = false; } }
                case 2u: { if (r + 1u < h) { row[a] = r + 1u; } else { ok = false; } }
                case 3u: { if (c > 0u) { col[a] = c - 1u; } else { ok = false; } }
                case 4u: { if (c + 1u < w) { col[a] = c + 1u; } else { ok = false; } }
                default: {}
            }
            if (!ok) {
                write(n, 0u, 0u, KIND_OUT_OF_BOUNDS, a, t, NONE, NONE, opt);
                return;
            }
            pos[a] = row[a] * w + col[a];
            if (is_hole(p, pos[a])) {
                write(n, 0u, 0u, KIND_HOLE, a, t, NONE, NONE, opt);
                return;
            }
        }
        // As rules::judge_conflicts with its occupancy map: each agent's step is judged with
        // the agent whose cell it enters and with the first agent that ends on the same cell.
        // The lowest pair of each kind is reported, by its lower agent.
        for (var a = 0u; a < k; a++) {
            prev_slot[a] = cell_slot(prev[a]);
            t_here[prev_slot[a]] = a + 1u;
        }
        var edge_a = NONE;
        var vertex_a = NONE;
        for (var b = 0u; b < k; b++) {
            let s = cell_slot(pos[b]);
            pos_slot[b] = s;
            let on = t_here[s];
            if (on != 0u && on - 1u != b) {
                // The agent whose cell b enters: a swap if it enters b's cell (it moves, as b
                // does, since their cells differ); on one cell with b only if it stays.
                let a = on - 1u;
                if (pos[a] == pos[b]) {
                    vertex_a = min(vertex_a, min(a, b));
                } else if (pos[a] == prev[b]) {
                    edge_a = min(edge_a, min(a, b));
                }
            }
            let first = t_in[s];
            if (first == 0u) {
                t_in[s] = b + 1u;
            } else {
                vertex_a = min(vertex_a, first - 1u);
            }
        }
        for (var a = 0u; a < k; a++) {
            cell_clear(prev_slot[a]);
            cell_clear(pos_slot[a]);
        }
        if (edge_a != NONE) {
            write(n, 0u, 0u, KIND_EDGE_CONFLICT, edge_a, t, NONE, NONE, opt);
            return;
        }
        if (vertex_a != NONE) {
            write(n, 0u, 0u, KIND_VERTEX_CONFLICT, vertex_a, t, NONE, NONE, opt);
            return;
        }
        for (var a = 0u; a < k; a++) {
            if (pos[a] != goal[a]) {
                last_off[a] = t;
                off[a] = 1u;
            }
        }
    }
    var soc = 0u;
    var makespan = 0u;
    for (var a = 0u; a < k; a++) {
        if (pos[a] != goal[a]) {
            write(n, 0u, 0u, KIND_GOAL_NOT_REACHED, a, horizon, NONE, NONE, opt);
            return;
        }
        let cost = select(0u, last_off[a] + 1u, off[a] == 1u);
        soc += cost;
        makespan = max(makespan, cost);
    }
    write(n, 1u, select(0u, 1u, opt != NONE && soc == opt), 0u, NONE, NONE, soc, makespan, opt);
}
