//! `floe._floe.Levels` (also `floe.LevelSampler`, its earlier name): floe-levels' driver (a level sampler, built in or from a Rust or C
//! library, with the generator that refills the pool) around an `Engine`'s steps. Its records
//! cross as `records.rs` writes them.

use std::sync::{Mutex, MutexGuard};

use floe_core::engine::StepBuffersMut;
use floe_levels::{LevelSpace, Levels, LevelsSpec};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2, TypeMustMatch};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{json_to_py, py_to_json};
use crate::env::Engine;
use crate::errors::{bad_input, config_text};
use crate::instances::Instance;
use crate::records::{applied_dict, episodes_array, episodes_from, records_from, scores_from, LevelDecision};

/// A level sampler with the source of its new levels: which levels of an engine's pool its
/// environments play, steered between steps from the episodes that ended (and the host's scores
/// of them). `name`: a built-in, `uniform` (every slot alike over a fixed pool; `params` `max_plays`:
/// a level replaced after that many episodes, 1 for domain randomisation), `plr`
/// (robust prioritized level replay: `replay_prob`, `prioritization`, `temperature`,
/// `staleness_coef`, `fresh`, `proxy`, `robust`), `accel` (ACCEL: `plr`'s parameters under
/// `plr`, and `edits`, `edit_fraction`, `edit_from`), `learnability` (sampling for learnability:
/// `buffer_prob`, `top_fraction`, `window`, `min_episodes`, `refill_fraction`), the samplers
/// over generator configurations between phases: every built-in curriculum but `plr` by its
/// name, `fixed`, `difficulty-scaling`, `sec`, `frontier`, `schedule` (`phase_episodes`,
/// `phases`, `curriculum`: its own parameters), `phases` (`designer`: any curriculum's plugin
/// spec, a library's included) and `engineer` (`phase_episodes`, `phases`, `engineer`: a plugin
/// spec, `context`); or a level sampler of a Rust or C plugin `library`.
/// `space`: where new levels come from (a dict, every field optional: `agents` and `size`
/// `[least, most]`, `hole_ratio` and `wait_ratio` `[least, most]`, `solve`); `source`: in place
/// of the space, a file of levels (`{"file": {"path": ..., "solve": True}}`: every instance
/// checked when the sampler is made, played in shuffled passes), MovingAI maps (`{"maps":
/// {"files": [...], "agents": [2, 4], "solve": True}}`: starts and goals drawn), or a function
/// `(n, seed) -> instances` (`floe.Instance`s, dicts or JSON text, within `space`'s agents, sizes
/// and hole ratios; it does not pickle); `seed`: of the new levels; `update_every`: steps between the sampler's calls made by `after_step` (0: only when
/// `update` is called).
///
/// A `VectorEnv`, `Env` or `ParallelEnv` given `levels=` attaches the sampler to its engine and
/// makes the calls; a host drives one itself with `attach`, `start` after each reset and
/// `after_step` after each step, or `update` with its own scores. Every call checks the
/// sampler's plan before the engine is touched: a sampler that fails, panics or answers garbage
/// raises, and the engine is as it was. `state_dict` and `load_state_dict` save and restore a
/// built-in sampler's whole state with the engine's pool; a sampler pickles with it.
#[pyclass(module = "floe._floe", name = "Levels", frozen)]
pub struct LevelSampler {
    spec: LevelsSpec,
    levels: Mutex<Levels>,
    engine: Mutex<Option<Py<Engine>>>,
    /// Made from a Python function (`from_callable`): it does not pickle.
    callable: bool,
}

/// What `Levels.__reduce__` gives pickle: `_unpickle` and its arguments, the settings and
/// the state as JSON text.
type Reduced<'py> = (Bound<'py, PyAny>, (String, Option<String>));

/// A lock a panic left poisoned: the sampler failed in an earlier call.
fn poisoned() -> PyErr {
    bad_input("the level sampler failed in an earlier call")
}

impl std::fmt::Debug for LevelSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Levels").field("spec", &self.spec).finish_non_exhaustive()
    }
}

