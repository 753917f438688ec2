//! The paper's comparison of environment designs, over any trainee: every contender (a design
//! of the rounds after round 0) trains from one shared starting model with the same settings and
//! seeds, each final model answers one held-out suite, and [`crate::stats::table`] gives the
//! valid / optimal rates with standard errors clustered by seed and instance, the rounds' gain
//! over the start and each contender's paired difference from `fixed`.
//!
//! Two layers. [`run_trials`] is the loop over contenders and seeds and the folder, for any
//! [`Trials`] (a run trained, its model's outcome kept): `floe levels` runs its PPO's comparison
//! of level samplers on it. [`run`] is the rounds' experiment on top: a [`Contest`] is what a
//! trainee brings: how the start and a run of given rounds are trained, and how a trained model
//! answers the suite. The designs
//! that are not a curriculum or an engineer are here, so that every trainee runs them
//! ([`Design`]): `fixed-random`, the paper's "GRPO (random)", and `best-of-n`, a hindsight search
//! over designs. `floe experiment` (floe's policy) and `floe.rounds.experiment` (a language
//! model, through floe-py) both run it.
//!
//! The folder: [`RECORD`] (the experiment's settings), [`START`]`/` (the start's run),
//! `<contender>/seed-<s>/` (each run; `best-of-n`'s holds `round-0/`, `round-<r>/candidate-<k>/`
//! and [`CHOICES`]), each with [`OUTCOMES`] once its model answered the suite, and [`TABLE`].
//! Every file is written whole ([`write_atomic`]). Running it again resumes: a run whose outcome
//! is recorded is not trained again, and an unfinished one resumes as its trainee does.

use std::path::{Path, PathBuf};

use floe_core::progress::Progress;
use floe_core::suite::{build_suite_with_progress, SuiteConfig};
use floe_core::Instance;
use floe_plugin_api::{Curriculum, History, PluginSpec, RoundConfig, SizeConfig};
use serde::{Deserialize, Serialize};

use crate::config::RoundsConfig;
use crate::design::random_config;
use crate::error::RoundsError;
use crate::folder::{stage_name, write_atomic, RunFolder};
use crate::report::Outcome;
use crate::state::Stage;
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
/// `best-of-n`'s choices, in its run's folder.
pub const CHOICES: &str = "choices.json";

/// Designs `best-of-n` tries each round after round 0.
pub const BEST_OF: usize = 4;

/// How a contender's rounds are designed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// By the designers of its rounds' settings ([`Contest::rounds`]): a curriculum, an
    /// engineer, or round 0's configuration kept.
    Own,
    /// The paper's "GRPO (random)": a configuration drawn from the design limits per seed
    /// ([`random_config`]), kept from round 0 on.
    FixedRandom,
    /// The upper reference, a hindsight search: each round after round 0, [`BEST_OF`] designs
    /// tried for that round alone from the same branch of the run ([`RunFolder::fork`]), the one
    /// with the best validation kept ([`candidates`]).
    BestOfN,
}

/// One contender of a [`Plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its name: its folder and its row.
    pub name: String,
    /// How its rounds are designed.
    pub design: Design,
}

