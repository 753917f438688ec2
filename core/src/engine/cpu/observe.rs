//! Observations: each agent's window of holes, other agents and its own goal, copied row by row
//! from the padded maps ([`super::maps`]): as bytes, or as bits read from bit maps of the same
//! padded cells (layouts: [`ObsFormat`]). The goal always shows: a goal outside the window shows
//! on the window's border, in its direction ([`super::maps::Maps::goal_place`]).

use super::lanes::Scratch;
use super::maps::Maps;
use super::Ctx;
use crate::engine::config::{obs_plane_words, obs_stride, ObsFormat, OBS_CHANNELS};
use crate::words::{unpack_dims, AGENT_ACTIVE, POS_MASK};

/// Writes one environment's local observations (`K · stride` bytes) in the configured format.
///
/// `marked` (`bytes` format only): the step before left every active agent marked on
/// [`Scratch::bits`]; otherwise they are marked here. Either way they are cleared again.
#[inline(always)]
pub(crate) fn observe_env(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    sc: &mut Scratch,
    marked: bool,
) {
    match ctx.cfg.obs_format {
        ObsFormat::Bytes => observe_bytes(ctx, env, agents, obs, &mut sc.bits, marked),
        ObsFormat::Bits => observe_bits(ctx, env, agents, obs, sc),
        ObsFormat::None => {}
    }
}

#[inline(always)]
fn observe_bytes(
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
        4 => observe_rows::<9, { obs_stride(4) }>(ctx, env, agents, obs, bits, marked),
        5 => observe_rows::<11, { obs_stride(5) }>(ctx, env, agents, obs, bits, marked),
        6 => observe_rows::<13, { obs_stride(6) }>(ctx, env, agents, obs, bits, marked),
        7 => observe_rows::<15, { obs_stride(7) }>(ctx, env, agents, obs, bits, marked),
        r => observe_with(ctx, env, agents, obs, bits, r, marked),
    }
}

#[inline(always)]
fn observe_bits(ctx: Ctx<'_>, env: &[u32; 4], agents: &[u32], obs: &mut [u8], sc: &mut Scratch) {
    // Windows of up to 15 × 15 cells (225 bits) build each plane in one word or a few.
    match ctx.cfg.obs_radius {
        0 => bit_rows::<1, u64>(ctx, env, agents, obs, sc),
        1 => bit_rows::<3, u64>(ctx, env, agents, obs, sc),
        2 => bit_rows::<5, u64>(ctx, env, agents, obs, sc),
        3 => bit_rows::<7, u64>(ctx, env, agents, obs, sc),
        4 => bit_rows::<9, [u64; 2]>(ctx, env, agents, obs, sc),
        5 => bit_rows::<11, [u64; 2]>(ctx, env, agents, obs, sc),
        6 => bit_rows::<13, [u64; 3]>(ctx, env, agents, obs, sc),
        7 => bit_rows::<15, [u64; 4]>(ctx, env, agents, obs, sc),
        r => bit_rows_with(ctx, env, agents, obs, sc, r),
    }
}

/// The bits of padded cells `bit..bit + 57` of a bit map (lowest bit first); the map has 8
/// spare bytes after its last cell.
#[inline(always)]
fn bits_at(map: &[u8], bit: usize) -> u64 {
    let b = bit >> 3;
    u64::from_le_bytes(map[b..b + 8].try_into().expect("8 bytes")) >> (bit & 7)
}

/// Sets (`on`) or clears the bits of one environment's active agents on a bit map. Clearing
/// zeroes each agent's whole byte: every bit set in it belongs to one of these agents.
#[inline(always)]
fn mark_agent_bits(map: &mut [u8], agents: &[u32], on: bool) {
    for &ag in agents {
        if ag & AGENT_ACTIVE != 0 {
            let cell = (ag & POS_MASK) as usize;
            if on {
                map[cell >> 3] |= 1 << (cell & 7);
            } else {
                map[cell >> 3] = 0;
            }
        }
    }
}

/// One plane of a packed window being built: a `u64` for windows of up to 64 cells, `N` of them
/// for up to `64 N` (two plain words take fewer instructions than a `u128` here).
trait PlaneWord: Copy {
    const ZERO: Self;
    /// ORs `v` (at most 57 bits, a window row) in at bit `at`.
    fn put(&mut self, v: u64, at: usize);
    /// Clears bit `at`.
    fn clear(&mut self, at: usize);
    /// Writes the low `out.len()` bytes, little-endian.
    fn write(&self, out: &mut [u8]);
}

