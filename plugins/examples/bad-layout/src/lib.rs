//! A root module with floe's root module name and version but another layout (as a library
//! built against a changed interface would have): the host must refuse it with a layout error.

use abi_stable::library::RootModule;
use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::RString;
use abi_stable::{declare_root_module_statics, package_version_strings, StableAbi};

/// Not floe's `FloePluginLib`: one field, of another type.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = FloePluginLibRef)))]
pub struct FloePluginLib {
    /// A field the host does not expect.
    #[sabi(last_prefix_field)]
    pub plugins: extern "C" fn() -> RString,
}

impl std::fmt::Debug for FloePluginLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FloePluginLib")
    }
}

impl RootModule for FloePluginLibRef {
    declare_root_module_statics! {FloePluginLibRef}
    const BASE_NAME: &'static str = "floe_plugin";
    const NAME: &'static str = "floe_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

extern "C" fn plugins() -> RString {
    RString::from("not a list of plugins")
}

#[abi_stable::export_root_module]
pub fn floe_root_module() -> FloePluginLibRef {
    FloePluginLib { plugins }.leak_into_prefix()
}
