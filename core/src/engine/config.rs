//! The engine's configuration: how many environments, the collision mode and hole rule, the
//! episode limit, the observation (radius, format, and its sizes) and the reward weights.

use super::records::event;

/// How collisions are handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollisionMode {
    /// The paper's rules: leaving the grid, a hole, a vertex or a swap conflict ends the episode
    /// as a failure (reported like the verifier's first failure); positions stay as they were.
    #[default]
    Strict,
    /// Standard multi-agent RL: a move off the grid is a wait; a move into a hole drops the agent;
    /// agents whose moves would collide stay where they are (see [`super::cpu`] for the exact rule).
    Soft,
}

/// What a move into a hole does in soft mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoleRule {
    /// The agent drops out of the episode (the engine's soft-mode default).
    #[default]
    Drop,
    /// Holes act as walls: the move becomes a wait (the obstacle rule of grid-world MARL
    /// environments such as POGEMA; used to benchmark against them on equal terms).
    Block,
}

/// Reward weights; an agent's reward is the sum of the weights of its events, added in the order
/// of the fields.
///
/// The defaults are strict on purpose (a reward that can be farmed is a defect): a goal is paid
/// once per agent and episode ([`event::REACHED`]), so stepping off a goal and back earns
/// nothing, and leaving the grid costs as much as a hole, so it is never the cheapest way to
/// end an episode. With them a standard PPO learns 2-agent 5×5 boards (docs/engine.md, "Reward
/// defaults, measured").
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardWeights {
    /// On arriving at the goal for the first time in the episode (default +1).
    pub reach_goal: f32,
    /// Each step an active agent ends away from its goal (default −0.0625).
    pub step: f32,
    /// Soft mode: a blocked move (default −0.125).
    pub blocked: f32,
    /// A move off the grid (default −1, as a hole).
    pub off_grid: f32,
    /// A move into a hole (default −1).
    pub hole: f32,
    /// Strict mode: being part of a conflict (default −1).
    pub conflict: f32,
}

impl Default for RewardWeights {
    fn default() -> Self {
        Self { reach_goal: 1.0, step: -0.0625, blocked: -0.125, off_grid: -1.0, hole: -1.0, conflict: -1.0 }
    }
}

impl RewardWeights {
    /// The reward of one agent's events: starting from +0.0, each weight whose event is set is
    /// added, in field order. Written without branches (a weight whose event is not set adds
    /// +0.0, which leaves every sum that can occur here unchanged), so it is the same value the
    /// GPU kernel computes with conditional additions.
    #[inline]
    #[must_use]
    pub fn reward(&self, ev: u32) -> f32 {
        #[inline]
        fn pick(on: bool, w: f32) -> f32 {
            f32::from_bits(w.to_bits() & 0u32.wrapping_sub(u32::from(on)))
        }
        let mut r = 0.0f32;
        r += pick(ev & event::REACHED != 0, self.reach_goal);
        r += pick(ev & (event::AT_GOAL | event::INACTIVE) == 0, self.step);
        r += pick(ev & event::BLOCKED != 0, self.blocked);
        r += pick(ev & event::OFF_GRID != 0, self.off_grid);
        r += pick(ev & event::HOLE != 0, self.hole);
        r += pick(ev & event::CONFLICT != 0, self.conflict);
        r
    }
}

/// Observation channels, in layout order.
pub const OBS_CHANNELS: usize = 3;

/// How an agent's observation is written (the same on every backend).
///
/// With window width `W = 2r + 1` (radius r) and cell `j = dy·W + dx` of a plane (row `dy`,
/// column `dx` of the window, the agent at `j = r·W + r`), planes in the order holes (cells off
/// the grid count as holes), other agents, own goal:
/// - [`ObsFormat::Bytes`]: byte `c·W² + j` of plane `c` is 0 or 1; [`obs_stride`] bytes per agent
///   (3·W² rounded up to a multiple of 4, the padding zero).
/// - [`ObsFormat::Bits`]: each plane is [`obs_plane_words`] little-endian `u32` words, bit
///   `j % 32` of word `c·P + j / 32` (P words a plane, so each plane starts on a word); unused
///   bits are zero. `4·3·P` bytes per agent: 12 at radius 1 and 2, 48 at radius 5.
///   [`unpack_bits`] turns it into exactly the `Bytes` layout.
/// - [`ObsFormat::None`]: no observation (0 bytes per agent; `obs` and `final_obs` are empty),
///   for planners and plan-level training that read the state instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObsFormat {
    /// One byte per cell and channel.
    #[default]
    Bytes,
    /// One bit per cell and channel, each plane's rows packed into `u32` words.
    Bits,
    /// No observation.
    None,
}

impl ObsFormat {
    /// Bytes of one agent's observation at radius `radius`.
    #[must_use]
    pub const fn stride(self, radius: u32) -> usize {
        match self {
            ObsFormat::Bytes => obs_stride(radius),
            ObsFormat::Bits => 4 * OBS_CHANNELS * obs_plane_words(radius),
            ObsFormat::None => 0,
        }
    }

