//! `floe._floe.Engine`: the batched engine with its outputs in numpy arrays that it owns and
//! lends out. A step borrows those arrays mutably (rust-numpy's runtime borrow check) and hands
//! them to [`Engine::step`] as a [`StepBuffersMut`], so the engine writes straight into the
//! memory Python reads: no copy per step. Level sampling writes into the same arrays: the pool's
//! weights and refills (`set_weights`, `refill`, `apply`) and `floe.Levels`' calls, which
//! borrow them the same way ([`Engine::with_buffers`]). The Gymnasium and PettingZoo classes
//! (`floe.VectorEnv`, `floe.Env`, `floe.ParallelEnv`) are Python wrappers over it.

use std::sync::{Arc, Mutex};

use floe_core::engine::{
    unpack_bits as unpack, BufferSizes, Engine as CoreEngine, EnvInfo, InstancePool, ObsFormat, Optima,
    StepBuffersMut,
};
use floe_core::pool::Room;
use floe_levels::Levels;
use floe_plugin_registry::{open_engine, EngineSpec};
use numpy::{
    AllowTypeChange, PyArray1, PyArrayDyn, PyArrayLike1, PyArrayMethods, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_to_json;
use crate::errors::{bad_input, engine};
use crate::instances::Instance;
use crate::records::{applied_dict, records_array, LevelDecision, INFO_WORDS};

/// The engine's spec from a dict or JSON text: `backend` ("cpu" or "gpu"), the fields of
/// floe's `EnvConfig` (`num_envs`, `mode`, `holes`, `episode_limit`, `obs_radius`,
/// `obs_format`, `rewards`) and `step_reward` (a reward plugin that scores every step, `{"name":
/// ..., "params": ..., "library": ...}`), all optional; unknown fields are errors.
fn parse_spec(config: Option<&Bound<'_, PyAny>>) -> PyResult<EngineSpec> {
    match config {
        None => Ok(EngineSpec::default()),
        Some(c) => EngineSpec::from_json_text(&py_to_json(c)?).map_err(crate::errors::open),
    }
}

type Bytes = Py<PyArrayDyn<u8>>;

/// A batch of `num_envs` environments playing `instances`, on the CPU or the GPU, stepped with
/// the same-step auto-reset (see floe's engine docs). Its output arrays are fixed for its life:
/// `obs` and `final_obs` `(B, K, obs_stride)` uint8, `rewards` `(B, K)` float32, `events`
/// `(B, K)` uint32, `terminated` and `truncated` `(B,)` uint8, `info` `(B, 8)` uint32, one row
/// per environment in the order of `floe.INFO_FIELDS` (episode steps, outcome, failure kind,
/// failure agent, pool slot, the slot's generation, the episode's return as float32 bits, agents
/// on their goals: `info.view(numpy.float32)[:, 6]` reads the returns, and `floe.info_columns`
/// names every column, without a copy). Each call overwrites them in place.
#[pyclass(module = "floe._floe", frozen)]
pub struct Engine {
    inner: Mutex<Box<dyn CoreEngine>>,
    sizes: BufferSizes,
    spec: EngineSpec,
    backend: String,
    pool_len: usize,
    obs: Bytes,
    final_obs: Bytes,
    rewards: Py<PyArrayDyn<f32>>,
    events: Py<PyArrayDyn<u32>>,
    terminated: Bytes,
    truncated: Bytes,
    info: Py<PyArrayDyn<u32>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("backend", &self.backend)
            .field("sizes", &self.sizes)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `pool` with the configuration `config` (a dict or JSON text; `None`: the
    /// defaults): what `Engine(...)` and `Levels.restored_engine` make.
    pub(crate) fn with_pool(
        py: Python<'_>,
        config: Option<&Bound<'_, PyAny>>,
        pool: InstancePool,
    ) -> PyResult<Self> {
        let spec = parse_spec(config)?;
        let pool_len = pool.len();
        let inner = open_engine(&spec, Arc::new(pool)).map_err(crate::errors::registry)?;
        let sizes = inner.sizes();
        let (b, k, s) = (sizes.num_envs, sizes.max_agents, sizes.obs_stride);
        Ok(Self {
            backend: inner.backend(),
            inner: Mutex::new(inner),
            sizes,
            spec,
            pool_len,
            obs: PyArrayDyn::zeros(py, vec![b, k, s], false).unbind(),
            final_obs: PyArrayDyn::zeros(py, vec![b, k, s], false).unbind(),
            rewards: PyArrayDyn::zeros(py, vec![b, k], false).unbind(),
            events: PyArrayDyn::zeros(py, vec![b, k], false).unbind(),
            terminated: PyArrayDyn::zeros(py, vec![b], false).unbind(),
            truncated: PyArrayDyn::zeros(py, vec![b], false).unbind(),
            info: PyArrayDyn::zeros(py, vec![b, INFO_WORDS], false).unbind(),
        })
    }

    /// Runs `f` on the engine with the output arrays lent as one [`StepBuffersMut`] (the engine
    /// locked for the call).
    ///
    /// # Errors
    /// `floe.BadInput` when an array is borrowed elsewhere or the engine failed in an earlier
    /// call; `f`'s error.
    pub(crate) fn with_buffers<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut dyn CoreEngine, StepBuffersMut<'_>) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut obs = self.obs.bind(py).try_readwrite().map_err(|e| bad_input(format!("obs: {e}")))?;
        let mut final_obs =
            self.final_obs.bind(py).try_readwrite().map_err(|e| bad_input(format!("final_obs: {e}")))?;
        let mut rewards =
            self.rewards.bind(py).try_readwrite().map_err(|e| bad_input(format!("rewards: {e}")))?;
        let mut events =
            self.events.bind(py).try_readwrite().map_err(|e| bad_input(format!("events: {e}")))?;
        let mut terminated =
            self.terminated.bind(py).try_readwrite().map_err(|e| bad_input(format!("terminated: {e}")))?;
        let mut truncated =
            self.truncated.bind(py).try_readwrite().map_err(|e| bad_input(format!("truncated: {e}")))?;
        let mut info = self.info.bind(py).try_readwrite().map_err(|e| bad_input(format!("info: {e}")))?;
        let slice = |e: numpy::AsSliceError| bad_input(format!("an output array is not contiguous: {e}"));
        let info_words = info.as_slice_mut().map_err(slice)?;
        let out = StepBuffersMut {
            obs: obs.as_slice_mut().map_err(slice)?,
            final_obs: final_obs.as_slice_mut().map_err(slice)?,
            rewards: rewards.as_slice_mut().map_err(slice)?,
            events: events.as_slice_mut().map_err(slice)?,
            terminated: terminated.as_slice_mut().map_err(slice)?,
            truncated: truncated.as_slice_mut().map_err(slice)?,
            info: bytemuck::try_cast_slice_mut::<u32, EnvInfo>(info_words)
                .map_err(|e| bad_input(format!("info: {e}")))?,
        };
        let mut guard = self.lock()?;
        f(guard.as_mut(), out)
    }

    /// The engine, locked.
    pub(crate) fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Box<dyn CoreEngine>>> {
        crate::errors::refuse_reentry()?;
        self.inner.lock().map_err(|_| bad_input("the engine failed in an earlier call"))
    }

    /// The room of the engine's pool: the agents and side that every level put in it must fit.
    pub(crate) fn pool_room(&self) -> PyResult<Room> {
        Ok(self.lock()?.pool().room())
    }
}

#[pymethods]
impl Engine {
    /// `instances`: the pool the environments play (a list of `Instance`); `config`: a dict or
    /// JSON text (see the class docs); `solve_missing`: solve instances stored without their
    /// optimum, so that the engine knows every optimum; `room`: `(agents, side)`, room in the pool
    /// for levels of up to that many agents on maps of up to that side besides its own (the
    /// levels `refill` and a level sampler put in it; `Levels.room` gives a sampler's).
    ///
    /// Raises `floe.ConfigError` for a configuration out of range, `floe.BadInput` for an
    /// empty or oversized pool or a room over the engine's limits, `floe.EngineFailed` when no
    /// GPU adapter opens; for the `step_reward`, `floe.UnknownPlugin`, `floe.ConfigError`
    /// (parameters refused, or a reward that does not score steps) or `floe.PluginFailed` (a
    /// library that does not load).
    #[new]
    #[pyo3(signature = (instances, config=None, solve_missing=false, *, room=None))]
    fn new(
        py: Python<'_>,
        instances: Vec<PyRef<'_, Instance>>,
        config: Option<&Bound<'_, PyAny>>,
        solve_missing: bool,
        room: Option<(usize, u32)>,
    ) -> PyResult<Self> {
        let insts: Vec<floe_core::Instance> = instances.iter().map(|i| i.inner.clone()).collect();
        let optima = Optima::solve_missing(solve_missing);
        let pool = py
            .detach(|| match room {
                None => InstancePool::new(&insts, optima),
                Some((agents, side)) => InstancePool::with_room(&insts, optima, Room { agents, side }),
            })
            .map_err(engine)?;
        Self::with_pool(py, config, pool)
    }

    /// Starts episode 0 everywhere: environment `e` plays pool slot `pool_pick(seed + e, 0)` (by
    /// the sampling weights, when they are set). Writes `obs`.
    fn reset(&self, py: Python<'_>, seed: u64) -> PyResult<()> {
        self.with_buffers(py, |e, out| e.reset(seed, out).map_err(engine))
    }

    /// Puts environment `env` on pool slot `instance` at step 0 and writes its part of `obs`.
    fn reset_to(&self, py: Python<'_>, env: usize, instance: usize) -> PyResult<()> {
        self.with_buffers(py, |e, out| e.reset_to(env, instance, out).map_err(engine))
    }

    /// One step of every environment with `B·K` action codes 0..=4 (uint8, any shape with that
    /// many elements, C-contiguous). Overwrites every output array.
    ///
    /// Raises `floe.BadInput` for the wrong number of actions, a code above 4, or a step before
    /// `reset`; `floe.PluginFailed` when the `step_reward` plugin fails on the step's outcomes
    /// (the step has happened: every output but `rewards` is its, `rewards` the engine's own).
    fn step(&self, py: Python<'_>, actions: PyReadonlyArrayDyn<'_, u8>) -> PyResult<()> {
        let a = actions.as_slice().map_err(|e| bad_input(format!("actions: {e}")))?;
        self.with_buffers(py, |e, out| e.step(a, out).map_err(engine))
    }

    /// Sets the sampling weights of the pool's slots (one float per slot, a numpy array or a
    /// sequence): every later draw of a level (each auto-reset, and `reset`) picks slot `i` with
    /// probability `weights[i] / sum(weights)`, the same draw on both backends. `None` removes
    /// them (every slot alike, as an engine without weights); equal weights draw the same.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) naming the value for a count other than the pool's
    /// slots, a negative, NaN or infinite weight, or all weights zero; the weights are then as
    /// they were.
    fn set_weights(&self, weights: Option<PyArrayLike1<'_, f64, AllowTypeChange>>) -> PyResult<()> {
        let weights = weights.map(|w| w.as_array().to_vec());
        self.lock()?.set_weights(weights.as_deref()).map_err(engine)
    }

    /// The sampling weights set (a new float64 array), or `None`.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        Ok(self.lock()?.weights().map(|w| PyArray1::from_slice(py, w)))
    }

    /// Replaces the levels of pool slots `slots` by `instances` (one each, in order), between
    /// steps, and writes into the output arrays as a step does: an environment playing a
    /// refilled slot at the first step of its episode is put on the new level (its `obs`
    /// rewritten); one later in its episode has that episode truncated in the arrays of the last
    /// step (`truncated` 1, `final_obs` the observation it ended with, its `info` row with
    /// outcome 3, truncated) and starts its next episode on a level drawn as every auto-reset
    /// draws. Each slot counts one more generation (`info`'s `generation`). Every level must fit
    /// the pool's room (`room=` at construction). Returns `{"truncated": n, "restarted": m}`:
    /// the environments moved each way.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) naming the value for a slot out of range (negative
    /// included) or named twice, a count of instances other than of slots, a level too large for
    /// the pool's room, a call before `reset`; nothing changes then.
    fn refill<'py>(
        &self,
        py: Python<'py>,
        slots: Vec<i64>,
        instances: Vec<PyRef<'_, Instance>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let slots = slots
            .iter()
            .map(|&s| {
                usize::try_from(s).map_err(|_| {
                    bad_input(format!(
                        "refill: slot {s} is out of range: the pool has {} slots",
                        self.pool_len
                    ))
                })
            })
            .collect::<PyResult<Vec<usize>>>()?;
        let levels: Vec<floe_core::Instance> = instances.iter().map(|i| i.inner.clone()).collect();
        let done = self.with_buffers(py, |e, out| {
            // Every environment's outputs are checked (the refill itself checks those it moves).
            if e.was_reset() {
                e.check_outputs(&out, None).map_err(engine)?;
            }
            e.refill(&slots, &levels, out).map_err(engine)
        })?;
        let d = PyDict::new(py);
        d.set_item("truncated", done.truncated)?;
        d.set_item("restarted", done.restarted)?;
        Ok(d)
    }

    /// The pool's slots as a level sampler sees them: `(num_instances, 8)` uint32, one row per
    /// slot in the order of `floe.LEVEL_FIELDS` (slot, generation, width, height, agents, holes,
    /// optimal sum of costs or 2³²−1 when unknown, environments playing it now). Shards of one
    /// pool add up their `in_play` column before `Levels.decide`.
    fn levels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, numpy::PyArray2<u32>>> {
        let guard = self.lock()?;
        let records = Levels::levels(&**guard).map_err(crate::errors::levels)?;
        records_array(py, &records)
    }

    /// The level in pool slot `slot` now (its map, starts and goals; refilled levels included),
    /// without its stored plan.
    ///
    /// Raises `floe.BadInput` for a slot out of range.
    fn level(&self, slot: usize) -> PyResult<Instance> {
        let inner = self.lock()?.pool().level(slot).map_err(|e| bad_input(e.to_string()))?;
        Ok(Instance { inner })
    }

    /// Puts a level sampler's decision (`Levels.decide`) into this engine: the weights,
    /// then the refills, written into the output arrays as `refill` writes them. Shards of one
    /// pool that apply the same decisions keep the same pool. Returns what it did: `{"episodes",
    /// "weights", "refilled", "truncated"}`.
    ///
    /// Raises `floe.ConfigError` (a `ValueError`) for a new level that does not fit the pool's
    /// room, `floe.BadInput` (a `ValueError`) for weights or slots the engine refuses (a
    /// decision for another pool) or a call before `reset`; nothing changes then.
    fn apply<'py>(&self, py: Python<'py>, decision: &LevelDecision) -> PyResult<Bound<'py, PyDict>> {
        let applied = self.with_buffers(py, |e, out| {
            Levels::apply(e, &decision.inner, out).map_err(crate::errors::levels)
        })?;
        applied_dict(py, applied)
    }

    /// `B × 3 × S × S` bytes of every environment's global state (S the pool's largest side), a
    /// new array each call.
    fn global_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<u8>>> {
        let s = self.sizes.global_side;
        let mut out = floe_core::error::try_vec(self.sizes.global_state, 0u8, || "the global state".into())
            .map_err(crate::errors::too_large)?;
        self.lock()?.global_state(&mut out).map_err(engine)?;
        let flat = numpy::PyArray1::from_vec(py, out);
        flat.reshape(vec![self.sizes.num_envs, 3, s, s])
    }

    /// Pool slot each environment plays now.
    fn current_instances(&self) -> PyResult<Vec<u32>> {
        Ok(self.lock()?.state().map_err(engine)?.envs.iter().map(|e| e.instance).collect())
    }

    /// `(agents, side)`: the room of the pool, which every level put in it must fit (its largest
    /// level's, or more with `room=`).
    #[getter]
    fn room(&self) -> PyResult<(usize, u32)> {
        let r = self.pool_room()?;
        Ok((r.agents, r.side))
    }

    #[getter]
    fn obs(&self, py: Python<'_>) -> Bytes {
        self.obs.clone_ref(py)
    }
    #[getter]
    fn final_obs(&self, py: Python<'_>) -> Bytes {
        self.final_obs.clone_ref(py)
    }
    #[getter]
    fn rewards(&self, py: Python<'_>) -> Py<PyArrayDyn<f32>> {
        self.rewards.clone_ref(py)
    }
    #[getter]
    fn events(&self, py: Python<'_>) -> Py<PyArrayDyn<u32>> {
        self.events.clone_ref(py)
    }
    #[getter]
    fn terminated(&self, py: Python<'_>) -> Bytes {
        self.terminated.clone_ref(py)
    }
    #[getter]
    fn truncated(&self, py: Python<'_>) -> Bytes {
        self.truncated.clone_ref(py)
    }
    #[getter]
    fn info(&self, py: Python<'_>) -> Py<PyArrayDyn<u32>> {
        self.info.clone_ref(py)
    }
    /// "cpu", or the GPU adapter's name.
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }
    #[getter]
    fn num_envs(&self) -> usize {
        self.sizes.num_envs
    }
    /// K, agent slots per environment (the pool's largest agent count).
    #[getter]
    fn max_agents(&self) -> usize {
        self.sizes.max_agents
    }
    #[getter]
    fn obs_radius(&self) -> u32 {
        self.spec.engine.config.obs_radius
    }
    /// Bytes of one agent's observation: with `bytes`, 3 × (2r+1)² rounded up to a multiple of
    /// 4; with `bits`, 3 planes of ⌈(2r+1)²/32⌉ `u32` words; with `none`, 0.
    #[getter]
    fn obs_stride(&self) -> usize {
        self.sizes.obs_stride
    }
    /// `"bytes"`, `"bits"` or `"none"`.
    #[getter]
    fn obs_format(&self) -> &'static str {
        self.spec.engine.config.obs_format.name()
    }
    #[getter]
    fn episode_limit(&self) -> u32 {
        self.spec.engine.config.episode_limit
    }
    /// Slots of the pool (refills replace levels in them; their number stays).
    #[getter]
    fn num_instances(&self) -> usize {
        self.pool_len
    }
    /// The configuration as JSON text (every field, defaults filled in).
    #[getter]
    fn config_json(&self) -> String {
        self.spec.to_json().to_string()
    }
}

