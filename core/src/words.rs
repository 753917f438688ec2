//! The word layout of the engine's and the batched verifier's arrays, shared with the WGSL
//! kernels: an environment's dimensions in one word, positions as packed rows and columns, agent
//! words with an active bit. Crate-private: callers see records ([`crate::engine::EnvRecord`],
//! [`crate::engine::AgentRecord`]), never words.

/// Packs an environment's (width, height, agents) into one word (12, 12 and 8 bits).
#[inline]
#[must_use]
pub(crate) const fn pack_dims(width: u32, height: u32, agents: u32) -> u32 {
    width | (height << 12) | (agents << 24)
}

/// Unpacks [`pack_dims`].
#[inline]
#[must_use]
pub(crate) const fn unpack_dims(d: u32) -> (u32, u32, u32) {
    (d & 0xfff, (d >> 12) & 0xfff, d >> 24)
}

/// Agent words: the packed position ([`pack_rc`]) in the low 24 bits, bit 31 set while the agent
/// is active, bit 30 ([`AGENT_ARRIVED`]) once it has arrived on its goal in the episode.
pub(crate) const AGENT_ACTIVE: u32 = 1 << 31;
/// Set in an agent word once the agent has arrived on its goal in the episode (and been paid
/// for it: `REACHED`, and so `reach_goal`, comes once per agent and episode). A reset clears it.
pub(crate) const AGENT_ARRIVED: u32 = 1 << 30;
/// Mask of the packed position in an agent word.
pub(crate) const POS_MASK: u32 = (1 << 24) - 1;

/// Packs (row, col) as `row << 12 | col`: positions are kept as rows and columns so that a step
/// needs no division.
#[inline]
#[must_use]
pub(crate) const fn pack_rc(row: u32, col: u32) -> u32 {
    (row << 12) | col
}

/// (row, col) of a packed position.
#[inline]
#[must_use]
pub(crate) const fn unpack_rc(rc: u32) -> (u32, u32) {
    ((rc >> 12) & 0xfff, rc & 0xfff)
}
