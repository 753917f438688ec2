//! The paper's comparison of environment designs, over any trainee: every contender (a design
//! of the rounds after round 0) trains from one shared starting model with the same settings and
//! seeds, each final model answers one held-out suite, and [`crate::stats::table`] gives the
//! valid / optimal rates with standard errors clustered by seed and instance, the rounds' gain
//! over the start and each contender's paired difference from `fixed`.
//!
//! [`run`] is the loop and the folder; a [`Contest`] is what a trainee brings: how the start and
//! each (contender, seed) run are trained, and how a trained model answers the suite. `floe
//! experiment` (floe's policy) and `floe.rounds.experiment` (a language model, through floe-py)
//! both run it.
//!
//! The folder: [`RECORD`] (the experiment's settings), [`START`]`/` (the start's run),
//! `<contender>/seed-<s>/` (each run), each with [`OUTCOMES`] once its model answered the
//! suite, and [`TABLE`]. Running it again resumes: finished runs (the contest's own resume) and
//! recorded outcomes are kept.

use std::path::Path;

use floe_core::progress::Progress;
use floe_core::suite::{build_suite_with_progress, SuiteConfig};
use floe_core::Instance;

use crate::error::RoundsError;
use crate::report::Outcome;
use crate::stats::{Outcomes, TableSetup};

/// The experiment's settings, as [`run`] was given them.
pub const RECORD: &str = "experiment.json";
/// The folder of the shared start's run.
pub const START: &str = "warm";
/// A model's outcomes on the suite, in its run's folder.
pub const OUTCOMES: &str = "suite-outcomes.json";
/// The table, as [`run`] returns it.
pub const TABLE: &str = "table.md";
/// The table's name of the start's row.
pub const START_ROW: &str = "warm start";

/// What a trainee brings to an experiment.
pub trait Contest {
    /// A trained model, as [`Contest::outcomes`] takes it.
    type Model;
    type Error: From<RoundsError>;

    /// Trains (or resumes) the shared starting model in `dir`.
    ///
    /// # Errors
    /// The trainee's.
    fn start(&mut self, dir: &Path, progress: &dyn Progress) -> Result<Self::Model, Self::Error>;

    /// Trains (or resumes) contender `contender`'s (an index of [`Plan::contenders`]) run with
    /// `seed` in `dir`, from the start.
    ///
    /// # Errors
    /// The trainee's.
    fn run(
        &mut self,
        contender: usize,
        seed: u64,
        dir: &Path,
        progress: &dyn Progress,
    ) -> Result<Self::Model, Self::Error>;

    /// The model's outcome on every suite instance, in order.
    ///
    /// # Errors
    /// The trainee's.
    fn outcomes(
        &mut self,
        model: Self::Model,
        suite: &[&Instance],
        progress: &dyn Progress,
    ) -> Result<Vec<Outcome>, Self::Error>;
}

/// One experiment.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The experiment's settings, written to [`RECORD`]. A folder whose record differs (but for
    /// its `seeds`: every run stands alone, so more seeds extend an experiment and fewer give
    /// the table of those alone) is refused.
    pub record: serde_json::Value,
    /// The contenders' names, in table order: their folders and rows.
    pub contenders: &'a [String],
    pub seeds: &'a [u64],
    /// The held-out suite the final models answer.
    pub suite: SuiteConfig,
    /// What the table's first line says of each run: its GRPO rounds and prompts a round.
    pub rounds: u32,
    pub samples: usize,
}

/// What [`run`] returns.
#[derive(Debug, Clone)]
pub struct Results {
    /// The table ([`TABLE`]).
    pub table: String,
    /// Its rows: the start's ([`START_ROW`], one seed), then each contender's, outcomes per seed.
    pub rows: Vec<(String, Outcomes)>,
}

fn without_seeds(v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("seeds");
    }
    v
}

/// `dir`'s recorded outcomes when they cover the suite, else the model's, recorded.
fn outcomes_in<C: Contest>(
    contest: &mut C,
    model: C::Model,
    dir: &Path,
    suite: &[&Instance],
    progress: &dyn Progress,
) -> Result<Vec<Outcome>, C::Error> {
    let file = dir.join(OUTCOMES);
    if let Ok(text) = std::fs::read_to_string(&file) {
        if let Ok(o) = serde_json::from_str::<Vec<Outcome>>(&text) {
            if o.len() == suite.len() {
                return Ok(o);
            }
        }
    }
    let got = contest.outcomes(model, suite, progress)?;
    if got.len() != suite.len() {
        let e = format!("{}: {} outcomes for {} suite instances", dir.display(), got.len(), suite.len());
        return Err(RoundsError::Input(e).into());
    }
    write(&file, &serde_json::to_string(&got).unwrap_or_default())?;
    Ok(got)
}

fn write(path: &Path, text: &str) -> Result<(), RoundsError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| RoundsError::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| RoundsError::io(path, e))
}

