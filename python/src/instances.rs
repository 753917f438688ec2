//! Instances and the CLI's one-instance commands: `generate`, `suite`, `solve`, `verify`,
//! `prompt`, `parse_answer`, with the CLI's defaults, checks and output shapes. Long work
//! (generation, solving) runs with the GIL released.

use std::path::PathBuf;
use std::time::Duration;

use floe_core::generator::{GenerateError, GeneratorConfig};
use floe_core::instance::parse_instances;
use floe_core::suite::{build_suite, write_suite, SuiteConfig};
use floe_core::text::{parse_answer as parse_text, render_prompt, write_answer as write_text, AnswerForm};
use floe_core::{solve as solve_core, Answer, Check, PlanForm, SolverConfig};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::convert::{json_to_py, py_to_json};
use crate::errors::{bad_input, failed};

/// A MAPF-FrozenLake instance: a grid of frozen cells (`F`) and holes (`H`), and agents with
/// distinct starts and goals on frozen cells; optionally its optimal plan.
///
/// Made by `generate`, `Instance(text)` (its JSON form, as `Instance.from_json`) or
/// `read_instances`; immutable. It pickles as its JSON form.
#[pyclass(module = "floe._floe", frozen)]
#[derive(Debug, Clone)]
pub struct Instance {
    pub(crate) inner: floe_core::Instance,
}

#[pymethods]
impl Instance {
    /// Parses and validates one instance from its JSON form, as `from_json` does.
    ///
    /// Raises `floe.BadInput` with the validator's message.
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Self::from_json(text)
    }

    /// Pickled as `Instance(its JSON)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let py = slf.py();
        let args = (slf.get().inner.to_json(),).into_pyobject(py)?;
        pyo3::types::PyTuple::new(py, [slf.get_type().into_any(), args.into_any()])
    }

    /// Parses and validates one instance from its JSON form (the CLI's instance files).
    ///
    /// Raises `floe.BadInput` with the validator's message.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        floe_core::Instance::from_json(text).map(|inner| Self { inner }).map_err(|e| bad_input(e.to_string()))
    }

    /// The instance as one line of JSON (the form `floe generate` writes).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    #[getter]
    fn id(&self) -> Option<String> {
        self.inner.id.clone()
    }

    #[getter]
    fn width(&self) -> u32 {
        self.inner.grid.width()
    }

    #[getter]
    fn height(&self) -> u32 {
        self.inner.grid.height()
    }

    #[getter]
    fn num_agents(&self) -> usize {
        self.inner.num_agents()
    }

    /// The rows of the grid, `F` frozen and `H` hole.
    #[getter]
    fn grid(&self) -> Vec<String> {
        self.inner.grid.to_rows()
    }

    /// The optimal sum of costs stored with the instance, or None.
    #[getter]
    fn optimal_soc(&self) -> Option<u32> {
        self.inner.optimal.as_ref().map(|o| o.soc)
    }

    /// Whether every optimal plan needs a wait, when the generator recorded it.
    #[getter]
    fn needs_wait(&self) -> Option<bool> {
        self.inner.needs_wait
    }

    fn __repr__(&self) -> String {
        format!(
            "Instance({}x{}, {} agents{})",
            self.inner.grid.width(),
            self.inner.grid.height(),
            self.inner.num_agents(),
            self.inner.id.as_deref().map(|i| format!(", id={i:?}")).unwrap_or_default()
        )
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.inner.to_json() == other.inner.to_json()
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.to_json().hash(&mut h);
        h.finish()
    }
}

pub(crate) fn generate_error(e: GenerateError) -> PyErr {
    match e {
        GenerateError::Config(m) => bad_input(format!("invalid arguments: {m}")),
        GenerateError::TooLarge(t) => crate::errors::too_large(t),
        other => failed(other.to_string()),
    }
}

pub(crate) fn wrap(instances: Vec<floe_core::Instance>) -> Vec<Instance> {
    instances.into_iter().map(|inner| Instance { inner }).collect()
}