/// Unpacks observations of a `bits` engine at radius `radius` (a uint8 array whose last axis is
/// that engine's `obs_stride`) into the `bytes` layout: the same leading axes, last axis
/// 3 × (2r+1)² rounded up to a multiple of 4 (planes of (2r+1)² cells, then zero padding).
#[pyfunction]
pub fn unpack_bits<'py>(
    py: Python<'py>,
    obs: PyReadonlyArrayDyn<'py, u8>,
    radius: u32,
) -> PyResult<Bound<'py, PyArrayDyn<u8>>> {
    if radius > floe_core::engine::MAX_OBS_RADIUS {
        // (`unpack_bits` refuses it too, but the strides below must not be computed for it.)
        return Err(bad_input(format!("observation radius {radius} is over the limit")));
    }
    let (bs, ys) = (ObsFormat::Bits.stride(radius), floe_core::engine::obs_stride(radius));
    let shape = obs.shape().to_vec();
    if shape.last() != Some(&bs) {
        return Err(bad_input(format!(
            "packed observations at radius {radius} have a last axis of {bs} bytes, not {:?}",
            shape.last()
        )));
    }
    let src = obs.as_slice().map_err(|e| bad_input(format!("obs must be contiguous: {e}")))?;
    let mut out_shape = shape;
    *out_shape.last_mut().expect("checked above") = ys;
    let out = PyArrayDyn::<u8>::zeros(py, out_shape, false);
    {
        let mut rw = out.try_readwrite().map_err(|e| bad_input(e.to_string()))?;
        let dst = rw.as_slice_mut().map_err(|e| bad_input(e.to_string()))?;
        py.detach(|| unpack(radius, src, dst)).map_err(bad_input)?;
    }
    Ok(out)
}