impl LevelSampler {
    fn lock(&self) -> PyResult<MutexGuard<'_, Levels>> {
        crate::errors::refuse_reentry()?;
        self.levels.lock().map_err(|_| poisoned())
    }

    /// The slot of the engine it steers.
    fn engine_slot(&self) -> PyResult<MutexGuard<'_, Option<Py<Engine>>>> {
        self.engine.lock().map_err(|_| poisoned())
    }

    /// The engine the sampler is attached to.
    fn attached(&self, py: Python<'_>) -> PyResult<Py<Engine>> {
        let engine = self.engine_slot()?;
        engine.as_ref().map(|e| e.clone_ref(py)).ok_or_else(|| {
            bad_input(
                "the level sampler drives no engine: attach(engine) first (a VectorEnv attaches its levels=)",
            )
        })
    }

    /// The state `state_dict` gives, as JSON text.
    fn state_json(&self, py: Python<'_>) -> PyResult<String> {
        let engine = self.attached(py)?;
        let levels = self.lock()?;
        let guard = engine.get().lock()?;
        levels.save(&**guard).and_then(|s| s.to_json()).map_err(crate::errors::levels)
    }

    /// Runs `f` on the driver and the attached engine, with the engine's output arrays.
    fn drive<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(
            &mut Levels,
            &mut dyn floe_core::engine::Engine,
            StepBuffersMut<'_>,
        ) -> Result<T, floe_levels::LevelsError>,
    ) -> PyResult<T> {
        let engine = self.attached(py)?;
        let mut levels = self.lock()?;
        engine.get().with_buffers(py, |e, out| f(&mut levels, e, out).map_err(crate::errors::levels))
    }
}

