//! floe's errors as Python exceptions: one class per kind of failure, all under `floe.FloeError`,
//! each carrying the Rust message unchanged.

use floe_core::engine::{EngineError, OpenError};
use floe_plugin_api::{ConfigError as ApiConfigError, PluginError};
use floe_plugin_registry::RegistryError;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(floe, FloeError, PyException, "Every error floe raises.");
pyo3::create_exception!(
    floe,
    BadInput,
    FloeError,
    "Input floe refuses: an instance, plan, setting or array that is malformed or out of range."
);
pyo3::create_exception!(
    floe,
    ConfigError,
    FloeError,
    "A configuration, history or plugin parameter that does not validate."
);
pyo3::create_exception!(
    floe,
    UnknownPlugin,
    ConfigError,
    "A plugin name that the built-ins (or the named library) do not have: C's FLOE_STATUS_UNKNOWN_PLUGIN. \
     A ConfigError too."
);
pyo3::create_exception!(
    floe,
    PluginFailed,
    FloeError,
    "A plugin that failed to load, panicked, or returned something malformed."
);
pyo3::create_exception!(floe, EngineFailed, FloeError, "The batched engine or its GPU device failed.");
pyo3::create_exception!(
    floe,
    TooLarge,
    FloeError,
    "Memory a call needs that cannot be had (a pool, an engine's state, a batch): the message gives \
     the bytes asked for. C's FLOE_STATUS_TOO_LARGE."
);
pyo3::create_exception!(
    floe,
    Failed,
    FloeError,
    "Work that could not be done: no plan found in the limits, a wait ratio not reached."
);

/// The module's error classes, registered under these names.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FloeError", py.get_type::<FloeError>())?;
    m.add("BadInput", py.get_type::<BadInput>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("UnknownPlugin", py.get_type::<UnknownPlugin>())?;
    m.add("PluginFailed", py.get_type::<PluginFailed>())?;
    m.add("EngineFailed", py.get_type::<EngineFailed>())?;
    m.add("Failed", py.get_type::<Failed>())?;
    m.add("TooLarge", py.get_type::<TooLarge>())?;
    Ok(())
}

pub fn bad_input(message: impl Into<String>) -> PyErr {
    BadInput::new_err(message.into())
}

pub fn failed(message: impl Into<String>) -> PyErr {
    Failed::new_err(message.into())
}

pub fn config(e: ApiConfigError) -> PyErr {
    ConfigError::new_err(e.to_string())
}

pub fn engine(e: EngineError) -> PyErr {
    match e {
        EngineError::Gpu(_) => EngineFailed::new_err(e.to_string()),
        EngineError::StepReward(_) => PluginFailed::new_err(e.to_string()),
        EngineError::TooLarge(t) => too_large(t),
        other => BadInput::new_err(other.to_string()),
    }
}

pub fn too_large(e: floe_core::TooLarge) -> PyErr {
    TooLarge::new_err(e.to_string())
}

pub fn plugin(e: PluginError) -> PyErr {
    match e {
        PluginError::BadInput(_) => BadInput::new_err(e.to_string()),
        PluginError::Config(_) => ConfigError::new_err(e.to_string()),
        PluginError::UnknownPlugin(_) => UnknownPlugin::new_err(e.to_string()),
        other => PluginFailed::new_err(other.to_string()),
    }
}

/// A refusal to open an engine: `ConfigError` for a configuration that does not parse or is out
/// of range (the GPU's limits included), `EngineFailed` when no GPU opens or it is not built.
pub fn open(e: OpenError) -> PyErr {
    match e {
        OpenError::Config(m) => config_text(m),
        OpenError::TooLarge(t) => too_large(t),
        other => EngineFailed::new_err(other.to_string()),
    }
}

/// A registry error as the exception of its kind; an engine that did not open as [`open`] says.
pub fn registry(e: RegistryError) -> PyErr {
    if let RegistryError::Engine(e) = e {
        return open(e);
    }
    match &e {
        RegistryError::Plugin { source: PluginError::Config(_), .. } => ConfigError::new_err(e.to_string()),
        RegistryError::Plugin { source: PluginError::UnknownPlugin(_), .. } => {
            UnknownPlugin::new_err(e.to_string())
        }
        RegistryError::StepOnlyReward { .. } | RegistryError::PlanOnlyReward { .. } => {
            ConfigError::new_err(e.to_string())
        }
        _ => PluginFailed::new_err(e.to_string()),
    }
}

pub fn config_text(message: impl Into<String>) -> PyErr {
    ConfigError::new_err(message.into())
}
