//! Built-in floe plugins. Placeholder until the plugin ABI lands.

pub use floe_plugin_api as api;
