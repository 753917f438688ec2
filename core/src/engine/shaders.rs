//! The WGSL sources of the GPU backend and the host side of their shared layout. Always
//! compiled (without the `gpu` feature too), so that naga can validate every kernel in tests.

use bytemuck::{Pod, Zeroable};

use super::config::obs_stride;

/// Invocations per workgroup of every kernel (the WGSL sources receive it as `WG`).
pub const WORKGROUP_SIZE: u32 = 64;
/// Most agents per environment on the GPU (private arrays in the kernels have this size).
pub const GPU_MAX_AGENTS: usize = 64;
/// Largest observation radius on the GPU.
pub const GPU_MAX_RADIUS: u32 = 7;
pub(crate) const MAX_OBS_WORDS: usize = obs_stride(GPU_MAX_RADIUS) / 4;
/// Words of per-environment status the step kernel writes: flags, steps, outcome, failure kind,
/// failure agent, the pool slot of the episode (the one that ended, if it did), its return's
/// bits, agents on their goals, and the running episode's return's bits (the kernels receive it
/// as `STATUS_WORDS`).
pub const STATUS_WORDS: u32 = 9;

/// The WGSL sources.
pub mod wgsl {
    use crate::engine::levels::ALIAS_ONE;
    use crate::engine::records::{event, outcome, NONE};
    use crate::failure::FailureKind;
    use crate::words::{AGENT_ACTIVE, AGENT_ARRIVED, POS_MASK};

    pub const COMMON: &str = include_str!("../../../shaders/common.wgsl");
    /// The cell table of the step and verification kernels (their sources begin with it).
    pub const CELLS: &str = include_str!("../../../shaders/cells.wgsl");
    pub const STEP: &str =
        concat!(include_str!("../../../shaders/cells.wgsl"), include_str!("../../../shaders/step.wgsl"));
    pub const OBSERVE: &str = include_str!("../../../shaders/observe.wgsl");
    pub const VERIFY: &str =
        concat!(include_str!("../../../shaders/cells.wgsl"), include_str!("../../../shaders/verify.wgsl"));

    /// A kernel's full source for at most `max_agents` agents per environment (the size of its
    /// private per-agent arrays and of the cell table, [`cell_table_size`]) and observations of
    /// `obs_words` words: the constants the host defines, the common part, the kernel. Sizing the
    /// arrays to the pool keeps them small on GPUs, where private arrays that do not fit in
    /// registers spill to slow memory.
    #[must_use]
    pub fn source(kernel: &str, max_agents: usize, obs_words: usize) -> String {
        let max_k = max_agents.clamp(1, super::GPU_MAX_AGENTS);
        let table = cell_table_size(max_k);
        format!(
            "const WG: u32 = {}u;\nconst MAX_K: u32 = {max_k}u;\nconst MAX_OBS_WORDS: u32 = {}u;\n\
             const TABLE: u32 = {table}u;\nconst TABLE_SHIFT: u32 = {}u;\n{}{COMMON}\n{kernel}",
            super::WORKGROUP_SIZE,
            obs_words.clamp(1, super::MAX_OBS_WORDS),
            32 - table.trailing_zeros(),
            prelude()
        )
    }

    /// The observation kernel's full source ([`source`] of [`OBSERVE`]) for pools whose largest
    /// side is `max_side`, with the bitmaps of agents in workgroup memory that
    /// [`occupancy_map`] sizes (`OCC_WORDS`, `OCC_SLOTS`).
    #[must_use]
    pub fn observe_source(max_agents: usize, obs_words: usize, max_side: u32) -> String {
        let (envs, words) = occupancy_map(max_agents, max_side);
        format!(
            "const OCC_WORDS: u32 = {words}u;\nconst OCC_SLOTS: u32 = {}u;\n{}",
            (envs * words).max(1),
            source(OBSERVE, max_agents, obs_words)
        )
    }

    /// The observation kernel's bitmaps of agents: (environments a workgroup covers, words a
    /// bitmap), one bit per cell of the pool's largest grid. (1, 0), no bitmaps, with fewer than
    /// [`OCCUPANCY_MIN_AGENTS`] agents per environment or when they would take more than
    /// [`OCCUPANCY_BYTES`] of workgroup memory; the kernel then looks at every agent instead.
    #[must_use]
    pub fn occupancy_map(max_agents: usize, max_side: u32) -> (u32, u32) {
        let k = max_agents.clamp(1, super::GPU_MAX_AGENTS) as u32;
        // Invocations [64w, 64w + 64) cover at most (64 + k - 2) / k + 1 environments.
        let envs = (super::WORKGROUP_SIZE + k - 2) / k + 1;
        let words = (max_side * max_side).div_ceil(32);
        if (k as usize) < OCCUPANCY_MIN_AGENTS || u64::from(envs) * u64::from(words) * 4 > OCCUPANCY_BYTES {
            (1, 0)
        } else {
            (envs, words)
        }
    }