#[pymethods]
impl LevelSampler {
    /// Raises `floe.ConfigError` (a `ValueError`) for a space out of range or parameters the
    /// sampler refuses, `floe.UnknownPlugin` for a name the built-ins (or the library) do not
    /// have, `floe.PluginFailed` for a library that does not load.
    #[new]
    #[pyo3(signature = (name="uniform", params=None, *, space=None, source=None, seed=0, update_every=0, library=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &str,
        params: Option<&Bound<'_, PyAny>>,
        space: Option<&Bound<'_, PyAny>>,
        source: Option<&Bound<'_, PyAny>>,
        seed: u64,
        update_every: u32,
        library: Option<String>,
    ) -> PyResult<Self> {
        let sampler = crate::batch::spec(name, params, library)?;
        let (source, function) = source_from(source)?;
        let spec = LevelsSpec { sampler, space: space_from(space)?, source, seed, update_every };
        let callable = function.is_some();
        let levels = match function {
            None => py.detach(|| floe_plugin_registry::levels(&spec)).map_err(crate::errors::registry)?,
            Some(f) => {
                if floe_plugin_registry::designs_phases(&spec.sampler) {
                    return Err(config_text(format!(
                        "level sampler `{}` designs the generator's configuration between phases, and a function's \
                         levels come as it makes them: give it a `space`",
                        spec.sampler.name
                    )));
                }
                spec.space.validate().map_err(crate::errors::levels)?;
                let sampler = floe_plugin_registry::level_sampler(&spec.sampler, &spec.space.limits())
                    .map_err(crate::errors::registry)?;
                let source = level_source(&spec, Some(f))?;
                Levels::new(name, sampler, source, update_every)
            }
        };
        Ok(Self { spec, levels: Mutex::new(levels), engine: Mutex::new(None), callable })
    }

    /// A level sampler whose decision is a Python function's: `update(levels, episodes, scores)`
    /// is called where a built-in's decision would run, with the pool's slots (`(n, 8)` uint32
    /// rows of `floe.LEVEL_FIELDS`), the episodes that ended since its last call (`(m, 8)` rows of
    /// `floe.INFO_FIELDS`) and the host's scores of them (`None`, or `m` float32), and answers
    /// `None` (keep the weights, refill nothing), the slots' weights (one per slot), or a dict with
    /// `weights` and `refill` (slots to refill with new levels of `space`), both optional. The
    /// answer is checked as a built-in's plan is: weights that are NaN, negative, all zero or of
    /// another count, or a slot out of range, raise `floe.BadOutput` and change nothing; an
    /// exception the function raises reaches the caller as `floe.PluginFailed` with its message.
    /// The function runs inside the sampler's call: calling this sampler or its engine from it
    /// raises `floe.BadInput`. `name` names it in messages; `space`, `source`, `seed` and
    /// `update_every` as for `Levels`. It does not pickle, and keeps no saved state of its
    /// own.
    #[staticmethod]
    #[pyo3(signature = (update, *, name="python", space=None, source=None, seed=0, update_every=0))]
    fn from_callable(
        py: Python<'_>,
        update: Py<PyAny>,
        name: &str,
        space: Option<&Bound<'_, PyAny>>,
        source: Option<&Bound<'_, PyAny>>,
        seed: u64,
        update_every: u32,
    ) -> PyResult<Self> {
        if !update.bind(py).is_callable() {
            return Err(bad_input("from_callable(update): update must be callable"));
        }
        let sampler = floe_plugin_api::PluginSpec {
            name: name.to_string(),
            params: serde_json::Value::Null,
            library: None,
        };
        let (source, function) = source_from(source)?;
        let spec = LevelsSpec { sampler, space: space_from(space)?, source, seed, update_every };
        let source = level_source(&spec, function)?;
        let levels = Levels::new(name, Box::new(PySampler { update }), source, update_every);
        Ok(Self { spec, levels: Mutex::new(levels), engine: Mutex::new(None), callable: true })
    }

    /// The sampler's name.
    #[getter]
    fn name(&self) -> &str {
        &self.spec.sampler.name
    }

    /// The level space new levels come from (a dict, every field filled in).
    #[getter]
    fn space<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.spec.space).map_err(|e| bad_input(e.to_string()))?;
        json_to_py(py, &value)
    }

    /// The seed of the new levels.
    #[getter]
    fn seed(&self) -> u64 {
        self.spec.seed
    }

    /// Steps between the sampler's calls made by `after_step` (0: only `update` calls it).
    #[getter]
    fn update_every(&self) -> u32 {
        self.spec.update_every
    }

    /// `(agents, side)`: the room an engine's pool needs for every level of the space (the
    /// `room=` of `Engine`).
    #[getter]
    fn room(&self) -> PyResult<(usize, u32)> {
        let r = self.lock()?.source().room();
        Ok((r.agents, r.side))
    }

    /// The next `count` levels of the space (for the pool an engine is made with); the same for
    /// a seed on every machine. Generation runs with the GIL released.
    ///
    /// Raises `floe.Failed` when a level cannot be generated, `floe.TooLarge` for more levels
    /// than memory holds.
    fn draw(&self, py: Python<'_>, count: usize) -> PyResult<Vec<Instance>> {
        // The lock is taken and given back with the GIL released, so that a thread that waits for
        // it holding the GIL cannot block this one.
        let drawn = py.detach(|| -> PyResult<Vec<floe_core::Instance>> {
            self.lock()?.draw(count).map_err(crate::errors::levels)
        })?;
        Ok(crate::instances::wrap(drawn))
    }

    /// The name `draw` had before: it warns (`DeprecationWarning`) and draws. `levels` now means
    /// only the pool's slot records (`Engine.levels()`).
    fn levels(&self, py: Python<'_>, count: usize) -> PyResult<Vec<Instance>> {
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyDeprecationWarning>(),
            c"Levels.levels(count) is now Levels.draw(count): `levels` names the pool's slot records",
            1,
        )?;
        self.draw(py, count)
    }

    /// Levels drawn from the source so far (the pool's first ones and every refill).
    #[getter]
    fn drawn(&self) -> PyResult<u64> {
        Ok(self.lock()?.source().drawn())
    }

    /// The generator configuration new levels are drawn from now (a dict: `sizes`, `agents`, ...),
    /// when a phase sampler gave one; `None` for the level space itself.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = match self.lock()?.source().config() {
            None => return Ok(None),
            Some(c) => serde_json::to_value(c).map_err(|e| bad_input(e.to_string()))?,
        };
        json_to_py(py, &value).map(Some)
    }

    /// Makes this sampler steer `engine`: `start`, `after_step` and `update` act on it. A
    /// sampler steers one engine (shards of one pool share a sampler through `floe.ray.LevelHub`);
    /// attaching it to its own engine again changes nothing.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) when it steers another engine already;
    /// `floe.ConfigError` (a `ValueError`) when the engine's pool has no room for the levels of
    /// the space (make the engine with `room=sampler.room`).
    fn attach(&self, py: Python<'_>, engine: Py<Engine>) -> PyResult<()> {
        let mut slot = self.engine_slot()?;
        if let Some(e) = slot.as_ref() {
            if e.is(&engine) {
                return Ok(());
            }
            return Err(bad_input(
                "the level sampler steers another engine already: make one sampler per engine \
                 (shards of one pool share one through floe.ray.LevelHub)",
            ));
        }
        let have = engine.bind(py).get().pool_room()?;
        let need = self.lock()?.source().room();
        if have.agents < need.agents || have.side < need.side {
            return Err(config_text(format!(
                "the engine's pool has room for {} agents on a side of {}, and the level space needs {} \
                 agents on {}: make the engine with room=sampler.room",
                have.agents, have.side, need.agents, need.side
            )));
        }
        *slot = Some(engine);
        Ok(())
    }

    /// The engine the sampler steers, or `None`.
    #[getter]
    fn engine(&self, py: Python<'_>) -> PyResult<Option<Py<Engine>>> {
        let engine = self.engine_slot()?;
        Ok(engine.as_ref().map(|e| e.clone_ref(py)))
    }

    /// The sampler's first call, with no episodes, after the engine's `reset`: its first weights
    /// and any refill it asks for (written into the reset's outputs). Drops the kept episodes.
    /// Returns what it did (`{"episodes", "weights", "refilled", "truncated"}`).
    ///
    /// Raises as `update`.
    fn start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let applied = self.drive(py, |l, e, out| l.start(e, out))?;
        applied_dict(py, applied)
    }

    /// After each step of the engine: keeps the episodes that ended in it, and every
    /// `update_every` steps calls the sampler with them and applies its plan, in the step's
    /// outputs (an episode a refill truncates shows in that step's `truncated`, `final_obs` and
    /// `info`). Returns what the call did, or `None` between calls.
    ///
    /// Raises as `update`.
    fn after_step<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let applied = self.drive(py, |l, e, out| l.after_step(e, out))?;
        applied.map(|a| applied_dict(py, a)).transpose()
    }

    /// The attached engine's `step(actions)` and then `after_step()`, in one call from Python
    /// (what `VectorEnv.step` and `Env.step` call): the same outputs, the same sampler calls,
    /// one crossing into Rust and one borrow of the output arrays instead of two. Returns what
    /// `after_step` returns.
    ///
    /// Raises as `Engine.step`, then as `after_step` (the step has happened then).
    fn step_engine<'py>(
        &self,
        py: Python<'py>,
        actions: numpy::PyReadonlyArrayDyn<'py, u8>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let a = actions.as_slice().map_err(|e| bad_input(format!("actions: {e}")))?;
        let applied = self.drive(py, |l, e, mut out| {
            e.step(a, out.reborrow())?;
            l.after_step(e, out)
        })?;
        applied.map(|a| applied_dict(py, a)).transpose()
    }

    /// Calls the sampler now and applies its plan to the engine (in the last step's outputs).
    /// `episodes`: `(n, 8)` uint32 rows of `floe.INFO_FIELDS` (the engine's `info` rows of ended
    /// episodes, as `pending` lists them); `None` gives it the episodes kept since its last call.
    /// `scores`: `None`, or one finite score per episode from the host (for `plr`, the
    /// episode's positive value loss or MaxMC), in the episodes' order. Every call drops the kept
    /// episodes (given ones stand in for them). Returns what it did.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) naming the value for scores of another count than
    /// the episodes or not finite, an episode whose slot is outside the pool, episodes of another
    /// shape, a call before the engine's `reset` or without an engine; `floe.BadOutput` (a
    /// `ValueError`) for a plan the checks refuse (weights negative, NaN, infinite, all zero or
    /// of another count than the pool's slots; a refill slot out of range or named twice; a
    /// configuration outside the level space); `floe.PluginFailed` for a sampler that fails or
    /// panics; `floe.ConfigError` for new levels the pool has no room for; `floe.Failed` for
    /// levels that cannot be generated. The engine and the kept episodes are then as they were.
    #[pyo3(signature = (episodes=None, scores=None))]
    fn update<'py>(
        &self,
        py: Python<'py>,
        episodes: Option<PyArrayLike2<'py, u32, TypeMustMatch>>,
        scores: Option<PyArrayLike1<'py, f32, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let episodes = episodes.as_ref().map(episodes_from).transpose()?;
        let scores = scores_from(scores);
        let applied = self.drive(py, |l, e, out| l.update(e, episodes.as_deref(), scores.as_deref(), out))?;
        applied_dict(py, applied)
    }

    /// The sampler's decision on a pool, without applying it: `levels` are the pool's slots as
    /// `Engine.levels()` gives them (shards of one pool add up their `in_play` column),
    /// `episodes` and `scores` as for `update` (`None`: the kept episodes; either way the kept
    /// ones are dropped). Draws the decision's new levels. `Engine.apply` puts it into an engine;
    /// shards that apply the same decisions keep the same pool (`floe.ray.LevelHub`).
    ///
    /// Raises as `update` for the episodes, the scores and the sampler's plan; the source of new
    /// levels and the kept episodes are then as they were.
    #[pyo3(signature = (levels, episodes=None, scores=None))]
    fn decide(
        &self,
        levels: PyArrayLike2<'_, u32, TypeMustMatch>,
        episodes: Option<PyArrayLike2<'_, u32, TypeMustMatch>>,
        scores: Option<PyArrayLike1<'_, f32, AllowTypeChange>>,
    ) -> PyResult<LevelDecision> {
        let records = records_from(&levels)?;
        let episodes = episodes.as_ref().map(episodes_from).transpose()?;
        let scores = scores_from(scores);
        let inner = self
            .lock()?
            .decide(&records, episodes.as_deref(), scores.as_deref())
            .map_err(crate::errors::levels)?;
        Ok(LevelDecision { inner })
    }

    /// The episodes kept since the sampler's last call, in the order it will get them: `(n, 8)`
    /// uint32 rows of `floe.INFO_FIELDS` (a new array; `floe.info_columns` names its columns).
    /// A host that scores episodes itself reads them here, then passes its scores in this order
    /// to `update`.
    #[getter]
    fn pending<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let levels = self.lock()?;
        episodes_array(py, levels.pending())
    }

    /// Whether the sampler wants the trainer to learn from replayed levels alone (robust PLR:
    /// `plr` with `robust=True`, its default): a trainer then takes no gradient from the steps
    /// `first_play` marks.
    #[getter]
    fn robust(&self) -> PyResult<bool> {
        Ok(self.lock()?.robust())
    }

    /// Per environment, whether its episode in the last step recorded plays its level for the
    /// first time (`True`) or replays it: a replay when an episode on the same slot and
    /// generation ended in a step before the one this episode began in. A new bool array, empty
    /// before any step is recorded. Under a robust sampler, the steps it marks take no gradient.
    #[getter]
    fn first_play<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<bool>>> {
        Ok(PyArray1::from_slice(py, self.lock()?.first_play()))
    }

    /// Each pool slot's statistics as the sampler keeps them, as of its last call, for a log: a
    /// dict of numpy arrays, one entry a slot, `generation` (the refill of the slot they belong
    /// to), `plays` (episodes counted on that level; `learnability`: those in its window),
    /// `staleness` (calls since `plr` or `accel` last scored it; 2**32 − 1 where not kept),
    /// `score` (`plr`, `accel`: its score; `learnability`: its success rate) and `figure` (`plr`,
    /// `accel`: its replay probability; `learnability`: p·(1−p)), NaN where not kept. Empty
    /// arrays for a sampler that keeps none (a phase designer, a loaded library's).
    fn slot_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.lock()?.slot_stats();
        let d = PyDict::new(py);
        d.set_item("generation", PyArray1::from_iter(py, stats.iter().map(|s| s.generation)))?;
        d.set_item("plays", PyArray1::from_iter(py, stats.iter().map(|s| s.plays)))?;
        d.set_item("staleness", PyArray1::from_iter(py, stats.iter().map(|s| s.staleness)))?;
        d.set_item("score", PyArray1::from_iter(py, stats.iter().map(|s| s.score)))?;
        d.set_item("figure", PyArray1::from_iter(py, stats.iter().map(|s| s.figure)))?;
        Ok(d)
    }

    /// Per episode of `pending`, in its order, the environment it ran in (uint32): with
    /// `pending_end_step`, the key a host scores an episode by, whatever order its own loops run
    /// in.
    #[getter]
    fn pending_env<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        Ok(PyArray1::from_slice(py, self.lock()?.pending_envs()))
    }

    /// Per episode of `pending`, in its order, the step it ended in (uint64), counted as
    /// `steps_recorded` counts: the first step the sampler recorded is step 0.
    #[getter]
    fn pending_end_step<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_slice(py, self.lock()?.pending_end_steps()))
    }

    /// The steps the sampler has recorded (each `after_step`): the index the next one will have.
    #[getter]
    fn steps_recorded(&self) -> PyResult<u64> {
        Ok(self.lock()?.steps_recorded())
    }

    /// Per episode of `pending`, in its order, whether it was its level's first play.
    #[getter]
    fn pending_first_play<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<bool>>> {
        Ok(PyArray1::from_slice(py, self.lock()?.pending_first_play()))
    }

    /// Episodes that ended, per level shape: `{(size, agents, hole_percent): count}` (the map's
    /// larger side, its agents, its holes in whole percent of its cells).
    #[getter]
    fn played<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (s, n) in self.lock()?.played() {
            d.set_item((s.size, s.agents, s.hole_percent), n)?;
        }
        Ok(d)
    }

    /// Every call's work added up (`{"episodes", "weights", "refilled", "truncated"}`; `weights`:
    /// whether any call set weights).
    #[getter]
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let totals = self.lock()?.totals();
        applied_dict(py, totals)
    }

    /// The sampler's whole state, for `load_state_dict` in a later run (a dict that `json`,
    /// `pickle` and `torch.save` keep): its own (scores, staleness, plays per slot and
    /// generation), the kept episodes and first-play marks, the source of new levels, and the
    /// attached engine's pool (every slot's level, optimum and generation) and weights. Versioned.
    ///
    /// Raises `floe.PluginFailed` for a sampler that keeps no saved form (a library's, one
    /// written in Python); `floe.BadInput` without an engine, or with a
    /// loaded state not yet started.
    fn state_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.state_json(py)?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Puts back a state `state_dict` gave (a dict, or its JSON text) into this sampler, made
    /// with the same settings: the sampler's, the driver's and the source's now; the pool and
    /// weights at the next `start` (a `VectorEnv`'s `reset`), which takes an engine made with the
    /// saved pool: `VectorEnv(sampler.loaded_slots, levels=sampler)` or `restored_engine`. Until
    /// then every call but `start` raises.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) naming the value for a state that does not read,
    /// of another version, sampler, `update_every`, level space or sampler parameters, and
    /// `floe.PluginFailed` for a sampler that keeps no saved form; nothing changes then (but a
    /// phase designer whose curriculum, replayed over the saved history, designs otherwise: its
    /// curriculum was called, so the sampler refuses to go on).
    fn load_state_dict(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = py_to_json(state)?;
        py.detach(|| -> PyResult<()> {
            let state = floe_levels::LevelsState::from_json(&text).map_err(crate::errors::levels)?;
            self.lock()?.load(state).map_err(crate::errors::levels)
        })
    }

    /// The slots of the pool of a state `load_state_dict` put back, until `start` finds it in an
    /// engine; `None` otherwise.
    #[getter]
    fn loaded_slots(&self) -> PyResult<Option<usize>> {
        Ok(self.lock()?.loaded_pool().map(floe_core::engine::InstancePool::len))
    }

    /// An engine made with the pool of the state `load_state_dict` put back (every slot's level,
    /// optimum and generation), `config` as `Engine`'s; not attached.
    ///
    /// Raises `floe.BadInput` when no loaded state waits for `start`; as `Engine`.
    #[pyo3(signature = (config=None))]
    fn restored_engine(&self, py: Python<'_>, config: Option<&Bound<'_, PyAny>>) -> PyResult<Engine> {
        let pool = self.lock()?.loaded_pool().cloned().ok_or_else(|| {
            bad_input("the level sampler holds no loaded state: load_state_dict(state) first")
        })?;
        Engine::with_pool(py, config, pool)
    }

    /// Pickles as its settings and, when it steers an engine, its state (`state_dict`); an
    /// unpickled sampler holds the state loaded (`load_state_dict`).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let this = slf.get();
        if this.callable {
            return Err(bad_input(format!(
                "level sampler `{}` runs a Python function (its update or its source) and does not pickle: make it again",
                this.spec.sampler.name
            )));
        }
        if this.lock()?.loaded_pool().is_some() {
            return Err(bad_input(
                "the level sampler holds a loaded state that start has not put into an engine: start it, or pickle the state itself",
            ));
        }
        let spec = serde_json::to_string(&this.spec).map_err(|e| bad_input(e.to_string()))?;
        let state = if this.engine(py)?.is_some() { Some(this.state_json(py)?) } else { None };
        Ok((slf.getattr("_unpickle")?, (spec, state)))
    }

    /// A sampler from its pickled settings and state.
    #[staticmethod]
    fn _unpickle(py: Python<'_>, spec: &str, state: Option<&str>) -> PyResult<Self> {
        let spec = LevelsSpec::from_json(spec).map_err(crate::errors::levels)?;
        let mut levels =
            py.detach(|| floe_plugin_registry::levels(&spec)).map_err(crate::errors::registry)?;
        if let Some(text) = state {
            let state = floe_levels::LevelsState::from_json(text).map_err(crate::errors::levels)?;
            levels.load(state).map_err(crate::errors::levels)?;
        }
        Ok(Self { spec, levels: Mutex::new(levels), engine: Mutex::new(None), callable: false })
    }

    fn __repr__(&self) -> String {
        let library =
            self.spec.sampler.library.as_ref().map(|l| format!(", library={:?}", l.display().to_string()));
        format!("Levels({:?}{})", self.spec.sampler.name, library.unwrap_or_default())
    }
}

