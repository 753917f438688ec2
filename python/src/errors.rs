//! floe's errors as Python exceptions: one class per kind of failure, all under `floe.FloeError`,
//! each carrying the Rust message unchanged. The classes of values floe refuses are Python's
//! `ValueError` too (`BadInput`, `ConfigError` and its `UnknownPlugin`, `BadOutput`), so that
//! code written for any library's bad values catches them.

use floe_core::engine::{EngineError, OpenError};
use floe_levels::LevelsError;
use floe_plugin_api::{ConfigError as ApiConfigError, PluginError};
use floe_plugin_registry::RegistryError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(floe, FloeError, PyException, "Every error floe raises.");
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

/// A class of `floe` that is a `ValueError` besides a floe class: PyO3's exception macro takes
/// one base, so it is made on first use by `type(name, (*bases, ValueError), namespace)`, with
/// `floe` as its module (so that its errors pickle, as Ray and multiprocessing pickle them).
struct ValueClass {
    name: &'static str,
    doc: &'static str,
    /// Its floe bases.
    bases: for<'py> fn(Python<'py>) -> PyResult<Vec<Bound<'py, PyType>>>,
    class: PyOnceLock<Py<PyType>>,
}

impl ValueClass {
    /// The class, made on the first call.
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyType>> {
        let class = self.class.get_or_try_init(py, || -> PyResult<Py<PyType>> {
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "floe")?;
            namespace.set_item("__doc__", self.doc)?;
            let mut bases = (self.bases)(py)?;
            bases.push(py.get_type::<PyValueError>());
            let made = py.get_type::<PyType>().call1((self.name, PyTuple::new(py, bases)?, namespace))?;
            Ok(made.cast_into::<PyType>()?.unbind())
        })?;
        Ok(class.bind(py).clone())
    }

    /// An error of this class with `message`.
    fn err(&self, message: String) -> PyErr {
        Python::attach(|py| match self.get(py) {
            Ok(class) => PyErr::from_type(class, message),
            Err(e) => e,
        })
    }
}

static BAD_INPUT: ValueClass = ValueClass {
    name: "BadInput",
    doc: "Input floe refuses: an instance, plan, setting or array that is malformed or out of range \
          (a ValueError too).",
    bases: |py| Ok(vec![py.get_type::<FloeError>()]),
    class: PyOnceLock::new(),
};

static CONFIG_ERROR: ValueClass = ValueClass {
    name: "ConfigError",
    doc: "A configuration, history or plugin parameter that does not validate (a ValueError too).",
    bases: |py| Ok(vec![py.get_type::<FloeError>()]),
    class: PyOnceLock::new(),
};

static UNKNOWN_PLUGIN: ValueClass = ValueClass {
    name: "UnknownPlugin",
    doc: "A plugin name that the built-ins (or the named library) do not have: C's \
          FLOE_STATUS_UNKNOWN_PLUGIN. A ConfigError (and a ValueError) too.",
    bases: |py| Ok(vec![CONFIG_ERROR.get(py)?]),
    class: PyOnceLock::new(),
};

static BAD_OUTPUT: ValueClass = ValueClass {
    name: "BadOutput",
    doc: "A plugin's answer that floe's checks refuse, naming the value (a level sampler's weights \
          or refill slots, a reward that is not finite): C's FLOE_STATUS_BAD_OUTPUT. A \
          PluginFailed (and a ValueError) too.",
    bases: |py| Ok(vec![py.get_type::<PluginFailed>()]),
    class: PyOnceLock::new(),
};

/// The module's error classes, registered under these names.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FloeError", py.get_type::<FloeError>())?;
    m.add("BadInput", BAD_INPUT.get(py)?)?;
    m.add("ConfigError", CONFIG_ERROR.get(py)?)?;
    m.add("UnknownPlugin", UNKNOWN_PLUGIN.get(py)?)?;
    m.add("PluginFailed", py.get_type::<PluginFailed>())?;
    m.add("BadOutput", BAD_OUTPUT.get(py)?)?;
    m.add("EngineFailed", py.get_type::<EngineFailed>())?;
    m.add("Failed", py.get_type::<Failed>())?;
    m.add("TooLarge", py.get_type::<TooLarge>())?;
    Ok(())
}

pub fn bad_input(message: impl Into<String>) -> PyErr {
    BAD_INPUT.err(message.into())
}

pub fn failed(message: impl Into<String>) -> PyErr {
    Failed::new_err(message.into())
}

pub fn config(e: ApiConfigError) -> PyErr {
    CONFIG_ERROR.err(e.to_string())
}

pub fn engine(e: EngineError) -> PyErr {
    match e {
        EngineError::Gpu(_) => EngineFailed::new_err(e.to_string()),
        EngineError::StepReward(_) => PluginFailed::new_err(e.to_string()),
        EngineError::TooLarge(t) => too_large(t),
        other => BAD_INPUT.err(other.to_string()),
    }
}