    /// The fewest agents per environment for which the observation kernel builds bitmaps: with
    /// fewer, looking at each agent costs less than clearing the bitmaps and the two barriers
    /// (on lavapipe, 4 agents per environment ran 20–30 % slower with them).
    pub const OCCUPANCY_MIN_AGENTS: usize = 16;

    /// The most workgroup memory the observation kernel's bitmaps take (half of the 16 KiB
    /// every adapter offers).
    pub const OCCUPANCY_BYTES: u64 = 8192;

    /// Slots of the cell table (`shaders/cells.wgsl`) for `max_agents` agents: a power of two,
    /// at least four times the agents (a step puts at most two cells per agent in it, so it is
    /// at most half full), and at least 4.
    #[must_use]
    pub fn cell_table_size(max_agents: usize) -> u32 {
        (4 * max_agents as u32).next_power_of_two().max(4)
    }

    /// The codes the kernels share with the host, each a `u32` constant rendered from its Rust
    /// definition: [`shared_constants`].
    #[must_use]
    pub fn prelude() -> String {
        shared_constants().iter().map(|(name, v)| format!("const {name}: u32 = {v}u;\n")).collect()
    }

    /// The WGSL name and value of every code the kernels share with the host: the agent word's
    /// bits, [`NONE`], the status words ([`super::STATUS_WORDS`]), the alias table's unit
    /// ([`ALIAS_ONE`]), the [`event`] flags (`EV_`), the [`outcome`] codes (`OUT_`) and the
    /// [`FailureKind`] codes (`KIND_` and the kind's name in capitals).
    #[must_use]
    pub fn shared_constants() -> Vec<(String, u32)> {
        let mut out = vec![
            ("AGENT_ACTIVE".to_string(), AGENT_ACTIVE),
            ("AGENT_ARRIVED".to_string(), AGENT_ARRIVED),
            ("POS_MASK".to_string(), POS_MASK),
            ("NONE".to_string(), NONE),
            ("STATUS_WORDS".to_string(), super::STATUS_WORDS),
            ("ALIAS_ONE".to_string(), ALIAS_ONE),
        ];
        out.extend(event::NAMED.iter().map(|(n, v)| (format!("EV_{n}"), *v)));
        out.extend(outcome::NAMED.iter().map(|(n, v)| (format!("OUT_{n}"), *v)));
        out.extend(
            FailureKind::ALL.iter().map(|k| (format!("KIND_{}", k.name().to_ascii_uppercase()), *k as u32)),
        );
        out
    }
}

/// The uniform block of every kernel (`Params` in `shaders/common.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct Params {
    pub num_envs: u32,
    pub k_max: u32,
    pub words: u32,
    pub pool_len: u32,
    pub off_starts: u32,
    pub off_goals: u32,
    pub off_holes: u32,
    pub stride_words: u32,
    pub mode: u32,
    pub hole_block: u32,
    pub episode_limit: u32,
    pub radius: u32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub random_actions: u32,
    pub num_plans: u32,
    pub w_reach: f32,
    pub w_step: f32,
    pub w_blocked: f32,
    pub w_off: f32,
    pub w_hole: f32,
    pub w_conflict: f32,
    pub plan_len: u32,
    pub off_moves: u32,
    pub plan_k: u32,
    pub off_opt: u32,
    /// 1 for the `bits` observation format, 0 for `bytes` (`none` runs no observation kernel).
    pub obs_bits: u32,
    /// `bits` format: `u32` words of one plane.
    pub plane_words: u32,
    /// 1 when the level draw follows the sampling weights' alias table (at `off_alias` in the
    /// pool buffer), 0 for the unweighted draw ([`crate::engine::levels`]).
    pub weighted: u32,
    pub off_alias: u32,
    /// 1 when the observation kernel writes no final observations (a refill's observation
    /// pass, which must leave the last step's as they are).
    pub skip_final: u32,
    pub pad1: u32,
}

#[cfg(test)]
mod tests {
    use super::{wgsl, Params};

    fn module(kernel: &str) -> naga::Module {
        module_for(kernel, super::GPU_MAX_AGENTS)
    }

    fn module_for(kernel: &str, max_agents: usize) -> naga::Module {
        let src = if kernel == wgsl::OBSERVE {
            wgsl::observe_source(max_agents, super::MAX_OBS_WORDS, 16)
        } else {
            wgsl::source(kernel, max_agents, super::MAX_OBS_WORDS)
        };
        parse(&src)
    }

