//! [`PluginSpec`]: which plugin a configuration asks for, as data. Resolving a spec into a
//! plugin (a built-in by name, or a library loaded by path) is `floe-plugin-registry`'s job; the
//! spec lives here, beside the plugin kinds, so that every configuration can name a plugin
//! without depending on the loader: the rounds' reward, curriculum and engineer, and an engine's
//! step reward (the registry's `EngineSpec`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A plugin to use: a built-in (`library` absent) or one from a library loaded by path, with its
/// parameters as a JSON value (`null` for the defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSpec {
    /// The plugin's name (in the built-ins, or in the library).
    pub name: String,
    /// Its parameters; `null` for the defaults.
    #[serde(default)]
    pub params: serde_json::Value,
    /// The library to load it from; absent for a built-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<PathBuf>,
}

impl PluginSpec {
    /// A built-in plugin with its default parameters.
    #[must_use]
    pub fn builtin(name: &str) -> Self {
        PluginSpec { name: name.into(), params: serde_json::Value::Null, library: None }
    }

    /// The parameters as the text a constructor takes: empty for `null`, else the JSON.
    #[must_use]
    pub fn params_text(&self) -> String {
        if self.params.is_null() {
            String::new()
        } else {
            self.params.to_string()
        }
    }
}