impl PlaneWord for u64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn put(&mut self, v: u64, at: usize) {
        *self |= v << at;
    }
    #[inline(always)]
    fn clear(&mut self, at: usize) {
        *self &= !(1 << at);
    }
    #[inline(always)]
    fn write(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes()[..out.len()]);
    }
}

impl<const N: usize> PlaneWord for [u64; N] {
    const ZERO: Self = [0; N];
    #[inline(always)]
    fn put(&mut self, v: u64, at: usize) {
        let (w, s) = (at / 64, at % 64);
        self[w] |= v << s;
        // `v` has at most 57 bits, so it spills into one more word at most.
        if s != 0 && w + 1 < N {
            self[w + 1] |= v >> (64 - s);
        }
    }
    #[inline(always)]
    fn clear(&mut self, at: usize) {
        self[at / 64] &= !(1 << (at % 64));
    }
    #[inline(always)]
    fn write(&self, out: &mut [u8]) {
        for (d, w) in out.chunks_mut(8).zip(self) {
            d.copy_from_slice(&w.to_le_bytes()[..d.len()]);
        }
    }
}

/// Packed observations for window widths `W` up to 15, each plane built in a word `P` (`u64`
/// up to 7 × 7 cells, `[u64; 2]` up to 11 × 11, `[u64; 3]` and `[u64; 4]` for 13 and 15): from row masks on maps of padded width up to 64
/// ([`row_masks`]), else from bit maps ([`bit_loads`]); the holes plane is copied whole from
/// [`Maps::hole_windows`] where the pool has them.
#[inline(always)]
fn bit_rows<const W: usize, P: PlaneWord>(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    sc: &mut Scratch,
) {
    // The instance's maps, its agents and their goals, found once for both ways.
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let on = On { maps, agents: &agents[..k], goals: &ctx.maps.goals[p * ctx.k_max..p * ctx.k_max + k] };
    match (maps.obs_rows.is_empty(), maps.hole_windows.is_empty()) {
        (true, true) => bit_loads::<W, P, false>(on, obs, &mut sc.agent_bits),
        (true, false) => bit_loads::<W, P, true>(on, obs, &mut sc.agent_bits),
        (false, true) => row_masks::<W, P, false>(on, obs, &mut sc.agent_rows),
        (false, false) => row_masks::<W, P, true>(on, obs, &mut sc.agent_rows),
    }
}

/// One environment as [`bit_rows`] sees it: its instance's maps, its `k` agents' words and
/// their goals (padded cells).
#[derive(Clone, Copy)]
struct On<'a> {
    maps: Maps<'a>,
    agents: &'a [u32],
    goals: &'a [u32],
}

/// The per-agent loop both ways of [`bit_rows`] share: `window(cell)` gives the holes and the
/// agents planes of the window around padded cell `cell` (the agent's own bit still set) and,
/// with `HOLES`, the cell's padded row and column; this clears the agent's own bit, places its
/// goal and writes the three planes. With `HOLES`, the holes plane is copied from
/// [`Maps::hole_windows`] at the cell's grid index instead (`window` then leaves it empty).
/// Padding slots and inactive agents get zeros.
#[inline(always)]
fn write_bit_windows<const W: usize, P: PlaneWord, const HOLES: bool>(
    On { maps, agents, goals }: On<'_>,
    obs: &mut [u8],
    mut window: impl FnMut(usize) -> (P, P, (usize, usize)),
) {
    const { assert!(W % 2 == 1 && W * W <= 8 * std::mem::size_of::<P>()) };
    let pb = 4 * (W * W).div_ceil(32);
    let r = W / 2;
    let (used, padding) = obs.split_at_mut(agents.len() * 3 * pb);
    padding.fill(0);
    for ((o, &ag), &goal) in used.chunks_exact_mut(3 * pb).zip(agents).zip(goals) {
        if ag & AGENT_ACTIVE == 0 {
            o.fill(0);
            continue;
        }
        let cell = (ag & POS_MASK) as usize;
        let (holes, mut others, (row, col)) = window(cell);
        others.clear(r * W + r);
        let mut goal_plane = P::ZERO;
        goal_plane.put(1, maps.goal_place(cell, goal, r));
        if HOLES {
            let g = (row - maps.pad) * maps.w + col - maps.pad;
            o[..pb].copy_from_slice(&maps.hole_windows[g * pb..(g + 1) * pb]);
        } else {
            holes.write(&mut o[..pb]);
        }
        others.write(&mut o[pb..2 * pb]);
        goal_plane.write(&mut o[2 * pb..]);
    }
}