/// Runs (or resumes) the experiment in `out`: the suite, the start, then seed by seed every
/// contender (so that an interrupted experiment has as many finished runs of each, and its
/// finished seeds give a table), and the table.
///
/// # Errors
/// A folder holding another experiment, a suite configuration that gives nothing (before any
/// training), I/O, and what the contest returns.
pub fn run<C: Contest>(
    contest: &mut C,
    out: &Path,
    plan: &Plan<'_>,
    progress: &dyn Progress,
) -> Result<Results, C::Error> {
    let recorded = out.join(RECORD);
    if let Ok(text) = std::fs::read_to_string(&recorded) {
        let same = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|r| without_seeds(&r) == without_seeds(&plan.record));
        if !same {
            return Err(RoundsError::Input(format!(
                "{} holds another experiment (other settings or contenders): resume it with the same \
                 settings (any seeds), or give a new folder",
                out.display()
            ))
            .into());
        }
    }
    let record = serde_json::to_string_pretty(&plan.record).unwrap_or_default() + "\n";
    write(&recorded, &record)?;
    let cells = build_suite_with_progress(&plan.suite, progress).map_err(RoundsError::from)?;
    let suite: Vec<&Instance> = cells.iter().flat_map(|c| c.instances.iter()).collect();
    progress.line("experiment: the shared start");
    let start = out.join(START);
    let model = contest.start(&start, progress)?;
    let mut rows: Vec<(String, Outcomes)> =
        vec![(START_ROW.into(), vec![outcomes_in(contest, model, &start, &suite, progress)?])];
    let mut per: Vec<Outcomes> = vec![Vec::new(); plan.contenders.len()];
    for &seed in plan.seeds {
        for (c, (name, per_seed)) in plan.contenders.iter().zip(&mut per).enumerate() {
            let dir = out.join(name).join(format!("seed-{seed}"));
            progress.line(&format!("experiment: {name} with seed {seed}"));
            let model = contest.run(c, seed, &dir, progress)?;
            per_seed.push(outcomes_in(contest, model, &dir, &suite, progress)?);
        }
    }
    rows.extend(plan.contenders.iter().cloned().zip(per));
    let setup = TableSetup {
        suite: plan.suite.clone(),
        seeds: plan.seeds.len(),
        rounds: plan.rounds,
        samples: plan.samples,
    };
    let table = crate::stats::table(&setup, &suite, &rows);
    write(&out.join(TABLE), &table)?;
    Ok(Results { table, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::progress::Silent;
    use floe_core::suite::SuiteConfig;

    /// A contest whose models are answers fixed in advance: the start valid on the even
    /// instances, each contender on those below a share of the suite that grows with its index.
    #[derive(Default)]
    struct Stub {
        trained: Vec<String>,
        answered: usize,
    }

    impl Contest for Stub {
        type Model = f64;
        type Error = RoundsError;

        fn start(&mut self, dir: &Path, _: &dyn Progress) -> Result<f64, RoundsError> {
            self.trained.push(dir.file_name().unwrap().to_string_lossy().into());
            Ok(-1.0)
        }

        fn run(&mut self, c: usize, seed: u64, dir: &Path, _: &dyn Progress) -> Result<f64, RoundsError> {
            assert!(dir.ends_with(format!("seed-{seed}")));
            self.trained.push(format!("{c}/{seed}"));
            Ok(0.25 * (c + 1) as f64)
        }

        fn outcomes(
            &mut self,
            share: f64,
            suite: &[&Instance],
            _: &dyn Progress,
        ) -> Result<Vec<Outcome>, RoundsError> {
            self.answered += 1;
            let n = suite.len();
            Ok((0..n)
                .map(|i| {
                    let valid = if share < 0.0 { i % 2 == 0 } else { (i as f64) < share * n as f64 };
                    Outcome { valid, optimal: valid }
                })
                .collect())
        }
    }

    fn plan<'a>(contenders: &'a [String], seeds: &'a [u64], record: serde_json::Value) -> Plan<'a> {
        let suite = SuiteConfig {
            agents: vec![2],
            min_size: 3,
            max_size: 4,
            wait_ratios: vec![0.5],
            per_cell: 4,
            ..SuiteConfig::default()
        };
        Plan { record, contenders, seeds, suite, rounds: 2, samples: 8 }
    }

    #[test]
    fn runs_every_contender_and_seed_once_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["fixed".to_string(), "sec".to_string()];
        let record = serde_json::json!({"settings": 1, "seeds": [0, 1]});
        let mut s = Stub::default();
        let got = run(&mut s, dir.path(), &plan(&names, &[0, 1], record.clone()), &Silent).unwrap();
        assert_eq!(s.trained, ["warm", "0/0", "1/0", "0/1", "1/1"]);
        assert_eq!(s.answered, 5);
        let names_of: Vec<&str> = got.rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names_of, ["warm start", "fixed", "sec"]);
        assert_eq!(got.rows[2].1.len(), 2);
        assert!(got.table.contains("fixed") && got.table.contains("sec"), "{}", got.table);
        assert_eq!(std::fs::read_to_string(dir.path().join(TABLE)).unwrap(), got.table);
        assert!(dir.path().join("sec/seed-1").join(OUTCOMES).is_file());
        // Again: the runs are asked again (they resume themselves), the outcomes are read back.
        let mut again = Stub::default();
        let more = serde_json::json!({"settings": 1, "seeds": [0, 1, 2]});
        let got2 = run(&mut again, dir.path(), &plan(&names, &[0, 1], more), &Silent).unwrap();
        assert_eq!((again.trained.len(), again.answered), (5, 0));
        assert_eq!(got2.table, got.table);
        // Another experiment in the same folder is refused before anything runs.
        let mut other = Stub::default();
        let e = run(&mut other, dir.path(), &plan(&names, &[0], serde_json::json!({"settings": 2})), &Silent)
            .unwrap_err();
        assert!(e.to_string().contains("holds another experiment"), "{e}");
        assert!(other.trained.is_empty());
    }
}
