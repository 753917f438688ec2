//! The function table of an environment engineer. Its field after `last_prefix_field` was
//! appended later; abi_stable's derive reads it, when a library has it, with `unsafe` blocks of
//! its own making, which this module allows (as `root.rs`; nothing here is written with
//! `unsafe`, which a test checks).

#![allow(unsafe_code)]

use abi_stable::std_types::{RResult, RStr, RString};
use abi_stable::StableAbi;

use super::{FfiError, FfiState};
use crate::design::DesignLimitsRecord;

/// The function table of an environment engineer.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = EngineerVTableRef)))]
pub struct EngineerVTable {
    /// Context (text) in, reply `{"config": …, "rationale": …}` (JSON) out; the engineer is
    /// given floe's default design limits. A host built before `design_with_limits` calls this.
    #[sabi(last_prefix_field)]
    pub design: extern "C" fn(&mut FfiState, RStr<'_>) -> RResult<RString, FfiError>,
    /// Appended: as `design`, with the design limits the host clamps the reply into. A plugin
    /// built before it has none, and is called through `design`.
    pub design_with_limits:
        extern "C" fn(&mut FfiState, RStr<'_>, &DesignLimitsRecord<'_>) -> RResult<RString, FfiError>,
}

impl std::fmt::Debug for EngineerVTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineerVTable").finish_non_exhaustive()
    }
}