/// A level space from a Python dict (every field optional; `None`: the defaults).
fn space_from(space: Option<&Bound<'_, PyAny>>) -> PyResult<LevelSpace> {
    match space {
        None => Ok(LevelSpace::default()),
        Some(s) => {
            floe_core::json::from_str(&py_to_json(s)?).map_err(|e| config_text(format!("level space: {e}")))
        }
    }
}

/// A `source=` argument: a dict naming a file or maps (the spec's `source`), or a function.
fn source_from(
    source: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Option<floe_levels::SourceSpec>, Option<floe_levels::LevelFn>)> {
    let Some(source) = source.filter(|s| !s.is_none()) else { return Ok((None, None)) };
    if source.is_callable() {
        let f: Py<PyAny> = source.clone().unbind();
        let call: floe_levels::LevelFn = std::sync::Arc::new(move |n, seed| {
            let _inside = crate::errors::InUpdate::enter();
            Python::attach(|py| -> Result<Vec<floe_core::Instance>, String> {
                let out = f.bind(py).call1((n, seed)).map_err(|e| format!("it raised {e}"))?;
                let items = out
                    .try_iter()
                    .map_err(|_| format!("it answered {}, not a sequence of instances", type_name(&out)))?;
                items
                    .enumerate()
                    .map(|(i, item)| {
                        let item = item.map_err(|e| e.to_string())?;
                        if let Ok(inst) = item.extract::<PyRef<'_, Instance>>() {
                            return Ok(inst.inner.clone());
                        }
                        let text = py_to_json(&item).map_err(|_| {
                            format!(
                                "level {i} is {}, not a floe.Instance, a dict or JSON text",
                                type_name(&item)
                            )
                        })?;
                        floe_core::Instance::from_json(&text).map_err(|e| format!("level {i}: {e}"))
                    })
                    .collect()
            })
        });
        return Ok((None, Some(call)));
    }
    let spec = floe_core::json::from_str(&py_to_json(source)?)
        .map_err(|e| config_text(format!("level source: {e} (a dict: {{\"file\": {{\"path\": ...}}}} or {{\"maps\": {{\"files\": [...]}}}}, or a function (n, seed) -> instances)")))?;
    Ok((Some(spec), None))
}

