//! A level sampler across the abi_stable boundary: its function table and the instance type,
//! both directions (`from_box` inside the library, the [`LevelSampler`] impl in the host). The
//! plan crosses as [`FfiLevelPlan`], its configuration as JSON text; each side checks what it
//! receives.

use abi_stable::prefix_type::WithMetadata;
use abi_stable::std_types::{ROption, RResult, RSlice, RString, RVec};
use abi_stable::{staticref, DynTrait, StableAbi};

use super::{guard, FfiError, FfiState, Holder};
use crate::config::RoundConfig;
use crate::error::PluginError;
use crate::levels::{check_update, EpisodeRecord, LevelPlan, LevelRecord, LevelSampler};

/// A [`LevelPlan`] as it crosses: weights, refill slots, the configuration as JSON.
#[repr(C)]
#[derive(Debug, Clone, StableAbi)]
pub struct FfiLevelPlan {
    /// One weight per slot, or none to keep the weights.
    pub weights: ROption<RVec<f64>>,
    /// Slots to refill.
    pub refill: RVec<u32>,
    /// The generator configuration of the refilled levels, as JSON.
    pub config: ROption<RString>,
}

impl From<LevelPlan> for FfiLevelPlan {
    fn from(p: LevelPlan) -> Self {
        FfiLevelPlan {
            weights: p.weights.map(RVec::from).into(),
            refill: p.refill.into(),
            config: p.config.map(|c| RString::from(c.to_json())).into(),
        }
    }
}

impl FfiLevelPlan {
    /// The plan, its configuration parsed and validated.
    ///
    /// # Errors
    /// [`PluginError::BadOutput`] for a configuration that does not parse or validate.
    pub fn into_plan(self) -> Result<LevelPlan, PluginError> {
        let config = match self.config.into_option() {
            Some(text) => Some(
                RoundConfig::from_json(text.as_str())
                    .map_err(|e| PluginError::BadOutput(format!("the sampler's configuration: {e}")))?,
            ),
            None => None,
        };
        Ok(LevelPlan {
            weights: self.weights.into_option().map(RVec::into_vec),
            refill: self.refill.into_vec(),
            config,
            edits: Vec::new(),
        })
    }
}

/// The function table of a level sampler.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = SamplerVTableRef)))]
pub struct SamplerVTable {
    /// The pool's slots, the ended episodes and the host's scores (or none) in, a plan out.
    #[sabi(last_prefix_field)]
    pub update: extern "C" fn(
        &mut FfiState,
        RSlice<'_, LevelRecord>,
        RSlice<'_, EpisodeRecord>,
        ROption<RSlice<'_, f32>>,
    ) -> RResult<FfiLevelPlan, FfiError>,
}

impl std::fmt::Debug for SamplerVTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplerVTable").finish_non_exhaustive()
    }
}

/// A level sampler instance made by a library.
#[repr(C)]
#[derive(StableAbi)]
pub struct FfiLevelSampler {
    state: FfiState,
    vtable: SamplerVTableRef,
}

extern "C" fn sampler_update(
    state: &mut FfiState,
    levels: RSlice<'_, LevelRecord>,
    episodes: RSlice<'_, EpisodeRecord>,
    scores: ROption<RSlice<'_, f32>>,
) -> RResult<FfiLevelPlan, FfiError> {
    guard(|| {
        let scores = scores.into_option().map(|s| s.as_slice());
        check_update(levels.as_slice(), episodes.as_slice(), scores)?;
        let holder = state
            .downcast_as_mut::<Holder<dyn LevelSampler>>()
            .map_err(|_| PluginError::BadInput("the state belongs to another kind of plugin".into()))?;
        let plan = holder.call(|s| s.update(levels.as_slice(), episodes.as_slice(), scores))?;
        plan.check(levels.len())?;
        if !plan.edits.is_empty() {
            return Err(PluginError::BadOutput(
                "a library's sampler cannot ask for edited levels (ACCEL) yet: the plan that crosses a library \
                 boundary carries weights, refills and a configuration only; use the built-in `accel`"
                    .into(),
            ));
        }
        Ok(plan.into())
    })
}

impl FfiLevelSampler {
    staticref! {
        const TABLE: WithMetadata<SamplerVTable> = WithMetadata::new(SamplerVTable { update: sampler_update });
    }

    /// Wraps a level sampler for the boundary.
    #[must_use]
    pub fn from_box(plugin: Box<dyn LevelSampler>) -> Self {
        FfiLevelSampler {
            state: DynTrait::from_value(Holder::new(plugin)),
            vtable: SamplerVTableRef(Self::TABLE.as_prefix()),
        }
    }
}

impl LevelSampler for FfiLevelSampler {
    fn update(
        &mut self,
        levels: &[LevelRecord],
        episodes: &[EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<LevelPlan, PluginError> {
        check_update(levels, episodes, scores)?;
        let scores: ROption<RSlice<'_, f32>> = scores.map(RSlice::from).into();
        let plan = (self.vtable.update())(&mut self.state, levels.into(), episodes.into(), scores)
            .into_result()?
            .into_plan()?;
        plan.check(levels.len())?;
        Ok(plan)
    }
}

impl std::fmt::Debug for FfiLevelSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FfiLevelSampler").finish_non_exhaustive()
    }
}