pub fn too_large(e: floe_core::TooLarge) -> PyErr {
    TooLarge::new_err(e.to_string())
}

pub fn plugin(e: PluginError) -> PyErr {
    match e {
        PluginError::BadInput(_) => BAD_INPUT.err(e.to_string()),
        PluginError::Config(_) => CONFIG_ERROR.err(e.to_string()),
        PluginError::UnknownPlugin(_) => UNKNOWN_PLUGIN.err(e.to_string()),
        PluginError::BadOutput(_) => BAD_OUTPUT.err(e.to_string()),
        other => PluginFailed::new_err(other.to_string()),
    }
}

/// A level-sampling error as the class of its kind (C's statuses for the same mistakes, in
/// `ffi/src/levels.rs`): the sampler's own error by [`plugin`]'s classes (`BadInput` for scores or
/// episodes it was not given right, `BadOutput` for a plan the checks refuse, `PluginFailed` for
/// a sampler that failed or panicked), with the sampler's name; the engine's as [`engine`] maps
/// them; `Failed` for levels that cannot be generated; `ConfigError` for settings out of range
/// and new levels the pool has no room for.
pub fn levels(e: LevelsError) -> PyErr {
    match e {
        LevelsError::Sampler { ref source, .. } => match source {
            PluginError::BadInput(_) => BAD_INPUT.err(e.to_string()),
            PluginError::BadOutput(_) => BAD_OUTPUT.err(e.to_string()),
            PluginError::Config(_) => CONFIG_ERROR.err(e.to_string()),
            PluginError::UnknownPlugin(_) => UNKNOWN_PLUGIN.err(e.to_string()),
            _ => PluginFailed::new_err(e.to_string()),
        },
        LevelsError::Input(_) | LevelsError::OtherEngine { .. } | LevelsError::State(_) => {
            BAD_INPUT.err(e.to_string())
        }
        LevelsError::Engine(e) => engine(e),
        LevelsError::Generate(_) => failed(e.to_string()),
        LevelsError::TooLarge(t) => too_large(t),
        other => config_text(other.to_string()),
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
    if let RegistryError::Levels(e) = e {
        return levels(e);
    }
    match &e {
        RegistryError::Plugin { source: PluginError::Config(_), .. } => CONFIG_ERROR.err(e.to_string()),
        RegistryError::Plugin { source: PluginError::UnknownPlugin(_), .. } => {
            UNKNOWN_PLUGIN.err(e.to_string())
        }
        RegistryError::StepOnlyReward { .. } | RegistryError::PlanOnlyReward { .. } => {
            CONFIG_ERROR.err(e.to_string())
        }
        _ => PluginFailed::new_err(e.to_string()),
    }
}

pub fn config_text(message: impl Into<String>) -> PyErr {
    CONFIG_ERROR.err(message.into())
}

/// A Python exception inside floe-rounds' driver (a trainee's, a model engineer's), kept whole
/// to be raised again.
#[derive(Debug)]
pub(crate) struct Raised(pub(crate) PyErr);

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for Raised {}

/// A Python exception as the driver's error ([`Raised`] inside it).
pub(crate) fn raised(e: PyErr) -> floe_rounds::RoundsError {
    floe_rounds::RoundsError::Trainee(Box::new(Raised(e)))
}

/// The protocol's error as a Python exception: a Python exception it carries as it was raised,
/// bad settings as `floe.ConfigError`, a plugin's as its own.
pub(crate) fn rounds(e: floe_rounds::RoundsError) -> PyErr {
    use floe_rounds::RoundsError as R;
    match e {
        R::Trainee(inner) => match inner.downcast::<Raised>() {
            Ok(r) => r.0,
            Err(other) => failed(other.to_string()),
        },
        R::Input(m) => config_text(m),
        R::Config(e) => config(e),
        R::Plugin(e) => plugin(e),
        other => failed(other.to_string()),
    }
}

thread_local! {
    /// Whether this thread runs a Python sampler's `update` (inside a sampler's call).
    static IN_UPDATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Refuses a call into a sampler or an engine from a Python sampler's `update`, which runs while
/// both are locked (it would wait for itself).
pub(crate) fn refuse_reentry() -> PyResult<()> {
    if IN_UPDATE.with(std::cell::Cell::get) {
        return Err(bad_input(
            "a Python level sampler's update runs inside the sampler's call: it cannot call a sampler or an engine",
        ));
    }
    Ok(())
}

/// Marks this thread as inside a Python sampler's `update` until dropped.
pub(crate) struct InUpdate;

impl InUpdate {
    pub(crate) fn enter() -> Self {
        IN_UPDATE.with(|f| f.set(true));
        InUpdate
    }
}

impl Drop for InUpdate {
    fn drop(&mut self) {
        IN_UPDATE.with(|f| f.set(false));
    }
}
