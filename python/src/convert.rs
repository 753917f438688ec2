//! Values between Python and Rust: a JSON-able Python value as JSON text or as a serde type, a
//! serde value as Python objects, and the two readers of settings files every command shares.

use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{Map, Value};

use crate::errors::config_text;

/// A serde value as Python objects (dicts, lists, numbers, strings, `None`).
pub(crate) fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (value.to_string(),))
}

/// A Python value as JSON text: a `str` as it is (JSON text already), anything else through
/// `json.dumps`.
pub(crate) fn py_to_json(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = value.cast::<PyString>() {
        return s.extract::<String>();
    }
    value.py().import("json")?.call_method1("dumps", (value,))?.extract()
}

/// A Python value read as `T`, or `floe.ConfigError` naming `what`.
pub(crate) fn from_py<T: serde::de::DeserializeOwned>(what: &str, value: &Bound<'_, PyAny>) -> PyResult<T> {
    serde_json::from_str(&py_to_json(value)?).map_err(|e| config_text(format!("{what}: {e}")))
}

/// A file's text, or `floe.ConfigError` naming it.
pub(crate) fn read_text(path: &str) -> PyResult<String> {
    std::fs::read_to_string(path).map_err(|e| config_text(format!("{path}: {e}")))
}

/// A JSON object, or `what` refused.
pub(crate) fn object(v: Value, what: impl FnOnce() -> String) -> PyResult<Map<String, Value>> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        _ => Err(config_text(what())),
    }
}