/// One run a [`Contest`] trains: contender `contender`'s (an index of [`Plan::contenders`])
/// with `seed`, from the start, under `rounds` (the contender's own, or as its [`Design`] sets
/// them), in `dir`, up to and including round `stop_after` (every round when None; a later call
/// goes on from there).
#[derive(Debug, Clone, Copy)]
pub struct ContestRun<'a> {
    pub contender: usize,
    pub seed: u64,
    pub rounds: &'a RoundsConfig,
    pub dir: &'a Path,
    pub stop_after: Option<u32>,
}

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

    /// The rounds' settings of contender `contender`'s runs with `seed`: their count, prompts,
    /// round 0, design limits and the contender's own designers.
    ///
    /// # Errors
    /// The trainee's.
    fn rounds(&mut self, contender: usize, seed: u64) -> Result<RoundsConfig, Self::Error>;

    /// Trains (or resumes) `run`.
    ///
    /// # Errors
    /// The trainee's.
    fn train(&mut self, run: &ContestRun<'_>, progress: &dyn Progress) -> Result<Self::Model, Self::Error>;

    /// What `run`'s `config.json` records (its settings, as [`Contest::train`] writes them): a
    /// branch of a `best-of-n` run is forked with it.
    ///
    /// # Errors
    /// The trainee's.
    fn record(&mut self, run: &ContestRun<'_>) -> Result<serde_json::Value, Self::Error>;

    /// The curriculum `spec` names (`best-of-n`'s `frontier` candidate).
    ///
    /// # Errors
    /// A spec that names no curriculum.
    fn curriculum(&mut self, spec: &PluginSpec) -> Result<Box<dyn Curriculum>, Self::Error>;

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
    /// The contenders, in table order.
    pub contenders: &'a [Entry],
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

/// The runs of an experiment, trained and answered one contender and seed at a time, each in its
/// own folder: what [`run`] asks of a [`Contest`], and `floe levels` of its PPO.
pub trait Trials {
    /// A trained model, as [`Trials::answer`] takes it.
    type Model;
    /// What a trained model gives on the held-out sets, kept in its run's folder ([`OUTCOMES`]).
    type Outcome: Serialize + serde::de::DeserializeOwned;
    type Error: From<RoundsError>;

    /// Trains (or resumes) contender `contender`'s run with `seed` in `dir`.
    ///
    /// # Errors
    /// The trainee's.
    fn train(
        &mut self,
        contender: usize,
        seed: u64,
        dir: &Path,
        progress: &dyn Progress,
    ) -> Result<Self::Model, Self::Error>;

    /// `model`'s outcome on the held-out sets.
    ///
    /// # Errors
    /// The trainee's.
    fn answer(&mut self, model: Self::Model, progress: &dyn Progress) -> Result<Self::Outcome, Self::Error>;

    /// Whether a recorded outcome of contender `contender`'s run with `seed` is one this
    /// experiment would make now; a run whose outcome is not is trained and answered again.
    ///
    /// # Errors
    /// The trainee's.
    fn current(&mut self, contender: usize, seed: u64, outcome: &Self::Outcome) -> Result<bool, Self::Error>;
}

/// The folder of contender `name`'s run with `seed` in the experiment folder `out`.
#[must_use]
pub fn run_dir(out: &Path, name: &str, seed: u64) -> PathBuf {
    out.join(name).join(format!("seed-{seed}"))
}

/// The outcome recorded in the run folder `dir` ([`OUTCOMES`]), if it reads as one.
#[must_use]
pub fn recorded<O: serde::de::DeserializeOwned>(dir: &Path) -> Option<O> {
    serde_json::from_str(&std::fs::read_to_string(dir.join(OUTCOMES)).ok()?).ok()
}

/// The seeds with a recorded outcome of contender `name` in `out`, in ascending order.
#[must_use]
pub fn recorded_seeds(out: &Path, name: &str) -> Vec<u64> {
    let mut seeds: Vec<u64> = std::fs::read_dir(out.join(name))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("seed-")?.parse().ok())
        .filter(|&s| out.join(name).join(format!("seed-{s}")).join(OUTCOMES).is_file())
        .collect();
    seeds.sort_unstable();
    seeds
}

/// Checks that the experiment folder `out` may hold `record`'s runs (the experiment's settings,
/// [`RECORD`]): it has no record, or one that differs from `record` in its `seeds` alone (every
/// run stands alone, so more seeds extend an experiment and fewer give the table of those
/// alone). Nothing is written.
///
/// # Errors
/// Another experiment's folder.
pub fn check(out: &Path, record: &serde_json::Value) -> Result<(), RoundsError> {
    if let Ok(text) = std::fs::read_to_string(out.join(RECORD)) {
        let same = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|r| without_seeds(&r) == without_seeds(record));
        if !same {
            return Err(RoundsError::Input(format!(
                "{} holds another experiment (other settings or contenders): resume it with the same \
                 settings (any seeds), or give a new folder",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Opens the experiment folder `out` for `record`: [`check`]ed, then the record written.
///
/// # Errors
/// Another experiment's folder, and I/O.
pub fn open(out: &Path, record: &serde_json::Value) -> Result<(), RoundsError> {
    check(out, record)?;
    write(&out.join(RECORD), &(serde_json::to_string_pretty(record).unwrap_or_default() + "\n"))
}

/// Trains and answers (or reads back) every run of `contenders` × `seeds` in `out`, seed by seed
/// (so that an interrupted experiment has as many finished runs of each): a run whose outcome is
/// recorded and current is neither trained nor answered again. Returns the outcomes per
/// contender, per seed.
///
/// # Errors
/// I/O, and what `trials` returns.
pub fn run_trials<T: Trials>(
    trials: &mut T,
    out: &Path,
    contenders: &[Entry],
    seeds: &[u64],
    progress: &dyn Progress,
) -> Result<Vec<Vec<T::Outcome>>, T::Error> {
    let mut per: Vec<Vec<T::Outcome>> = contenders.iter().map(|_| Vec::new()).collect();
    for &seed in seeds {
        for (c, (entry, per_seed)) in contenders.iter().zip(&mut per).enumerate() {
            let dir = run_dir(out, &entry.name, seed);
            if let Some(o) = recorded::<T::Outcome>(&dir) {
                if trials.current(c, seed, &o)? {
                    per_seed.push(o);
                    continue;
                }
                progress.line(&format!(
                    "experiment: {} with seed {seed} again: its recorded outcome is not one this experiment makes now",
                    entry.name
                ));
            }
            progress.line(&format!("experiment: {} with seed {seed}", entry.name));
            let model = trials.train(c, seed, &dir, progress)?;
            let o = trials.answer(model, progress)?;
            write(&dir.join(OUTCOMES), &serde_json::to_string(&o).unwrap_or_default())?;
            per_seed.push(o);
        }
    }
    Ok(per)
}

/// A [`Contest`]'s runs as [`Trials`]: each contender trained as its design has it, its model
/// answering the suite.
struct ContestTrials<'a, C: Contest> {
    contest: &'a mut C,
    contenders: &'a [Entry],
    suite: &'a [&'a Instance],
}

impl<C: Contest> Trials for ContestTrials<'_, C> {
    type Model = C::Model;
    type Outcome = Vec<Outcome>;
    type Error = C::Error;

    fn train(
        &mut self,
        c: usize,
        seed: u64,
        dir: &Path,
        progress: &dyn Progress,
    ) -> Result<C::Model, C::Error> {
        train_contender(self.contest, c, self.contenders[c].design, seed, dir, progress)
    }

    fn answer(&mut self, model: C::Model, progress: &dyn Progress) -> Result<Vec<Outcome>, C::Error> {
        answer(self.contest, model, self.suite, progress)
    }

    fn current(&mut self, _: usize, _: u64, outcome: &Vec<Outcome>) -> Result<bool, C::Error> {
        Ok(outcome.len() == self.suite.len())
    }
}

/// The model's outcomes on the suite, checked to cover it.
fn answer<C: Contest>(
    contest: &mut C,
    model: C::Model,
    suite: &[&Instance],
    progress: &dyn Progress,
) -> Result<Vec<Outcome>, C::Error> {
    let got = contest.outcomes(model, suite, progress)?;
    if got.len() != suite.len() {
        let e = format!("{} outcomes for {} suite instances", got.len(), suite.len());
        return Err(RoundsError::Input(e).into());
    }
    Ok(got)
}

fn write(path: &Path, text: &str) -> Result<(), RoundsError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| RoundsError::io(dir, e))?;
    }
    write_atomic(path, text.as_bytes())
}