    fn parse(src: &str) -> naga::Module {
        let src = src.to_string();
        let module =
            naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
        module
    }

    #[test]
    fn every_kernel_validates() {
        for (name, kernel, entries) in [
            ("step", wgsl::STEP, &["step", "reset"][..]),
            ("observe", wgsl::OBSERVE, &["observe"][..]),
            ("verify", wgsl::VERIFY, &["verify"][..]),
        ] {
            let m = module(kernel);
            let found: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
            for e in entries {
                assert!(found.contains(e), "{name}: entry point {e} missing in {found:?}");
            }
        }
    }

    /// The kernels validate for every size of their per-agent arrays and cell table, and the
    /// table has room for two cells per agent at most half full.
    #[test]
    fn every_kernel_validates_for_every_agent_count() {
        for k in [1, 2, 3, 4, 5, 17, 63, super::GPU_MAX_AGENTS] {
            for kernel in [wgsl::STEP, wgsl::VERIFY, wgsl::OBSERVE] {
                module_for(kernel, k);
            }
            // Bitmaps of agents in workgroup memory, or none when they would not fit.
            for side in [1, 16, 64, 181, 4095] {
                let (envs, words) = wgsl::occupancy_map(k, side);
                assert!(u64::from(envs * words) * 4 <= wgsl::OCCUPANCY_BYTES, "{k} agents, side {side}");
                assert!(
                    words == 0 || u64::from(words) * 32 >= u64::from(side * side),
                    "{k} agents, side {side}"
                );
                parse(&wgsl::observe_source(k, super::MAX_OBS_WORDS, side));
            }
            let table = wgsl::cell_table_size(k) as usize;
            assert!(table.is_power_of_two() && table >= 4 * k, "{k} agents: {table} slots");
        }
    }

    /// Every shared code reaches the kernels with its Rust value, and no kernel defines one of
    /// its own: a code changed in Rust changes in WGSL, and a code written by hand in a kernel
    /// fails here.
    #[test]
    fn the_kernels_codes_are_the_rust_constants() {
        let shared = wgsl::shared_constants();
        let prefixes = ["EV_", "OUT_", "KIND_"];
        for kernel in [wgsl::COMMON, wgsl::CELLS, wgsl::STEP, wgsl::OBSERVE, wgsl::VERIFY] {
            for (name, _) in &shared {
                assert!(!kernel.contains(&format!("const {name}:")), "{name} is written by hand in a kernel");
            }
            for line in kernel.lines().map(str::trim_start) {
                if let Some(rest) = line.strip_prefix("const ") {
                    assert!(!prefixes.iter().any(|p| rest.starts_with(p)), "a code written by hand: {line}");
                }
            }
        }
        for kernel in [wgsl::STEP, wgsl::OBSERVE, wgsl::VERIFY] {
            let m = module(kernel);
            for (name, value) in &shared {
                let Some((_, c)) = m.constants.iter().find(|(_, c)| c.name.as_deref() == Some(name)) else {
                    panic!("{name} is missing from the kernel's source");
                };
                assert_eq!(
                    m.global_expressions[c.init],
                    naga::Expression::Literal(naga::Literal::U32(*value)),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn the_params_struct_has_the_same_layout_in_wgsl_and_rust() {
        macro_rules! offsets {
            ($($f:ident),*) => { vec![$((stringify!($f), std::mem::offset_of!(Params, $f) as u32)),*] };
        }
        let rust = offsets!(
            num_envs,
            k_max,
            words,
            pool_len,
            off_starts,
            off_goals,
            off_holes,
            stride_words,
            mode,
            hole_block,
            episode_limit,
            radius,
            seed_lo,
            seed_hi,
            random_actions,
            num_plans,
            w_reach,
            w_step,
            w_blocked,
            w_off,
            w_hole,
            w_conflict,
            plan_len,
            off_moves,
            plan_k,
            off_opt,
            obs_bits,
            plane_words,
            weighted,
            off_alias,
            skip_final,
            pad1
        );
        let m = module(wgsl::STEP);
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(m.to_ctx()).expect("layout");
        let (handle, ty) = m.types.iter().find(|(_, t)| t.name.as_deref() == Some("Params")).expect("Params");
        let naga::TypeInner::Struct { members, .. } = &ty.inner else { panic!("Params is a struct") };
        let wgsl: Vec<(&str, u32)> =
            members.iter().map(|m| (m.name.as_deref().unwrap_or(""), m.offset)).collect();
        assert_eq!(wgsl, rust);
        assert_eq!(layouter[handle].size as usize, std::mem::size_of::<Params>());
    }
}