/// Instances with their optimal plans, as `floe generate` makes them (same arguments, same
/// defaults, same output for the same seed).
///
/// Raises `floe.BadInput` for arguments out of range, `floe.Failed` when the wait ratio could
/// not be reached in the attempts allowed.
#[pyfunction]
#[pyo3(signature = (agents, size, *, hole_ratio=0.1, wait_ratio=0.5, count=50, seed=0, max_attempts=2000, max_nodes=5000))]
#[allow(clippy::too_many_arguments)]
pub fn generate(
    py: Python<'_>,
    agents: usize,
    size: u32,
    hole_ratio: f64,
    wait_ratio: f64,
    count: usize,
    seed: u64,
    max_attempts: u32,
    max_nodes: u64,
) -> PyResult<Vec<Instance>> {
    if count == 0 {
        return Err(bad_input("invalid arguments: count must be at least 1"));
    }
    if max_attempts == 0 || max_nodes == 0 {
        return Err(bad_input("invalid arguments: max_attempts and max_nodes must be at least 1"));
    }
    let cfg = GeneratorConfig {
        max_attempts,
        max_nodes,
        ..GeneratorConfig::default()
            .size(size)
            .agents(agents)
            .hole_ratio(hole_ratio)
            .wait_ratio(wait_ratio)
            .count(count)
            .seed(seed)
    };
    cfg.validate().map_err(generate_error)?;
    let made = py.detach(|| floe_core::generate(&cfg)).map_err(generate_error)?;
    Ok(wrap(made))
}

/// Random instances for stepping (benchmarks, environments with many agents), as `floe bench`
/// makes them: exactly `round(hole_ratio · size²)` holes and `agents` agents with distinct starts
/// and goals in the largest frozen region, but **not solved** (no optimum; possibly unsolvable
/// as a whole). The same arguments give the same instances.
///
/// Raises `floe.BadInput` for arguments out of range, `floe.Failed` when no connected draw was
/// found in `max_attempts` tries for a slot.
#[pyfunction]
#[pyo3(signature = (agents, size, *, hole_ratio=0.1, count=64, seed=1, max_attempts=100))]
pub fn random_instances(
    py: Python<'_>,
    agents: usize,
    size: u32,
    hole_ratio: f64,
    count: usize,
    seed: u64,
    max_attempts: u32,
) -> PyResult<Vec<Instance>> {
    if count == 0 || max_attempts == 0 {
        return Err(bad_input("invalid arguments: count and max_attempts must be at least 1"));
    }
    let cfg = GeneratorConfig {
        max_attempts,
        ..GeneratorConfig::default().size(size).agents(agents).hole_ratio(hole_ratio).count(count).seed(seed)
    };
    let made = py.detach(|| floe_core::generator::random_instances(&cfg)).map_err(generate_error)?;
    Ok(wrap(made))
}

/// The benchmark suite (agents × map sizes × wait ratios), as `floe suite` makes it. Returns a
/// list of `(file_name, instances)` per cell in the suite's order; with `out`, also writes the
/// cell files and `suite.json` there, as the CLI does.
#[pyfunction]
#[pyo3(signature = (*, agents=vec![3, 4, 5], min_size=0, max_size=10, wait_ratios=vec![0.25, 0.5, 0.75], per_cell=50, hole_ratio=0.1, seed=0, out=None))]
#[allow(clippy::too_many_arguments)]
pub fn suite(
    py: Python<'_>,
    agents: Vec<usize>,
    min_size: u32,
    max_size: u32,
    wait_ratios: Vec<f64>,
    per_cell: usize,
    hole_ratio: f64,
    seed: u64,
    out: Option<PathBuf>,
) -> PyResult<Vec<(String, Vec<Instance>)>> {
    let config = SuiteConfig { agents, min_size, max_size, wait_ratios, per_cell, hole_ratio, seed };
    let cells = py.detach(|| build_suite(&config)).map_err(generate_error)?;
    if let Some(dir) = out {
        write_suite(&dir, &config, &cells).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
    }
    Ok(cells.into_iter().map(|c| (c.file_name(), wrap(c.instances))).collect())
}