/// [`bit_rows`] on a map of padded width up to 64: the holes and the agents are one `u64` mask
/// per padded row, so every window row is one load, one shift by the window's first column
/// and one mask, and one bounds test per window covers its rows.
#[inline(always)]
fn row_masks<const W: usize, P: PlaneWord, const HOLES: bool>(
    on: On<'_>,
    obs: &mut [u8],
    arows: &mut Vec<u64>,
) {
    let (r, mask) = (W / 2, (1u64 << W) - 1);
    let On { maps, agents, .. } = on;
    let (hrows, mw) = (maps.obs_rows, maps.mw);
    // Row of a padded cell by a multiplication: exact for cells below 2^32 / 64 (padded cells
    // are below 2^24, widths at most 64).
    let recip = (1u64 << 32).div_ceil(mw as u64);
    let row_col = |cell: usize| {
        let row = ((cell as u64 * recip) >> 32) as usize;
        (row, cell - row * mw)
    };
    if arows.len() < hrows.len() {
        arows.resize(hrows.len(), 0);
    }
    let arows = &mut arows[..hrows.len()];
    for &ag in agents {
        if ag & AGENT_ACTIVE != 0 {
            let (row, col) = row_col((ag & POS_MASK) as usize);
            arows[row] |= 1 << col;
        }
    }
    let marked = &*arows;
    write_bit_windows::<W, P, HOLES>(
        on,
        obs,
        #[inline(always)]
        |cell| {
            // The padding (at least r cells) keeps the window on the map: rows from row - r, bits
            // from col - r, and col + r < 64.
            let (row, col) = row_col(cell);
            let (top, left) = (row - r, col - r);
            let hw: &[u64; W] = hrows[top..top + W].try_into().expect("W rows");
            let aw: &[u64; W] = marked[top..top + W].try_into().expect("W rows");
            let (mut holes, mut others) = (P::ZERO, P::ZERO);
            for i in 0..W {
                if !HOLES {
                    holes.put(hw[i] >> left & mask, i * W);
                }
                others.put(aw[i] >> left & mask, i * W);
            }
            (holes, others, (row, col))
        },
    );
    for &ag in agents {
        if ag & AGENT_ACTIVE != 0 {
            arows[row_col((ag & POS_MASK) as usize).0] = 0;
        }
    }
}

/// [`bit_rows`] on any map: every window row is one unaligned load and shift per plane from a
/// bit map of padded cells.
#[inline(always)]
fn bit_loads<const W: usize, P: PlaneWord, const HOLES: bool>(
    on: On<'_>,
    obs: &mut [u8],
    abits: &mut Vec<u8>,
) {
    let (r, mask) = (W / 2, (1u64 << W) - 1);
    let On { maps, agents, .. } = on;
    let (hbits, mw) = (maps.obs_bits, maps.mw);
    if abits.len() < hbits.len() {
        abits.resize(hbits.len(), 0);
    }
    let abits = &mut abits[..hbits.len()];
    mark_agent_bits(abits, agents, true);
    let marked = &*abits;
    write_bit_windows::<W, P, HOLES>(
        on,
        obs,
        #[inline(always)]
        |cell| {
            let start = cell - r * mw - r;
            let (mut holes, mut others) = (P::ZERO, P::ZERO);
            for i in 0..W {
                let at = start + i * mw;
                if !HOLES {
                    holes.put(bits_at(hbits, at) & mask, i * W);
                }
                others.put(bits_at(marked, at) & mask, i * W);
            }
            // Only the table needs the row and column (a division: maps this wide are rare).
            (holes, others, if HOLES { (cell / mw, cell % mw) } else { (0, 0) })
        },
    );
    mark_agent_bits(abits, agents, false);
}

