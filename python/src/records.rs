//! The records of level sampling as they cross to Python, shared by the engine (`env.rs`) and the
//! sampler (`levels.rs`): an ended episode is the engine's `info` row of `u32` words
//! (`INFO_FIELDS`, the return as `f32` bits), a pool slot a `LevelRecord` row (`LEVEL_FIELDS`),
//! what a sampler's call did a dict, and a sampler's decision a `LevelDecision`.

use floe_core::engine::EnvInfo;
use floe_levels::{Applied, Decision};
use floe_plugin_api::{EpisodeRecord, LevelRecord};
use numpy::ndarray::ArrayView2;
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2, PyArrayMethods, TypeMustMatch};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::errors::bad_input;
use crate::instances::Instance;

/// The `u32` words of one environment's `info` row (an [`EnvInfo`]).
pub(crate) const INFO_WORDS: usize = std::mem::size_of::<EnvInfo>() / 4;

/// The columns of an engine's `info` row, of `Levels.pending` and of the episodes
/// `Levels.update` and `decide` take, in order (`episode_return` holds `f32` bits).
pub const INFO_FIELDS: [&str; INFO_WORDS] = [
    "episode_steps",
    "outcome",
    "failure_kind",
    "failure_agent",
    "slot",
    "generation",
    "episode_return",
    "agents_on_goal",
];

/// The `u32` words of one pool slot's row (a [`LevelRecord`]).
const LEVEL_WORDS: usize = std::mem::size_of::<LevelRecord>() / 4;

/// The columns of `Engine.levels()`, in order.
pub const LEVEL_FIELDS: [&str; LEVEL_WORDS] =
    ["slot", "generation", "width", "height", "agents", "holes", "optimal_soc", "in_play"];

/// One `info` row as the record a sampler reads.
fn episode(r: &[u32; INFO_WORDS]) -> EpisodeRecord {
    EpisodeRecord::from(EnvInfo {
        episode_steps: r[0],
        outcome: r[1],
        failure_kind: r[2],
        failure_agent: r[3],
        instance: r[4],
        generation: r[5],
        episode_return: f32::from_bits(r[6]),
        agents_on_goal: r[7],
    })
}

/// A record as its `info` row.
fn episode_row(e: &EpisodeRecord) -> [u32; INFO_WORDS] {
    [
        e.episode_steps,
        e.outcome,
        e.failure_kind,
        e.failure_agent,
        e.instance,
        e.generation,
        e.episode_return.to_bits(),
        e.agents_on_goal,
    ]
}

/// The rows of a `(n, width)` array, checked to have `width` columns.
fn rows<const W: usize>(what: &str, fields: &str, a: ArrayView2<'_, u32>) -> PyResult<Vec<[u32; W]>> {
    if a.ncols() != W {
        return Err(bad_input(format!(
            "{what} have shape {:?}: give one row of {W} uint32 words each ({fields})",
            a.shape()
        )));
    }
    Ok(a.outer_iter().map(|r| std::array::from_fn(|i| r[i])).collect())
}

/// Episodes given as `info` rows.
pub(crate) fn episodes_from(a: &PyArrayLike2<'_, u32, TypeMustMatch>) -> PyResult<Vec<EpisodeRecord>> {
    let rows = rows::<INFO_WORDS>("episodes", "floe.INFO_FIELDS: the engine's info rows", a.as_array())?;
    Ok(rows.iter().map(episode).collect())
}

/// `(n, 8)` uint32 `info` rows of `episodes`.
pub(crate) fn episodes_array<'py>(
    py: Python<'py>,
    episodes: &[EpisodeRecord],
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let flat: Vec<u32> = episodes.iter().flat_map(episode_row).collect();
    PyArray1::from_vec(py, flat).reshape([episodes.len(), INFO_WORDS])
}

/// `(n, 8)` uint32 rows of pool slots, in the order of [`LEVEL_FIELDS`].
pub(crate) fn records_array<'py>(
    py: Python<'py>,
    records: &[LevelRecord],
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let flat: Vec<u32> = records
        .iter()
        .flat_map(|r| [r.slot, r.generation, r.width, r.height, r.agents, r.holes, r.optimal_soc, r.in_play])
        .collect();
    PyArray1::from_vec(py, flat).reshape([records.len(), LEVEL_WORDS])
}

/// Pool slots given as rows of [`LEVEL_FIELDS`].
pub(crate) fn records_from(a: &PyArrayLike2<'_, u32, TypeMustMatch>) -> PyResult<Vec<LevelRecord>> {
    let rows = rows::<LEVEL_WORDS>("levels", "floe.LEVEL_FIELDS: Engine.levels()'s rows", a.as_array())?;
    Ok(rows
        .iter()
        .map(|r| LevelRecord {
            slot: r[0],
            generation: r[1],
            width: r[2],
            height: r[3],
            agents: r[4],
            holes: r[5],
            optimal_soc: r[6],
            in_play: r[7],
        })
        .collect())
}

