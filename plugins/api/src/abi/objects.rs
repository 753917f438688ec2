//! Plugin instances across the abi_stable boundary. Each is an opaque state plus a `'static`
//! table of `extern "C"` functions (a prefix type: fields are only ever appended after the one
//! marked `last_prefix_field`).
//!
//! Both directions live here: `from_box` wraps a plugin inside its library (each table function
//! catches panics and checks its input and the plugin's output), and the trait impls let the
//! host use a loaded instance as a [`RewardFn`], [`Curriculum`] or [`EnvEngineer`] (checking
//! lengths going in and everything coming back).

use abi_stable::prefix_type::WithMetadata;
use abi_stable::std_types::{RResult, RSlice, RSliceMut, RStr, RString, RVec};
use abi_stable::{staticref, DynTrait, StableAbi};

use super::engineer_table::{EngineerVTable, EngineerVTableRef};
use super::{guard, FfiError, FfiState, Holder};
use crate::config::RoundConfig;
use crate::design::{DesignLimits, DesignLimitsRecord, EngineerReply};
use crate::error::PluginError;
use crate::history::History;
use crate::records::{ReplayRecord, ReplayRequest, StepOutcome, VerdictRecord};
use crate::traits::{check_lengths, check_replay, check_rewards, Curriculum, EnvEngineer, RewardFn};

fn holder<T: ?Sized + 'static>(state: &mut FfiState) -> Result<&mut Holder<T>, PluginError> {
    state
        .downcast_as_mut::<Holder<T>>()
        .map_err(|_| PluginError::BadInput("the state belongs to another kind of plugin".into()))
}

// ---------------------------------------------------------------------------------------------
// Reward functions

/// The function table of a reward function.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = RewardVTableRef)))]
pub struct RewardVTable {
    /// Rewards for a batch of verdicts; the output slice has the batch's length.
    pub verdict_rewards:
        extern "C" fn(&mut FfiState, RSlice<'_, VerdictRecord>, RSliceMut<'_, f32>) -> RResult<(), FfiError>,
    /// Rewards for a batch of step outcomes; the output slice has the batch's length.
    #[sabi(last_prefix_field)]
    pub step_rewards:
        extern "C" fn(&mut FfiState, RSlice<'_, StepOutcome>, RSliceMut<'_, f32>) -> RResult<(), FfiError>,
}

/// A reward function instance made by a library.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiRewardFn {
    state: FfiState,
    vtable: RewardVTableRef,
}

extern "C" fn reward_verdicts(
    state: &mut FfiState,
    records: RSlice<'_, VerdictRecord>,
    mut out: RSliceMut<'_, f32>,
) -> RResult<(), FfiError> {
    guard(|| {
        let out = out.as_mut_slice();
        check_lengths(records.len(), out.len())?;
        holder::<dyn RewardFn>(state)?.call(|r| r.verdict_rewards(records.as_slice(), out))?;
        check_rewards(out)
    })
}

extern "C" fn reward_steps(
    state: &mut FfiState,
    steps: RSlice<'_, StepOutcome>,
    mut out: RSliceMut<'_, f32>,
) -> RResult<(), FfiError> {
    guard(|| {
        let out = out.as_mut_slice();
        check_lengths(steps.len(), out.len())?;
        holder::<dyn RewardFn>(state)?.call(|r| r.step_rewards(steps.as_slice(), out))?;
        check_rewards(out)
    })
}

impl FfiRewardFn {
    staticref! {
        const TABLE: WithMetadata<RewardVTable> =
            WithMetadata::new(RewardVTable { verdict_rewards: reward_verdicts, step_rewards: reward_steps });
    }

    /// Wraps a reward function for the boundary.
    #[must_use]
    pub fn from_box(plugin: Box<dyn RewardFn>) -> Self {
        FfiRewardFn {
            state: DynTrait::from_value(Holder::new(plugin)),
            vtable: RewardVTableRef(Self::TABLE.as_prefix()),
        }
    }
}

impl RewardFn for FfiRewardFn {
    fn verdict_rewards(&mut self, records: &[VerdictRecord], out: &mut [f32]) -> Result<(), PluginError> {
        check_lengths(records.len(), out.len())?;
        (self.vtable.verdict_rewards())(&mut self.state, records.into(), out.into()).into_result()?;
        check_rewards(out)
    }

    fn step_rewards(&mut self, steps: &[StepOutcome], out: &mut [f32]) -> Result<(), PluginError> {
        check_lengths(steps.len(), out.len())?;
        (self.vtable.step_rewards())(&mut self.state, steps.into(), out.into()).into_result()?;
        check_rewards(out)
    }
}

impl std::fmt::Debug for FfiRewardFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FfiRewardFn").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for RewardVTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewardVTable").finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------------
// Curricula