/// Packed observations for any radius: rows in pieces of up to 56 bits, placed into `u64`
/// words of the three planes.
fn bit_rows_with(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    sc: &mut Scratch,
    radius: u32,
) {
    let (r, win) = (radius as usize, 2 * radius as usize + 1);
    let pw = obs_plane_words(radius);
    let (pb, p64) = (4 * pw, pw.div_ceil(2) + 1);
    let k = unpack_dims(env[0]).2 as usize;
    let p = env[3] as usize;
    let maps = ctx.maps.instance(p);
    let (hbits, mw) = (maps.obs_bits, maps.mw);
    let Scratch { agent_bits, planes, .. } = sc;
    if agent_bits.len() < hbits.len() {
        agent_bits.resize(hbits.len(), 0);
    }
    let abits = &mut agent_bits[..hbits.len()];
    planes.resize(3 * p64, 0);
    obs.fill(0);
    mark_agent_bits(abits, &agents[..k], true);
    for a in 0..k {
        let ag = agents[a];
        if ag & AGENT_ACTIVE == 0 {
            continue;
        }
        planes.fill(0);
        let (hp, rest) = planes.split_at_mut(p64);
        let (ap, gp) = rest.split_at_mut(p64);
        let start = (ag & POS_MASK) as usize - r * mw - r;
        for i in 0..win {
            let mut x = 0;
            while x < win {
                let n = (win - x).min(56);
                let m = (1u64 << n) - 1;
                let at = start + i * mw + x;
                put_bits(hp, i * win + x, bits_at(hbits, at) & m, n);
                put_bits(ap, i * win + x, bits_at(abits, at) & m, n);
                x += n;
            }
        }
        let own = r * win + r;
        ap[own / 64] &= !(1u64 << (own % 64));
        let at = maps.goal_place((ag & POS_MASK) as usize, ctx.maps.goals[p * ctx.k_max + a], r);
        gp[at / 64] |= 1 << (at % 64);
        let o = &mut obs[a * ctx.stride..(a + 1) * ctx.stride];
        for (c, plane) in [&*hp, &*ap, &*gp].into_iter().enumerate() {
            for (d, w) in o[c * pb..(c + 1) * pb].chunks_mut(8).zip(plane) {
                d.copy_from_slice(&w.to_le_bytes()[..d.len()]);
            }
        }
    }
    mark_agent_bits(abits, &agents[..k], false);
}

/// ORs the `n` (at most 56) low bits of `v` into a bit string of `u64` words at bit `at`.
#[inline(always)]
fn put_bits(words: &mut [u64], at: usize, v: u64, n: usize) {
    let (w, s) = (at / 64, at % 64);
    words[w] |= v << s;
    if s + n > 64 {
        words[w + 1] |= v >> (64 - s);
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

/// Observations for window widths `W` of 3 to 15 (stride `S`): every window row is one
/// unaligned copy of 8 bytes (16 for `W` over 8) from a padded map. The rows are written
/// in order, so the bytes each copy writes past its row are overwritten by the next row or
/// plane, and the goal plane, written last, runs to the end of the stride.
#[inline(always)]
pub(super) fn observe_rows<const W: usize, const S: usize>(
    ctx: Ctx<'_>,
    env: &[u32; 4],
    agents: &[u32],
    obs: &mut [u8],
    amap: &mut Vec<u8>,
    marked: bool,
) {
    const { assert!(W >= 3 && W <= 15 && S >= 3 * W * W) };
    // Bytes per row copy: a copy runs at most 16 - 9 = 7 cells past a window's row, which the
    // padded width (at least 8) or the map's spare row holds; the agents plane's last copy ends
    // at W² + (W - 1)·W + 16, inside the stride.
    let c = if W <= 8 { 8 } else { 16 };
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
        // window has `c` bytes to copy.
        // (`mw` is below 2^16, so the row offsets cannot overflow and the one length test per
        // plane covers every row.)
        let span = (W - 1) * mw + c;
        let (hrows, arows) = (&hmap[start..start + span], &amap[start..start + span]);
        for i in 0..W {
            o[i * W..i * W + c].copy_from_slice(&hrows[i * mw..i * mw + c]);
        }
        for i in 0..W {
            o[plane + i * W..plane + i * W + c].copy_from_slice(&arows[i * mw..i * mw + c]);
        }
        o[2 * plane..].fill(0);
        o[plane + r * W + r] = 0;
        o[2 * plane + maps.goal_place((ag & POS_MASK) as usize, goal, r)] = 1;
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
        o[2 * plane + maps.goal_place((ag & POS_MASK) as usize, ctx.maps.goals[p * ctx.k_max + a], r)] = 1;
    }
    clear_agents(amap, &agents[..k], hmap.len());
}