/// Runs (or resumes) the experiment in `out`: the suite, the start, then seed by seed every
/// contender ([`run_trials`]), and the table.
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
    open(out, &plan.record)?;
    let cells = build_suite_with_progress(&plan.suite, progress).map_err(RoundsError::from)?;
    let suite: Vec<&Instance> = cells.iter().flat_map(|c| c.instances.iter()).collect();
    progress.line("experiment: the shared start");
    let start = out.join(START);
    let model = contest.start(&start, progress)?;
    let start_outcomes = match recorded::<Vec<Outcome>>(&start).filter(|o| o.len() == suite.len()) {
        Some(o) => o,
        None => {
            let o = answer(contest, model, &suite, progress)?;
            write(&start.join(OUTCOMES), &serde_json::to_string(&o).unwrap_or_default())?;
            o
        }
    };
    let mut rows: Vec<(String, Outcomes)> = vec![(START_ROW.into(), vec![start_outcomes])];
    let mut trials = ContestTrials { contest, contenders: plan.contenders, suite: &suite };
    let per = run_trials(&mut trials, out, plan.contenders, plan.seeds, progress)?;
    rows.extend(plan.contenders.iter().map(|e| e.name.clone()).zip(per));
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

/// Trains (or resumes) contender `c`'s run with `seed` in `dir`, as its design has it.
fn train_contender<C: Contest>(
    contest: &mut C,
    c: usize,
    design: Design,
    seed: u64,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<C::Model, C::Error> {
    let mut rounds = contest.rounds(c, seed)?;
    match design {
        Design::Own => {}
        Design::FixedRandom => {
            let drawn = random_config(&rounds.design_limits, seed)?;
            rounds.round0 = Some(drawn.clone());
            rounds.curriculum = Some(fixed_spec(&drawn));
        }
        Design::BestOfN => return best_of(contest, c, seed, &rounds, dir, progress),
    }
    contest.train(&ContestRun { contender: c, seed, rounds: &rounds, dir, stop_after: None }, progress)
}

fn fixed_spec(config: &RoundConfig) -> PluginSpec {
    PluginSpec { name: "fixed".into(), params: serde_json::json!({ "config": config }), library: None }
}

fn schedule_spec(configs: &[RoundConfig]) -> PluginSpec {
    PluginSpec { name: "schedule".into(), params: serde_json::json!({ "configs": configs }), library: None }
}

/// The designs `best-of-n` tries for the round after `history`: `round0`, its smaller half of
/// the sizes, its larger half (each at equal data ratios), and the `frontier` curriculum's
/// answer to the history.
///
/// # Errors
/// The `frontier` curriculum's.
pub fn candidates<C: Contest>(
    contest: &mut C,
    round0: &RoundConfig,
    history: &History,
) -> Result<Vec<RoundConfig>, C::Error> {
    let mut sizes = round0.sizes.clone();
    sizes.sort_by_key(|s| s.size);
    let part = |part: &[SizeConfig]| RoundConfig {
        sizes: part.iter().map(|s| SizeConfig { data_ratio: 1.0 / part.len() as f64, ..s.clone() }).collect(),
        ..round0.clone()
    };
    let half = sizes.len().div_ceil(2);
    let spec =
        PluginSpec { name: "frontier".into(), params: serde_json::json!({ "base": round0 }), library: None };
    let designed = contest
        .curriculum(&spec)?
        .next_config(history)
        .map_err(|e| RoundsError::Input(format!("frontier: {e}")))?;
    let mut out = vec![round0.clone(), part(&sizes[..half]), part(&sizes[half..]), designed];
    out.truncate(BEST_OF);
    Ok(out)
}

/// The validation valid rate of a finished round, as the run recorded it.
fn round_valid(folder: &RunFolder, r: u32) -> Result<f64, RoundsError> {
    let state = folder.read_state()?.ok_or_else(|| {
        RoundsError::Input(format!("{}: no run state after round {r}", folder.root().display()))
    })?;
    state.evals.iter().find(|e| e.stage == Stage::Round(r)).map(|e| e.valid).ok_or_else(|| {
        RoundsError::Input(format!("{}: round {r} has no validation", folder.root().display()))
    })
}

/// One choice of `best-of-n`: the round, each candidate's validation valid rate, the chosen one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub round: u32,
    pub valid: Vec<f64>,
    pub chosen: usize,
    pub config: RoundConfig,
}