/// The function table of a curriculum.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = CurriculumVTableRef)))]
pub struct CurriculumVTable {
    /// History (JSON) in, next configuration (JSON) out.
    pub next_config: extern "C" fn(&mut FfiState, RStr<'_>) -> RResult<RString, FfiError>,
    /// Pool and request in, indices into the pool out.
    #[sabi(last_prefix_field)]
    pub sample_replay:
        extern "C" fn(&mut FfiState, RSlice<'_, ReplayRecord>, ReplayRequest) -> RResult<RVec<u32>, FfiError>,
}

/// A curriculum instance made by a library.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiCurriculum {
    state: FfiState,
    vtable: CurriculumVTableRef,
}

extern "C" fn curriculum_next(state: &mut FfiState, history: RStr<'_>) -> RResult<RString, FfiError> {
    guard(|| {
        let history = History::from_json(history.as_str())
            .map_err(|e| PluginError::BadInput(format!("history: {e}")))?;
        let cfg = holder::<dyn Curriculum>(state)?.call(|c| c.next_config(&history))?;
        cfg.validate().map_err(|e| PluginError::BadOutput(format!("configuration: {e}")))?;
        Ok(cfg.to_json().into())
    })
}

extern "C" fn curriculum_replay(
    state: &mut FfiState,
    pool: RSlice<'_, ReplayRecord>,
    request: ReplayRequest,
) -> RResult<RVec<u32>, FfiError> {
    guard(|| {
        for r in pool.iter() {
            r.check(&request)?;
        }
        let picked = holder::<dyn Curriculum>(state)?.call(|c| c.sample_replay(pool.as_slice(), &request))?;
        check_replay(&picked, pool.len(), &request)?;
        Ok(picked.into())
    })
}

impl FfiCurriculum {
    staticref! {
        const TABLE: WithMetadata<CurriculumVTable> = WithMetadata::new(CurriculumVTable {
            next_config: curriculum_next,
            sample_replay: curriculum_replay,
        });
    }

    /// Wraps a curriculum for the boundary.
    #[must_use]
    pub fn from_box(plugin: Box<dyn Curriculum>) -> Self {
        FfiCurriculum {
            state: DynTrait::from_value(Holder::new(plugin)),
            vtable: CurriculumVTableRef(Self::TABLE.as_prefix()),
        }
    }
}

impl Curriculum for FfiCurriculum {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let json = history.to_json();
        let out = (self.vtable.next_config())(&mut self.state, json.as_str().into()).into_result()?;
        RoundConfig::from_json(out.as_str())
            .map_err(|e| PluginError::BadOutput(format!("configuration: {e}")))
    }

    fn sample_replay(
        &mut self,
        pool: &[ReplayRecord],
        request: &ReplayRequest,
    ) -> Result<Vec<u32>, PluginError> {
        let picked = (self.vtable.sample_replay())(&mut self.state, pool.into(), *request).into_result()?;
        let picked = picked.into_vec();
        check_replay(&picked, pool.len(), request)?;
        Ok(picked)
    }
}

impl std::fmt::Debug for FfiCurriculum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FfiCurriculum").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for CurriculumVTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurriculumVTable").finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------------
// Environment engineers

/// An environment engineer instance made by a library.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiEnvEngineer {
    state: FfiState,
    vtable: EngineerVTableRef,
}

/// The engineer's reply within `limits`, validated, as JSON.
fn design_reply(state: &mut FfiState, context: &str, limits: &DesignLimits) -> Result<RString, PluginError> {
    let reply = holder::<dyn EnvEngineer>(state)?.call(|e| e.design(context, limits))?;
    reply.config.validate().map_err(|e| PluginError::BadOutput(format!("configuration: {e}")))?;
    Ok(reply.to_json().into())
}

extern "C" fn engineer_design(state: &mut FfiState, context: RStr<'_>) -> RResult<RString, FfiError> {
    guard(|| design_reply(state, context.as_str(), &DesignLimits::default()))
}

extern "C" fn engineer_design_with_limits(
    state: &mut FfiState,
    context: RStr<'_>,
    limits: &DesignLimitsRecord<'_>,
) -> RResult<RString, FfiError> {
    guard(|| {
        let limits = DesignLimits::from_record(limits)
            .map_err(|e| PluginError::BadInput(format!("the design limits: {e}")))?;
        design_reply(state, context.as_str(), &limits)
    })
}

impl FfiEnvEngineer {
    staticref! {
        const TABLE: WithMetadata<EngineerVTable> = WithMetadata::new(EngineerVTable {
            design: engineer_design,
            design_with_limits: engineer_design_with_limits,
        });
    }

    /// Wraps an engineer for the boundary.
    #[must_use]
    pub fn from_box(plugin: Box<dyn EnvEngineer>) -> Self {
        FfiEnvEngineer {
            state: DynTrait::from_value(Holder::new(plugin)),
            vtable: EngineerVTableRef(Self::TABLE.as_prefix()),
        }
    }
}

impl EnvEngineer for FfiEnvEngineer {
    fn design(&mut self, context: &str, limits: &DesignLimits) -> Result<EngineerReply, PluginError> {
        // A library built before `design_with_limits` has only `design` (and its defaults).
        let out = match self.vtable.design_with_limits() {
            Some(f) => f(&mut self.state, context.into(), &limits.record()),
            None => (self.vtable.design())(&mut self.state, context.into()),
        }
        .into_result()?;
        EngineerReply::from_json(out.as_str()).map_err(|e| PluginError::BadOutput(format!("reply: {e}")))
    }
}

impl std::fmt::Debug for FfiEnvEngineer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FfiEnvEngineer").finish_non_exhaustive()
    }
}
