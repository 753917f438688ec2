//! The functions of the root module, generic over the library's [`PluginLibrary`]: a plugin
//! crate exports its catalog with
//! `#[export_root_module] fn root() -> FloePluginLibRef { root_module::<MyLibrary>() }`.

use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::std_types::{RResult, RStr, RVec};

use super::{guard, FfiCurriculum, FfiEnvEngineer, FfiError, FfiLevelSampler, FfiPluginInfo, FfiRewardFn};
use super::{FloePluginLib, FloePluginLibRef};
use crate::catalog::{self, PluginLibrary};

/// The root module of library `L`, to return from the `#[export_root_module]` function.
#[must_use]
pub fn root_module<L: PluginLibrary>() -> FloePluginLibRef {
    FloePluginLib {
        plugins: plugins::<L>,
        new_reward: new_reward::<L>,
        new_curriculum: new_curriculum::<L>,
        new_engineer: new_engineer::<L>,
        capabilities: capabilities::<L>,
        new_level_sampler: new_level_sampler::<L>,
    }
    .leak_into_prefix()
}

extern "C" fn plugins<L: PluginLibrary>() -> RResult<RVec<FfiPluginInfo>, FfiError> {
    guard(|| Ok(L::catalog().iter().map(|e| FfiPluginInfo::from(e.info())).collect()))
}

extern "C" fn capabilities<L: PluginLibrary>() -> RResult<RVec<u32>, FfiError> {
    guard(|| Ok(L::catalog().iter().map(|e| e.capabilities.bits()).collect()))
}

extern "C" fn new_reward<L: PluginLibrary>(
    name: RStr<'_>,
    params: RStr<'_>,
) -> RResult<FfiRewardFn, FfiError> {
    guard(|| catalog::new_reward(&L::catalog(), name.as_str(), params.as_str()).map(FfiRewardFn::from_box))
}

extern "C" fn new_curriculum<L: PluginLibrary>(
    name: RStr<'_>,
    params: RStr<'_>,
) -> RResult<FfiCurriculum, FfiError> {
    guard(|| {
        catalog::new_curriculum(&L::catalog(), name.as_str(), params.as_str()).map(FfiCurriculum::from_box)
    })
}

extern "C" fn new_engineer<L: PluginLibrary>(
    name: RStr<'_>,
    params: RStr<'_>,
) -> RResult<FfiEnvEngineer, FfiError> {
    guard(|| {
        catalog::new_engineer(&L::catalog(), name.as_str(), params.as_str()).map(FfiEnvEngineer::from_box)
    })
}

extern "C" fn new_level_sampler<L: PluginLibrary>(
    name: RStr<'_>,
    params: RStr<'_>,
) -> RResult<FfiLevelSampler, FfiError> {
    guard(|| {
        catalog::new_level_sampler(&L::catalog(), name.as_str(), params.as_str())
            .map(FfiLevelSampler::from_box)
    })
}