/// The source of `spec`'s levels: `function`'s, the spec's file or maps, or its space.
fn level_source(
    spec: &LevelsSpec,
    function: Option<floe_levels::LevelFn>,
) -> PyResult<floe_levels::LevelSource> {
    use floe_levels::LevelSource;
    let made = match (function, &spec.source) {
        (Some(f), _) => LevelSource::from_fn(spec.space.clone(), f, spec.seed),
        (None, Some(s)) => spec.source_alone().and_then(|()| LevelSource::from_spec(s, spec.seed)),
        (None, None) => LevelSource::new(spec.space.clone(), spec.seed),
    };
    made.map_err(crate::errors::levels)
}

/// A Python function as a level sampler (`Levels.from_callable`).
struct PySampler {
    update: Py<PyAny>,
}

impl floe_plugin_api::LevelSampler for PySampler {
    fn update(
        &mut self,
        levels: &[floe_plugin_api::LevelRecord],
        episodes: &[floe_plugin_api::EpisodeRecord],
        scores: Option<&[f32]>,
    ) -> Result<floe_plugin_api::LevelPlan, floe_plugin_api::PluginError> {
        use floe_plugin_api::PluginError;
        let _inside = crate::errors::InUpdate::enter();
        let answer = Python::attach(|py| -> PyResult<Result<floe_plugin_api::LevelPlan, String>> {
            let l = crate::records::records_array(py, levels)?;
            let e = episodes_array(py, episodes)?;
            let s = scores.map(|s| PyArray1::from_slice(py, s));
            let out = self.update.bind(py).call1((l, e, s))?;
            Ok(plan_from(&out))
        });
        match answer {
            Err(e) => Err(PluginError::Failed(format!("its update raised {e}"))),
            Ok(Err(why)) => Err(PluginError::BadOutput(why)),
            Ok(Ok(plan)) => Ok(plan),
        }
    }
}

