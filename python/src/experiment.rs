//! The paper's comparison of designs over a trainee written in Python: floe-rounds' experiment
//! (the loop `floe experiment` runs for floe's own policy), its contenders, and the paired
//! difference its table reports.

use floe_core::progress::Progress;
use floe_plugin_api::{Curriculum, PluginSpec};
use floe_plugin_registry as registry;
use floe_rounds::experiment::{ContestRun, Design, Entry};
use floe_rounds::{RoundsError, RunRecord};
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::convert::json_to_py;
use crate::driver::{drive, Run};
use crate::errors::{bad_input, config_text, raised, rounds as rounds_error};
use crate::settings::RunSettings;
use crate::trainee::{answers, Lines};

/// One design of the rounds after round 0 in an experiment: `engineer` (`fixed`: none) and a
/// curriculum, or `design` `"fixed-random"` (a configuration drawn per seed from the design
/// limits, kept from round 0 on: the paper's "GRPO (random)") or `"best-of-n"` (the upper
/// reference: each round, 4 designs tried from the same branch, the best on validation kept).
#[pyclass(module = "floe._floe", frozen)]
#[derive(Debug, Clone, serde::Serialize)]
pub struct Contender {
    name: String,
    engineer: String,
    curriculum: Option<String>,
    curriculum_params: serde_json::Value,
    design: Design,
}

#[pymethods]
impl Contender {
    #[new]
    #[pyo3(signature = (name, engineer="fixed".to_string(), curriculum=None, curriculum_params=None, design="own"))]
    fn new(
        name: String,
        engineer: String,
        curriculum: Option<String>,
        curriculum_params: Option<&Bound<'_, PyAny>>,
        design: &str,
    ) -> PyResult<Self> {
        let params =
            curriculum_params.map_or(Ok(serde_json::Value::Null), |p| from_py("curriculum_params", p))?;
        let design: Design = serde_json::from_value(serde_json::json!(design))
            .map_err(|_| bad_input(format!("design {design:?}: own, fixed-random or best-of-n")))?;
        if design != Design::Own && (engineer != "fixed" || curriculum.is_some()) {
            return Err(bad_input(
                "a fixed-random or best-of-n contender designs its rounds itself: no engineer or curriculum",
            ));
        }
        Ok(Self { name, engineer, curriculum, curriculum_params: params, design })
    }

    /// How its rounds are designed: `"own"` (its engineer or curriculum), `"fixed-random"`,
    /// `"best-of-n"`.
    #[getter]
    fn design(&self) -> String {
        serde_json::to_value(self.design).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[getter]
    fn engineer(&self) -> &str {
        &self.engineer
    }

    #[getter]
    fn curriculum(&self) -> Option<&str> {
        self.curriculum.as_deref()
    }

    #[getter]
    fn curriculum_params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.curriculum_params)
    }

    /// `base` with this contender's designers and `seed`.
    fn config(&self, base: &RunSettings, seed: u64) -> PyResult<RunSettings> {
        base.with(serde_json::json!({
            "seed": seed,
            "engineer": self.engineer,
            "curriculum": self.curriculum,
            "curriculum_params": self.curriculum_params,
        }))
    }

    fn __repr__(&self) -> String {
        format!("Contender({})", serde_json::to_value(self).unwrap_or_default())
    }
}

/// A Python experiment's side: `make(contender, seed, folder)` makes a trainee, which a run then
/// drives (or resumes) with the contender's settings; the trainee's `answer(instances)` answers
/// the suite.
struct PyContest {
    make: Py<PyAny>,
    settings: RunSettings,
    contenders: Vec<Py<Contender>>,
    first_seed: u64,
    lines: Lines,
}

impl PyContest {
    /// Contender `c`'s settings with `seed`.
    fn settings(&self, c: usize, seed: u64) -> Result<floe_rounds::RunSettings, RoundsError> {
        Python::attach(|py| {
            Ok(self.contenders[c].bind(py).get().config(&self.settings, seed)?.settings().clone())
        })
        .map_err(raised)
    }

    /// What `run`'s `config.json` records: the contender, its settings, and the rounds when its
    /// design set them.
    fn run_record(&self, run: &ContestRun<'_>) -> Result<RunRecord, RoundsError> {
        let settings = self.settings(run.contender, run.seed)?;
        let own = settings.rounds_config()?;
        let name = Python::attach(|py| self.contenders[run.contender].bind(py).get().name.clone());
        let rounds = (run.rounds != &own).then(|| run.rounds.clone());
        Ok(RunRecord { experiment: Some(name), rounds, ..RunRecord::of(settings) })
    }
}

impl floe_rounds::experiment::Contest for PyContest {
    type Model = Py<PyAny>;
    type Error = RoundsError;

    fn start(&mut self, dir: &std::path::Path, _: &dyn Progress) -> Result<Py<PyAny>, RoundsError> {
        let folder = dir.display().to_string();
        Python::attach(|py| self.make.bind(py).call1((py.None(), self.first_seed, folder)).map(Bound::unbind))
            .map_err(raised)
    }

    fn rounds(&mut self, contender: usize, seed: u64) -> Result<floe_rounds::RoundsConfig, RoundsError> {
        self.settings(contender, seed)?.rounds_config()
    }

