//! The opaque state of a plugin instance.

// abi_stable 0.11's derive writes its `InterfaceType` impl inside a const block, which the
// `non_local_definitions` lint flags; the impl is the derive's, not ours.
#![allow(non_local_definitions)]

use abi_stable::std_types::RBox;
use abi_stable::{DynTrait, StableAbi};

/// The interface of a plugin instance's opaque state: it can be sent between threads.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(impl_InterfaceType(Send))]
pub struct StateInterface;

impl std::fmt::Debug for StateInterface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateInterface")
    }
}

/// A plugin instance's opaque state, dropped by the library that made it.
pub type FfiState = DynTrait<'static, RBox<()>, StateInterface>;