/// A Python sampler's answer as a plan: `None`, the weights, or a dict of `weights` and `refill`.
fn plan_from(out: &Bound<'_, PyAny>) -> Result<floe_plugin_api::LevelPlan, String> {
    use pyo3::types::PyDictMethods;
    let weights_of = |w: &Bound<'_, PyAny>| -> Result<Option<Vec<f64>>, String> {
        if w.is_none() {
            return Ok(None);
        }
        w.extract::<Vec<f64>>()
            .map(Some)
            .map_err(|_| format!("its weights are {}, not a sequence of numbers", type_name(w)))
    };
    let mut plan = floe_plugin_api::LevelPlan::default();
    if out.is_none() {
        return Ok(plan);
    }
    let Ok(d) = out.cast::<PyDict>() else {
        plan.weights = weights_of(out)?;
        return Ok(plan);
    };
    for (k, v) in d.iter() {
        match k.extract::<String>().as_deref() {
            Ok("weights") => plan.weights = weights_of(&v)?,
            Ok("refill") => {
                let slots = v
                    .extract::<Vec<i64>>()
                    .map_err(|_| format!("its refill is {}, not a sequence of slots", type_name(&v)))?;
                plan.refill = slots
                    .iter()
                    .map(|&s| u32::try_from(s).map_err(|_| format!("it asks to refill slot {s}")))
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(format!("its answer has the key {k}: give weights and refill")),
        }
    }
    Ok(plan)
}

/// A Python value's type name, for a message.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map_or_else(|_| "a value".into(), |n| n.to_string())
}