/// Runs (or resumes) `best-of-n` with one seed in `dir`: round 0 in `round-0/` (on `rounds`'
/// round 0, else floe's default), then for each later round every candidate design
/// ([`candidates`]) for that round alone, from the chosen branch so far ([`RunFolder::fork`], in
/// `round-<r>/candidate-<k>/`), the best on the validation set kept (the first among equals).
/// [`CHOICES`] records the choices. Returns the final branch's model.
fn best_of<C: Contest>(
    contest: &mut C,
    c: usize,
    seed: u64,
    rounds: &RoundsConfig,
    dir: &Path,
    progress: &dyn Progress,
) -> Result<C::Model, C::Error> {
    let round0 = rounds.round0.clone().unwrap_or_else(RoundConfig::round0_default);
    let with =
        |plan: &[RoundConfig]| RoundsConfig { curriculum: Some(schedule_spec(plan)), ..rounds.clone() };
    let round_dir = |r: u32| dir.join(stage_name(Stage::Round(r)).unwrap_or_default());
    let mut at = round_dir(0);
    let mut plan = vec![round0.clone()];
    let first = with(&plan);
    let run = ContestRun { contender: c, seed, rounds: &first, dir: &at, stop_after: Some(0) };
    let mut model = contest.train(&run, progress)?;
    let mut choices = Vec::new();
    for r in 1..rounds.rounds {
        let history = RunFolder::new(&at).read_state()?.map(|s| s.history).unwrap_or_default();
        let mut tried = Vec::new();
        for (k, design) in candidates(contest, &round0, &history)?.into_iter().enumerate() {
            let branch = round_dir(r).join(format!("candidate-{k}"));
            let mut p = plan.clone();
            p.push(design.clone());
            let schedule = with(&p);
            let run = ContestRun { contender: c, seed, rounds: &schedule, dir: &branch, stop_after: Some(r) };
            if RunFolder::new(&branch).read_state()?.is_none() {
                let record = contest.record(&run)?;
                RunFolder::new(&at).fork(&branch, &record)?;
            }
            progress.line(&format!("experiment: best-of-n round {r}, candidate {k}"));
            let m = contest.train(&run, progress)?;
            tried.push((round_valid(&RunFolder::new(&branch), r)?, design, branch, m));
        }
        let best = (0..tried.len()).fold(0, |b, i| if tried[i].0 > tried[b].0 { i } else { b });
        choices.push(Choice {
            round: r,
            valid: tried.iter().map(|t| t.0).collect(),
            chosen: best,
            config: tried[best].1.clone(),
        });
        let (_, design, branch, m) = tried.swap_remove(best);
        plan.push(design);
        (at, model) = (branch, m);
    }
    write(&dir.join(CHOICES), &(serde_json::to_string_pretty(&choices).unwrap_or_default() + "\n"))?;
    Ok(model)
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

        fn rounds(&mut self, _: usize, _: u64) -> Result<RoundsConfig, RoundsError> {
            Ok(RoundsConfig::default())
        }

        fn train(&mut self, run: &ContestRun<'_>, _: &dyn Progress) -> Result<f64, RoundsError> {
            assert!(run.dir.ends_with(format!("seed-{}", run.seed)) && run.stop_after.is_none());
            self.trained.push(format!("{}/{}", run.contender, run.seed));
            Ok(0.25 * (run.contender + 1) as f64)
        }

        fn record(&mut self, _: &ContestRun<'_>) -> Result<serde_json::Value, RoundsError> {
            Ok(serde_json::Value::Null)
        }

        fn curriculum(&mut self, spec: &PluginSpec) -> Result<Box<dyn Curriculum>, RoundsError> {
            Err(RoundsError::Input(format!("no curriculum {}", spec.name)))
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

    fn plan<'a>(contenders: &'a [Entry], seeds: &'a [u64], record: serde_json::Value) -> Plan<'a> {
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
        let names = ["fixed", "sec"].map(|n| Entry { name: n.into(), design: Design::Own });
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
        // Again: the start resumes itself, the runs' outcomes are read back and nothing else trains.
        let mut again = Stub::default();
        let more = serde_json::json!({"settings": 1, "seeds": [0, 1, 2]});
        let got2 = run(&mut again, dir.path(), &plan(&names, &[0, 1], more), &Silent).unwrap();
        assert_eq!((again.trained.as_slice(), again.answered), (["warm".to_string()].as_slice(), 0));
        assert_eq!(got2.table, got.table);
        // Another experiment in the same folder is refused before anything runs.
        let mut other = Stub::default();
        let e = run(&mut other, dir.path(), &plan(&names, &[0], serde_json::json!({"settings": 2})), &Silent)
            .unwrap_err();
        assert!(e.to_string().contains("holds another experiment"), "{e}");
        assert!(other.trained.is_empty());
    }
}