    fn train(&mut self, run: &ContestRun<'_>, _: &dyn Progress) -> Result<Py<PyAny>, RoundsError> {
        let record = self.run_record(run)?;
        Python::attach(|py| {
            let c = &self.contenders[run.contender];
            let folder = run.dir.display().to_string();
            let trainee = self.make.bind(py).call1((c.clone_ref(py), run.seed, &folder))?.unbind();
            let drive_run = Run {
                out: run.dir.to_path_buf(),
                record,
                resume: true,
                overwrite: false,
                stop_after: run.stop_after,
            };
            drive(py, &trainee, drive_run, None, &self.lines.again(py))?;
            Ok(trainee)
        })
        .map_err(raised)
    }

    fn record(&mut self, run: &ContestRun<'_>) -> Result<serde_json::Value, RoundsError> {
        Ok(self.run_record(run)?.to_value())
    }

    fn curriculum(&mut self, spec: &PluginSpec) -> Result<Box<dyn Curriculum>, RoundsError> {
        registry::curriculum(spec).map_err(|e| RoundsError::Input(e.to_string()))
    }

    fn outcomes(
        &mut self,
        trainee: Py<PyAny>,
        suite: &[&floe_core::Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<floe_rounds::Outcome>, RoundsError> {
        let answers = answers(&trainee, suite.iter().copied(), progress)?;
        Ok(floe_rounds::report::score_each(suite, &answers)?.1)
    }
}

/// Runs (or resumes) the paper's comparison of designs in `out` over any trainee, with
/// floe-rounds' loop, the one `floe experiment` runs for floe's own policy: every contender
/// (`contenders`, `floe.rounds.Contender`s in table order) trains from the same start with
/// `settings` and each of `seeds`, the final models answer one held-out suite, and the table
/// gives valid / optimal rates with standard errors clustered by seed and instance, the rounds'
/// gain over the start, and each contender's paired difference from `fixed`.
///
/// `make_trainee(contender, seed, folder)` makes a fresh trainee from the shared start
/// (`contender` None: the start itself, whose suite outcomes are the table's `warm start` row);
/// a contender's engineer is the one its settings name. `suite` holds `floe.suite`'s settings
/// (`agents`, `max_size`, `per_cell`, …; the others its defaults). The folder: `warm/` (the
/// start's suite outcomes), `<contender>/seed-<s>/` (each run's folder, with
/// `suite-outcomes.json` once evaluated), `experiment.json` (a folder holding another
/// experiment, but for `seeds`, is refused) and `table.md`. Running it again resumes: finished
/// runs and evaluations are kept. Returns the table as Markdown.
#[pyfunction]
#[pyo3(signature = (make_trainee, settings, *, out, contenders, seeds, suite, say=None))]
#[allow(clippy::too_many_arguments)]
pub fn experiment(
    py: Python<'_>,
    make_trainee: Py<PyAny>,
    settings: &RunSettings,
    out: String,
    contenders: Vec<Py<Contender>>,
    seeds: Vec<u64>,
    suite: &Bound<'_, PyAny>,
    say: Option<Py<PyAny>>,
) -> PyResult<String> {
    let given: serde_json::Map<String, serde_json::Value> = from_py("suite", suite)?;
    let mut defaults = serde_json::to_value(floe_core::suite::SuiteConfig::default()).unwrap_or_default();
    if let Some(o) = defaults.as_object_mut() {
        for (k, v) in given.clone() {
            if !o.contains_key(&k) {
                return Err(config_text(format!("suite: unknown `{k}`")));
            }
            o.insert(k, v);
        }
    }
    let suite = serde_json::from_value(defaults).map_err(|e| config_text(format!("suite: {e}")))?;
    let Some(&first_seed) = seeds.first() else { return Err(config_text("seeds: at least one")) };
    if contenders.is_empty() {
        return Err(config_text("contenders: at least one"));
    }
    let entries: Vec<Entry> =
        contenders.iter().map(|c| Entry { name: c.get().name.clone(), design: c.get().design }).collect();
    let record = serde_json::json!({
        "settings": settings.settings().to_value(),
        "contenders": contenders.iter().map(|c| serde_json::to_value(c.get()).unwrap_or_default()).collect::<Vec<_>>(),
        "suite": given,
        "seeds": seeds,
    });
    let plan = floe_rounds::experiment::Plan {
        record,
        contenders: &entries,
        seeds: &seeds,
        suite,
        rounds: settings.settings().rounds,
        samples: settings.settings().samples,
    };
    let lines = Lines(say);
    let progress = lines.again(py);
    let mut contest =
        PyContest { make: make_trainee, settings: settings.clone(), contenders, first_seed, lines };
    let got = py.detach(|| floe_rounds::experiment::run(&mut contest, out.as_ref(), &plan, &progress));
    Ok(got.map_err(rounds_error)?.table)
}

/// Mean and standard error, in percentage points, of the paired differences `a − b` over every
/// (seed, instance) pair, the standard error clustered by seed and by instance (`floe
/// experiment`'s "all" column): `a[s][i]` is seed `s`'s outcome (True: valid, or optimal) on
/// instance `i`; a side with one seed pairs with every seed of the other (a shared start).
///
/// Raises `floe.BadInput` for sides whose seeds or instances do not pair up.
#[pyfunction]
pub fn paired_difference(a: Vec<Vec<bool>>, b: Vec<Vec<bool>>) -> PyResult<(f64, f64)> {
    floe_rounds::stats::paired_difference(&a, &b).map_err(bad_input)
}