/// The host's scores, one per episode.
pub(crate) fn scores_from(scores: Option<PyArrayLike1<'_, f32, AllowTypeChange>>) -> Option<Vec<f32>> {
    scores.map(|s| s.as_array().to_vec())
}

/// What one call of the sampler did, as a dict: `episodes` it was given, whether it set
/// `weights`, slots `refilled`, episodes `truncated` by the refills.
pub(crate) fn applied_dict(py: Python<'_>, a: Applied) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("episodes", a.episodes)?;
    d.set_item("weights", a.weights)?;
    d.set_item("refilled", a.refilled)?;
    d.set_item("truncated", a.truncated)?;
    Ok(d)
}

/// A level sampler's decision on a pool: the slots' new weights (or `None` to keep them), the
/// slots to refill and their new levels, and the number of episodes it was given.
/// `Levels.decide` makes one; `Engine.apply` puts it into an engine, and shards of one pool
/// that apply the same decisions keep the same pool. It pickles (Ray sends it to its actors).
/// A host may also build one itself: `LevelDecision(weights, refill, levels)`.
#[pyclass(module = "floe._floe", frozen)]
#[derive(Debug)]
pub struct LevelDecision {
    pub(crate) inner: Decision,
}

#[pymethods]
impl LevelDecision {
    /// `weights`: one per pool slot, or `None` to keep the engine's; `refill`: slots to refill;
    /// `levels`: their new levels, one per slot, in order (`Instance`s, or their JSON text);
    /// `episodes`: the episodes the decision was made from (for the report of `Engine.apply`).
    /// The weights and slots are checked against the pool when applied.
    ///
    /// Raises `floe.BadInput` (a `ValueError`) for a negative slot, a count of levels other than
    /// of slots, or a level that is neither an `Instance` nor its JSON text.
    #[new]
    #[pyo3(signature = (weights=None, refill=Vec::new(), levels=Vec::new(), episodes=0))]
    fn new(
        weights: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
        refill: Vec<i64>,
        levels: Vec<Bound<'_, PyAny>>,
        episodes: usize,
    ) -> PyResult<Self> {
        let refill = refill
            .iter()
            .map(|&s| usize::try_from(s).map_err(|_| bad_input(format!("refill slot {s} is negative"))))
            .collect::<PyResult<Vec<usize>>>()?;
        if refill.len() != levels.len() {
            return Err(bad_input(format!(
                "{} refill slots but {} levels: give one level per slot",
                refill.len(),
                levels.len()
            )));
        }
        let levels = levels
            .iter()
            .enumerate()
            .map(|(n, l)| {
                if let Ok(i) = l.cast::<Instance>() {
                    Ok(i.get().inner.clone())
                } else if let Ok(text) = l.cast::<PyString>() {
                    floe_core::Instance::from_json(&text.to_cow()?)
                        .map_err(|e| bad_input(format!("level {n}: {e}")))
                } else {
                    Err(bad_input(format!("level {n} is neither an Instance nor its JSON text")))
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        let weights = weights.map(|w| w.as_array().to_vec());
        Ok(Self { inner: Decision { weights, refill, levels, episodes } })
    }

    /// The slots' new weights (a new float64 array), or `None` to keep them.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.inner.weights.as_deref().map(|w| PyArray1::from_slice(py, w))
    }

    /// The slots to refill.
    #[getter]
    fn refill(&self) -> Vec<usize> {
        self.inner.refill.clone()
    }

    /// Their new levels, one per slot, in order.
    #[getter]
    fn levels(&self) -> Vec<Instance> {
        crate::instances::wrap(self.inner.levels.clone())
    }

    /// The episodes the decision was made from.
    #[getter]
    fn episodes(&self) -> usize {
        self.inner.episodes
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let d = &slf.get().inner;
        let weights = d.weights.as_deref().map(|w| PyArray1::from_slice(py, w));
        let levels: Vec<String> = d.levels.iter().map(floe_core::Instance::to_json).collect();
        let args = (weights, d.refill.clone(), levels, d.episodes).into_pyobject(py)?;
        PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }

    fn __repr__(&self) -> String {
        let d = &self.inner;
        format!(
            "LevelDecision(weights={}, refill={:?}, episodes={})",
            d.weights.as_ref().map_or("None".to_string(), |w| format!("<{} slots>", w.len())),
            d.refill,
            d.episodes
        )
    }
}
