//! Observations: each agent's window of holes, other agents and its own goal, copied row by row
//! from the padded maps ([`super::maps`]).

use super::Ctx;
use crate::engine::layout::{obs_stride, unpack_dims, AGENT_ACTIVE, OBS_CHANNELS, POS_MASK};

/// Writes one environment's local observations (`K · stride` bytes).
///
/// `marked`: the step before left every active agent marked on `bits` (see [`Scratch::bits`]);
/// otherwise they are marked here. Either way they are cleared again.
pub(crate) fn observe_env(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    bits: &mut Vec<u8>,
    marked: bool,
) {
    // Constant window widths turn the row copies into fixed-size moves.
    match ctx.cfg.obs_radius {
        1 => observe_rows::<3, { obs_stride(1) }>(ctx, env, agents, obs, bits, marked),
        2 => observe_rows::<5, { obs_stride(2) }>(ctx, env, agents, obs, bits, marked),
        3 => observe_rows::<7, { obs_stride(3) }>(ctx, env, agents, obs, bits, marked),
        r => observe_with(ctx, env, agents, obs, bits, r, marked),
    }
}

/// Marks (`on`) or clears the active agents of one environment on a padded byte map.
#[inline(always)]
pub(super) fn mark_agents(amap: &mut [u8], agents: &[u32], on: u8) {
    for &ag in agents {
        if ag & AGENT_ACTIVE != 0 {
            amap[(ag & POS_MASK) as usize] = on;
        }
    }
}

/// Observations for window widths `W` of 3, 5 and 7 (stride `S`): every window row is one
/// unaligned 8-byte copy from a padded map. The rows
/// are written in order, so the bytes each copy writes past its row are overwritten by the next
/// row or plane, and the goal plane, written last, runs to the end of the stride.
#[inline(always)]
pub(super) fn observe_rows<const W: usize, const S: usize>(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    marked: bool,
) {
    const { assert!(W >= 3 && W <= 8 && S >= 3 * W * W) };
    let (r, plane) = (W / 2, W * W);
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let (hmap, mw) = (maps.obs, maps.mw.min(1 << 16));
    if amap.len() < hmap.len() {
        amap.resize(hmap.len(), 0);
    }
    let amap = amap.as_mut_slice();
    let agents = &agents[..k];
    let goals = &ctx.maps.goals[p * ctx.k_max..p * ctx.k_max + k];
    if !marked {
        mark_agents(amap, agents, 1);
    }
    let (used, padding) = obs.split_at_mut(k * S);
    padding.fill(0);
    for ((o, &ag), &goal) in used.chunks_exact_mut(S).zip(agents).zip(goals) {
        let o: &mut [u8; S] = o.try_into().expect("chunks of the stride");
        if ag & AGENT_ACTIVE == 0 {
            o.fill(0);
            continue;
        }
        // The window's top-left padded cell; its rows are `mw` apart.
        let start = (ag & POS_MASK) as usize - r * mw - r;
        // Padded widths are at least 8 and the maps end with a spare row, so every row of the
        // window has 8 bytes to copy.
        // (`mw` is below 2^16, so the row offsets cannot overflow and the one length test per
        // plane covers every row.)
        let span = (W - 1) * mw + 8;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        for i in 0..W {
            o[i * W..i * W + 8].copy_from_slice(&hrows[i * mw..i * mw + 8]);
        }
        for i in 0..W {
            o[plane + i * W..plane + i * W + 8].copy_from_slice(&arows[i * mw..i * mw + 8]);
        }
        o[2 * plane..].fill(0);
        o[plane + r * W + r] = 0;
        // A goal outside the window writes its 0 over the plane's first 0.
        let (at, seen) = maps.goal_in_window(goal, start);
        o[2 * plane + at] = seen;
    }
    clear_agents(amap, agents, hmap.len());
}

/// The observation map of agents is cleared whole (a few wide stores) when it has at most this
/// many bytes per agent.
pub(super) const BULK_CLEAR_BYTES_PER_AGENT: usize = 64;

/// Clears the agent marks of one environment from a padded byte map of `len` bytes.
#[inline(always)]
pub(super) fn clear_agents(amap: &mut [u8], agents: &[u32], len: usize) {
    if len <= BULK_CLEAR_BYTES_PER_AGENT * agents.len() {
        amap[..len].fill(0);
    } else {
        mark_agents(amap, agents, 0);
    }
}

/// Observations for any radius, one row copy of `2r + 1` bytes at a time.
pub(super) fn observe_with(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    radius: u32,
    marked: bool,
) {
    let k = unpack_dims(env[0]).2 as usize;
    let r = radius as usize;
    let win = 2 * r + 1;
    let plane = win * win;
    obs.fill(0);
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let (hmap, mw) = (maps.obs, maps.mw);
    if amap.len() < hmap.len() {
        amap.resize(hmap.len(), 0);
    }
    let amap = amap.as_mut_slice();
    if !marked {
        mark_agents(amap, &agents[..k], 1);
    }
    for a in 0..k {
        let ag = agents[a];
        if ag & AGENT_ACTIVE == 0 {
            continue;
        }
        let o = &mut obs[a * ctx.stride..a * ctx.stride + OBS_CHANNELS * plane];
        let (holes_plane, rest) = o.split_at_mut(plane);
        let agents_plane = &mut rest[..plane];
        let start = (ag & POS_MASK) as usize - r * mw - r;
        let span = (win - 1) * mw + win;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        let dst = holes_plane.chunks_exact_mut(win).zip(agents_plane.chunks_exact_mut(win));
        for ((dh, da), (sh, sa)) in dst.zip(hrows.chunks(mw).zip(arows.chunks(mw))) {
            dh.copy_from_slice(&sh[..win]);
            da.copy_from_slice(&sa[..win]);
        }
        o[plane + r * win + r] = 0;
        let (at, seen) = maps.goal_in_window(ctx.maps.goals[p * ctx.k_max + a], start);
        o[2 * plane + at] |= seen;
    }
    clear_agents(amap, &agents[..k], hmap.len());
}
