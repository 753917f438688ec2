//! `floe.evaluate` and `floe.cvar`: held-out levels played by a Python policy through
//! floe-levels' evaluation (`floe_levels::eval`), the one `floe levels` measures its PPO with.

use floe_core::engine::{Backend, EngineError};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_to_json;
use crate::errors::{bad_input, engine};
use crate::instances::Instance;

/// What stops an evaluation: the engine's refusal, or the policy's error or bad answer.
enum Stop {
    Engine(EngineError),
    Py(PyErr),
}

impl From<EngineError> for Stop {
    fn from(e: EngineError) -> Self {
        Stop::Engine(e)
    }
}

/// Plays every level of `levels` `plays` times and returns per level `success` (the share of
/// plays that succeeded), `plays`, `successes` and `cost` (the mean sum of costs over the
/// optimum of its successes; NaN where it has none or the level holds no optimum), as numpy
/// arrays in the order of `levels`. `policy(obs)` gets each step's observations, a
/// `(B, K, obs_stride)` uint8 array (B environments at once, K agent slots; padding slots are
/// zero), and returns B·K actions (0 wait, 1 up, 2 down, 3 left, 4 right; any shape). `config`
/// is the engine's configuration as for `floe.Engine` (its `num_envs` is how many plays run at
/// once; the CPU engine, no `step_reward`: nothing here reads a reward); `seed` seeds the
/// engine. Raises `floe.BadInput` for no levels, a GPU backend, a `step_reward`, or actions of
/// the wrong count or outside 0–4 (naming them); the policy's own exception comes through as
/// it was raised.
#[pyfunction]
#[pyo3(signature = (policy, levels, plays=1, *, config=None, seed=0))]
pub fn evaluate<'py>(
    py: Python<'py>,
    policy: &Bound<'py, PyAny>,
    levels: Vec<PyRef<'py, Instance>>,
    plays: u32,
    config: Option<&Bound<'py, PyAny>>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = match config {
        None => floe_plugin_registry::EngineSpec::default(),
        Some(c) => {
            floe_plugin_registry::EngineSpec::from_json_text(&py_to_json(c)?).map_err(crate::errors::open)?
        }
    };
    if spec.engine.backend != Backend::Cpu {
        return Err(bad_input(
            "floe.evaluate plays on the CPU engine: leave config's backend out or \"cpu\"",
        ));
    }
    if spec.step_reward.is_some() {
        return Err(bad_input("floe.evaluate reads no reward: leave config's step_reward out"));
    }
    if levels.is_empty() || plays == 0 {
        return Err(bad_input(format!(
            "floe.evaluate needs levels and plays: {} levels, {plays} plays",
            levels.len()
        )));
    }
    let instances: Vec<floe_core::Instance> = levels.iter().map(|l| l.inner.clone()).collect();
    let numpy = py.import("numpy")?;
    let mut act = |out: &floe_core::engine::StepBuffers, acts: &mut [u8]| -> Result<(), Stop> {
        let envs = out.terminated.len();
        let k = acts.len() / envs.max(1);
        let stride = out.obs.len() / acts.len().max(1);
        let obs = PyArray1::from_slice(py, &out.obs).reshape([envs, k, stride]).map_err(Stop::Py)?;
        let got = policy.call1((obs,)).map_err(Stop::Py)?;
        let flat: Vec<i64> = numpy
            .call_method1("asarray", (got,))
            .and_then(|a| a.call_method0("ravel"))
            .and_then(|a| a.call_method1("astype", ("int64",)))
            .and_then(|a| a.extract())
            .map_err(Stop::Py)?;
        if flat.len() != acts.len() {
            return Err(Stop::Py(bad_input(format!(
                "the policy returned {} actions for {envs} environments × {k} agent slots ({} expected)",
                flat.len(),
                acts.len()
            ))));
        }
        for (slot, (a, &x)) in acts.iter_mut().zip(&flat).enumerate() {
            if !(0..=4).contains(&x) {
                return Err(Stop::Py(bad_input(format!(
                    "the policy's action {x} at slot {slot} is outside 0–4"
                ))));
            }
            *a = x as u8;
        }
        Ok(())
    };
    let results = floe_levels::eval::play(&instances, plays, &spec.engine.config, seed, &mut act).map_err(
        |e| match e {
            Stop::Engine(e) => engine(e),
            Stop::Py(e) => e,
        },
    )?;
    let d = PyDict::new(py);
    let rates: Vec<f64> = results.iter().map(floe_levels::eval::LevelResult::success_rate).collect();
    d.set_item("success", PyArray1::from_vec(py, rates))?;
    d.set_item("plays", PyArray1::from_vec(py, results.iter().map(|r| r.plays).collect()))?;
    d.set_item("successes", PyArray1::from_vec(py, results.iter().map(|r| r.successes).collect()))?;
    let cost: Vec<f64> = results.iter().map(|r| r.cost_ratio().unwrap_or(f64::NAN)).collect();
    d.set_item("cost", PyArray1::from_vec(py, cost))?;
    Ok(d)
}

/// The mean of the worst `alpha` share of `rates` (CVaR of a per-level success rate, as
/// `floe levels` reports it): the rates sorted, the lowest ⌈alpha·n⌉ (at least one) averaged; 0
/// for no rates. Raises `floe.BadInput` for an `alpha` outside (0, 1] or a NaN rate.
#[pyfunction]
pub fn cvar(rates: Vec<f64>, alpha: f64) -> PyResult<f64> {
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(bad_input(format!("cvar: alpha {alpha} is outside (0, 1]")));
    }
    if let Some(i) = rates.iter().position(|r| r.is_nan()) {
        return Err(bad_input(format!("cvar: rate {i} is NaN")));
    }
    Ok(floe_levels::eval::cvar(&rates, alpha))
}