/// An optimal plan (minimum sum of costs): `{"soc", "makespan", "moves"}`, the line `floe solve`
/// prints. `time_limit` in seconds.
///
/// Raises `floe.BadInput` for limits out of range, `floe.Failed` when no plan exists or a limit
/// was reached (the solver's message says which).
#[pyfunction]
#[pyo3(signature = (instance, *, max_nodes=1_000_000, time_limit=None))]
pub fn solve<'py>(
    py: Python<'py>,
    instance: &Instance,
    max_nodes: u64,
    time_limit: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let time_limit = match time_limit {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(bad_input(format!("time_limit must be a positive number of seconds, not {s}")))
        }
        s => s.map(Duration::from_secs_f64),
    };
    if max_nodes == 0 {
        return Err(bad_input("max_nodes must be at least 1"));
    }
    let config = SolverConfig { max_nodes, time_limit, ..SolverConfig::default() };
    let inst = &instance.inner;
    let sol = py.detach(|| solve_core(inst, &config)).map_err(|e| failed(e.to_string()))?;
    let line = serde_json::json!({
        "soc": sol.soc,
        "makespan": sol.makespan,
        "moves": sol.move_strings(&inst.grid),
    });
    json_to_py(py, &line)
}

/// ACCEL's edit of a level: `edits` changes (a cell flipped between hole and frozen, an agent's
/// start or goal moved to a free frozen cell), kept only when the level stays solvable, and the
/// edited level solved again by CBS (its `optimal` plan and `needs_wait` set). The same level and
/// seed give the same result. Returns `(instance, edits)`: the new level and the edits, as
/// `{"flip": {"pos": [row, col], "hole": bool}}`, `{"move_start": {"agent", "to"}}` or
/// `{"move_goal": {"agent", "to"}}`. Raises `floe.BadInput` (a `ValueError`) for `edits` or
/// `max_attempts` of 0, and `floe.Failed` when no attempt kept the level solvable (naming the
/// edits, attempts and seed).
#[pyfunction]
#[pyo3(signature = (instance, *, edits=2, seed=0, max_attempts=16, max_nodes=5000))]
pub fn mutate<'py>(
    py: Python<'py>,
    instance: &Instance,
    edits: u32,
    seed: u64,
    max_attempts: u32,
    max_nodes: u64,
) -> PyResult<(Instance, Bound<'py, PyAny>)> {
    use floe_core::mutate::{mutate, MutateConfig, MutateError};
    let cfg = MutateConfig { edits, seed, max_attempts, max_nodes };
    let inst = &instance.inner;
    let m = py.detach(|| mutate(inst, &cfg)).map_err(|e| match e {
        MutateError::Config(_) | MutateError::Instance(_) => bad_input(e.to_string()),
        MutateError::NoRoom | MutateError::Unsolvable { .. } => failed(e.to_string()),
    })?;
    let edits = serde_json::to_value(&m.edits).map_err(|e| failed(e.to_string()))?;
    Ok((Instance { inner: m.instance }, json_to_py(py, &edits)?))
}