    /// The name used in configurations and on the command line (`bytes`, `bits`, `none`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ObsFormat::Bytes => "bytes",
            ObsFormat::Bits => "bits",
            ObsFormat::None => "none",
        }
    }

    /// The format named `name` (see [`ObsFormat::name`]).
    ///
    /// # Errors
    /// A name that is none of the three.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name {
            "bytes" => Ok(ObsFormat::Bytes),
            "bits" => Ok(ObsFormat::Bits),
            "none" => Ok(ObsFormat::None),
            _ => Err(format!("observation format {name:?} is not one of bytes, bits, none")),
        }
    }
}

/// `u32` words of one plane in the [`ObsFormat::Bits`] layout: ⌈(2r+1)²/32⌉.
#[must_use]
pub const fn obs_plane_words(radius: u32) -> usize {
    let w = (2 * radius + 1) as usize;
    (w * w).div_ceil(32)
}

/// Unpacks observations in the [`ObsFormat::Bits`] layout into the [`ObsFormat::Bytes`] layout:
/// `bits` holds whole agents' observations (a multiple of `ObsFormat::Bits.stride(radius)`
/// bytes), `out` the same number of agents in bytes (`obs_stride(radius)` each, padding
/// written as zero).
///
/// # Errors
/// A radius over [`super::MAX_OBS_RADIUS`], a length that is not a whole number of
/// observations, or an `out` of another agent count.
pub fn unpack_bits(radius: u32, bits: &[u8], out: &mut [u8]) -> Result<(), String> {
    if radius > super::MAX_OBS_RADIUS {
        return Err(format!("observation radius {radius} is over the limit {}", super::MAX_OBS_RADIUS));
    }
    let (bs, ys) = (ObsFormat::Bits.stride(radius), obs_stride(radius));
    if !bits.len().is_multiple_of(bs) {
        return Err(format!(
            "{} bytes of packed observations are not a whole number of {bs}-byte observations (radius {radius})",
            bits.len()
        ));
    }
    let agents = bits.len() / bs;
    if out.len() != agents * ys {
        return Err(format!(
            "{agents} packed observations unpack to {} bytes, and the output has {}",
            agents * ys,
            out.len()
        ));
    }
    let w = (2 * radius + 1) as usize;
    let (plane, pw) = (w * w, obs_plane_words(radius));
    for (src, dst) in bits.chunks_exact(bs).zip(out.chunks_exact_mut(ys)) {
        dst[OBS_CHANNELS * plane..].fill(0);
        for c in 0..OBS_CHANNELS {
            let words = &src[4 * c * pw..4 * (c + 1) * pw];
            for (j, d) in dst[c * plane..(c + 1) * plane].iter_mut().enumerate() {
                *d = (words[j / 8] >> (j % 8)) & 1;
            }
        }
    }
    Ok(())
}

/// Bytes of one agent's local observation: 3 channels of (2r+1)² bytes, padded to a multiple of 4
/// (so that GPU threads write whole words).
#[must_use]
pub const fn obs_stride(radius: u32) -> usize {
    let w = (2 * radius + 1) as usize;
    (OBS_CHANNELS * w * w).div_ceil(4) * 4
}

/// The engine's configuration. In JSON every field is optional (the defaults below) and unknown
/// fields are errors.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvConfig {
    /// Number of environments, B.
    pub num_envs: usize,
    /// Collision rule.
    pub mode: CollisionMode,
    /// Soft mode: what a move into a hole does (strict mode always fails the episode).
    pub holes: HoleRule,
    /// Steps after which an episode is truncated.
    pub episode_limit: u32,
    /// Radius r of the local observation window ((2r+1)² cells per channel).
    pub obs_radius: u32,
    /// How observations are written: `bytes`, `bits` or `none` ([`ObsFormat`]).
    pub obs_format: ObsFormat,
    pub rewards: RewardWeights,
}

impl EnvConfig {
    /// Checks the limits every backend shares (a backend may have tighter ones of its own).
    ///
    /// # Errors
    /// No environments or more than `u32::MAX`, an episode limit of 0, an observation radius over
    /// [`super::MAX_OBS_RADIUS`], or a reward weight that is not finite.
    pub fn validate(&self) -> Result<(), super::EngineError> {
        let bad = |m: String| Err(super::EngineError::Invalid(m));
        if self.num_envs == 0 || self.num_envs > u32::MAX as usize {
            return bad(format!("num_envs {} is out of range 1..=4294967295", self.num_envs));
        }
        if self.episode_limit == 0 {
            return bad("episode_limit must be at least 1".into());
        }
        if self.obs_radius > super::MAX_OBS_RADIUS {
            return bad(format!(
                "observation radius {} is over the limit {}",
                self.obs_radius,
                super::MAX_OBS_RADIUS
            ));
        }
        let r = self.rewards;
        for (name, w) in [
            ("reach_goal", r.reach_goal),
            ("step", r.step),
            ("blocked", r.blocked),
            ("off_grid", r.off_grid),
            ("hole", r.hole),
            ("conflict", r.conflict),
        ] {
            if !w.is_finite() {
                return bad(format!("reward weight {name} is {w}, not a finite number"));
            }
        }
        Ok(())
    }
}

impl Default for EnvConfig {
    fn default() -> Self {
        Self {
            num_envs: 1024,
            mode: CollisionMode::Strict,
            holes: HoleRule::Drop,
            episode_limit: 64,
            obs_radius: 2,
            obs_format: ObsFormat::Bytes,
            rewards: RewardWeights::default(),
        }
    }
}