/// Verifies one plan, read by floe-core's one plan reader (as `floe verify` and
/// `floe_verify_plan` read plans): `plan` is a `str` (JSON when it begins with `{` or `[`, else a
/// free-text answer in the paper's format), or a plan in JSON form as Python values: a list of
/// move strings (`floe.solve(inst)["moves"]`), `{"moves": [...]}`, `{"paths": [...]}` or a list
/// of paths. Returns the verdict `floe verify` prints: `{"valid", "optimal", "failure", "soc",
/// "makespan", "optimal_soc"}`. An invalid plan is a verdict, not an error: one that is not a
/// plan at all is `parse_error` (or `wrong_agent_count`) with the reason in `failure["detail"]`.
///
/// Raises `floe.BadInput` for a value that is not JSON (a set, an object).
#[pyfunction]
pub fn verify<'py>(
    py: Python<'py>,
    instance: &Instance,
    plan: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let inst = &instance.inner;
    let (text, form) = if let Ok(text) = plan.cast::<PyString>() {
        (text.extract::<String>()?, PlanForm::Auto)
    } else {
        let json = py_to_json(plan).map_err(|e| bad_input(format!("plan: not a JSON value: {e}")))?;
        (json, PlanForm::Json)
    };
    let check = Check::against(floe_core::solver::optimum(inst));
    let verdict = py.detach(|| floe_core::verify(inst, Answer::Written(&text, form), check));
    json_to_py(py, &verdict.to_json_value())
}

/// The paper's prompt for an instance (what `floe prompt` prints for it).
#[pyfunction]
pub fn prompt(instance: &Instance) -> PyResult<String> {
    render_prompt(&instance.inner).map_err(bad_input)
}

/// Reads a free-text answer in the paper's format into a plan in JSON form
/// (`{"moves": [...]}` or `{"paths": [...]}`).
///
/// Raises `floe.BadInput` with the parser's message for an unreadable answer.
#[pyfunction]
pub fn parse_answer<'py>(py: Python<'py>, instance: &Instance, answer: &str) -> PyResult<Bound<'py, PyAny>> {
    let plan = parse_text(answer, &instance.inner).map_err(|e| bad_input(e.to_string()))?;
    py.import("json")?.call_method1("loads", (plan.to_json(),))
}

/// A plan written as an answer in the paper's format, one line an agent, which floe reads back
/// as the same plan: `moves` is one move string per agent (`W U D L R`, the form of
/// `floe.solve(inst)["moves"]`), `form` `"words"` (the prompt's example, `Agent 0: RIGHT DOWN`),
/// `"letters"` (`Agent 0: R D`) or `"coordinates"` (the cells each agent passes through from its
/// start, `Agent 0: (0, 0) -> (0, 1) -> (1, 1)`). An agent without a move writes one wait.
///
/// Raises `floe.BadInput` for a letter that is not a move, other than one string per agent, or
/// an unknown form.
#[pyfunction]
#[pyo3(signature = (instance, moves, form="words"))]
pub fn write_answer(instance: &Instance, moves: Vec<String>, form: &str) -> PyResult<String> {
    let form: AnswerForm = form.parse().map_err(bad_input)?;
    let moves = moves
        .iter()
        .enumerate()
        .map(|(a, m)| {
            floe_core::moves::parse_moves(m).map_err(|(i, ch)| {
                bad_input(format!("moves: agent {a}: {ch:?} at {i} is not a move (W U D L R)"))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    write_text(&instance.inner, &moves, form).map_err(|e| bad_input(format!("moves: {e}")))
}

/// Instances from a JSON, JSON Lines or JSON-array file (as the CLI reads `--instance`).
///
/// Raises `floe.BadInput` naming the file and line.
#[pyfunction]
pub fn read_instances(path: PathBuf) -> PyResult<Vec<Instance>> {
    let text = std::fs::read_to_string(&path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    parse_instances(&text).map(wrap).map_err(|(line, e)| {
        if line == 0 {
            bad_input(format!("{}: {e}", path.display()))
        } else {
            bad_input(format!("{}: line {line}: {e}", path.display()))
        }
    })
}

/// Writes instances as JSON Lines, one per line (the form `floe generate -o` writes).
#[pyfunction]
pub fn write_instances(path: PathBuf, instances: &Bound<'_, PyList>) -> PyResult<()> {
    let mut text = String::new();
    for item in instances.iter() {
        let inst = item.cast::<Instance>()?;
        text.push_str(&inst.get().inner.to_json());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| failed(format!("{}: {e}", path.display())))
}
