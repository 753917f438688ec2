//! `floe experiment`: the paper's comparison of environment designs (see
//! `floe_train::experiment`): one shared warm start on 2-agent boards, the same GRPO budget under
//! each curriculum and the LLM engineer, several seeds, one held-out suite of 3, 4 and 5 agents,
//! and a paper-style table; then the chart of each contender's paired difference from `fixed`
//! (`<out>/experiment.png`, see `crate::render::chart`), drawn from the suite outcomes the runs
//! left in the folder. Re-running the same command resumes.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use floe_plugin_host::PluginSpec;
use floe_train::experiment::{run_experiment, Budget, ContenderName, Experiment};
use floe_train::tokens::Inputs;
use floe_train::{Outcome, TrainError};

use crate::cmd::engineer::EngineerFlags;
use crate::error::CliError;
use crate::render::chart::{self, Difference};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output folder (runs, suite outcomes, table.md, and experiment.png: the chart of each
    /// contender's paired difference from fixed on the whole suite, valid and optimal rates with
    /// ±2 standard-error bars); the same folder resumes.
    #[arg(long, default_value = "out/experiment")]
    out: PathBuf,
    /// `small` (about half an hour on 2 cores), `medium` (about two hours) or `full` (hours
    /// more).
    #[arg(
        long,
        default_value = "small",
        value_parser = PossibleValuesParser::new(Budget::ALL.map(Budget::name)).try_map(|s| s.parse::<Budget>())
    )]
    budget: Budget,
    /// The contenders, comma-separated (in table order whatever the order here) [every one;
    /// best-of-n, the upper reference, from `medium` on].
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(ContenderName::ALL.map(ContenderName::name))
            .try_map(|s| s.parse::<ContenderName>())
    )]
    contenders: Option<Vec<ContenderName>>,
    /// The trainee: `planner` (tokens with the cost-to-go and each move's status) or `map`
    /// (only the grid, the starts and goals, and its own moves, as the paper's model reads).
    #[arg(long, default_value = "planner", value_parser = PossibleValuesParser::new(["planner", "map"])
        .try_map(|s| serde_json::from_value::<Inputs>(serde_json::Value::String(s))))]
    inputs: Inputs,
    /// Seeds per contender (default: the budget's).
    #[arg(long)]
    seeds: Option<u64>,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten, next_help_heading = "Engineer flags, over the `engineer` contender's embedded model")]
    engineer: EngineerFlags,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let engineer = a
        .engineer
        .apply(Some(PluginSpec::builtin("embedded")))?
        .unwrap_or_else(|| PluginSpec::builtin("embedded"));
    let mut x = Experiment::new(a.budget, engineer, a.inputs);
    let wanted = a.contenders.clone().unwrap_or_else(|| a.budget.contenders());
    x.contenders.retain(|c| wanted.contains(&c.name));
    if let Some(n) = a.seeds {
        if n == 0 {
            return Err(CliError::Input("--seeds must be at least 1".into()));
        }
        x.seeds = (0..n).collect();
    }
    let resolve = |cfg: &floe_train::TrainConfig| {
        crate::cmd::train::plugins(cfg).map_err(|e| TrainError::Input(e.to_string()))
    };
    let bars = crate::progress::Bars::new("floe experiment", a.quiet);
    let table = run_experiment(&x, &a.out, &resolve, &bars).map_err(crate::cmd::train::cli_error)?;
    crate::emit(None, &table)?;
    match draw_chart(&x, &a.out)? {
        Some(p) => eprintln!(
            "floe experiment: the chart of the paired differences from fixed is {} (beside table.md)",
            p.display()
        ),
        None => {
            eprintln!("floe experiment: no chart: the paired differences need `fixed` among the contenders")
        }
    }
    Ok(())
}

/// The chart's file in the experiment's folder.
pub const CHART: &str = "experiment.png";

/// The suite outcomes in `files`, one file per seed, as `floe_train::experiment` leaves them:
/// `<out>/<contender>/seed-<s>/suite-outcomes.json`, `<out>/warm/suite-outcomes.json`.
fn outcomes(files: &[PathBuf]) -> Result<Vec<Vec<Outcome>>, CliError> {
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f)
                .map_err(|e| CliError::input(f, format!("cannot read the suite outcomes: {e}")))?;
            serde_json::from_str::<Vec<Outcome>>(&text)
                .map_err(|e| CliError::input(f, format!("not a list of suite outcomes: {e}")))
        })
        .collect()
}

/// The chart's rows: the warm start, then every contender but `fixed`, each paired with `fixed`
/// on the whole suite; and the suite's size. `None` when `fixed` is not a contender.
fn differences(x: &Experiment, out: &Path) -> Result<Option<(Vec<Difference>, usize)>, CliError> {
    if !x.contenders.iter().any(|c| c.name == ContenderName::Fixed) {
        return Ok(None);
    }
    let seeds = |name: &str| -> Vec<PathBuf> {
        x.seeds.iter().map(|s| out.join(name).join(format!("seed-{s}")).join("suite-outcomes.json")).collect()
    };
    let flags = |o: &[Vec<Outcome>], f: fn(&Outcome) -> bool| -> Vec<Vec<bool>> {
        o.iter().map(|seed| seed.iter().map(f).collect()).collect()
    };
    let fixed = outcomes(&seeds(ContenderName::Fixed.name()))?;
    let row = |name: &str, o: &[Vec<Outcome>], reference: bool| -> Result<Difference, CliError> {
        let pair = |f: fn(&Outcome) -> bool| {
            floe_train::experiment::paired_difference(&flags(o, f), &flags(&fixed, f))
                .map_err(|e| CliError::Failed(format!("{}: {name} against fixed: {e}", out.display())))
        };
        Ok(Difference {
            name: name.into(),
            valid: pair(|o| o.valid)?,
            optimal: pair(|o| o.optimal)?,
            reference,
        })
    };
    let warm = outcomes(&[out.join("warm").join("suite-outcomes.json")])?;
    let mut rows = vec![row("warm start", &warm, true)?];
    for c in x.contenders.iter().filter(|c| c.name != ContenderName::Fixed) {
        rows.push(row(c.name.name(), &outcomes(&seeds(c.name.name()))?, false)?);
    }
    Ok(Some((rows, warm[0].len())))
}

/// Draws `<out>/experiment.png` from the suite outcomes in `out`; its path, or `None` when
/// `fixed` is not a contender.
fn draw_chart(x: &Experiment, out: &Path) -> Result<Option<PathBuf>, CliError> {
    let Some((rows, instances)) = differences(x, out)? else { return Ok(None) };
    let title = format!(
        "floe experiment: paired difference from fixed, {} seed{} × {} suite instances, {} GRPO rounds",
        x.seeds.len(),
        if x.seeds.len() == 1 { "" } else { "s" },
        instances,
        x.rounds
    );
    let path = out.join(CHART);
    let png = chart::png(&title, &rows)
        .map_err(|e| CliError::Failed(format!("{}: drawing the chart: {e}", path.display())))?;
    std::fs::write(&path, png).map_err(|e| CliError::input(&path, format!("cannot write: {e}")))?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::suite::{build_suite, SuiteConfig};
    use floe_core::Instance;
    use floe_train::experiment::table;

    /// A folder as a finished experiment leaves it: the warm start and each contender's seeds,
    /// with outcomes that differ from one another in a fixed pattern.
    fn folder(name: &str, x: &Experiment, n: usize, shift: usize) -> PathBuf {
        let out = std::env::temp_dir().join(format!("floe-chart-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let write = |dir: PathBuf, o: &[Outcome]| {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("suite-outcomes.json"), serde_json::to_string(o).unwrap()).unwrap();
        };
        let pattern = |k: usize, s: usize| -> Vec<Outcome> {
            (0..n)
                .map(|i| {
                    let valid = (i * (k + 2) + s * 3 + shift) % (k + 3) < 2;
                    Outcome { valid, optimal: valid && (i + k + s).is_multiple_of(2) }
                })
                .collect()
        };
        write(out.join("warm"), &pattern(7, 0));
        for (k, c) in x.contenders.iter().enumerate() {
            for &s in &x.seeds {
                write(out.join(c.name.name()).join(format!("seed-{s}")), &pattern(k, s as usize));
            }
        }
        out
    }

    fn experiment() -> (Experiment, Vec<Instance>) {
        let mut x = Experiment::new(Budget::Small, PluginSpec::builtin("rules"), Inputs::Planner);
        x.suite = SuiteConfig {
            agents: vec![3, 4],
            max_size: 4,
            wait_ratios: vec![0.5],
            per_cell: 2,
            ..x.suite.clone()
        };
        x.seeds = vec![0, 1];
        let suite: Vec<Instance> =
            build_suite(&x.suite).unwrap().into_iter().flat_map(|c| c.instances).collect();
        (x, suite)
    }

    /// The chart's numbers are the table's: its "all" column of the paired differences from
    /// fixed, and (with the sign turned) of fixed against the warm start.
    #[test]
    fn the_chart_shows_the_tables_paired_differences() {
        let (x, suite) = experiment();
        let out = folder("table", &x, suite.len(), 0);
        let (rows, n) = differences(&x, &out).unwrap().expect("fixed is a contender");
        assert_eq!(n, suite.len());
        let names: Vec<&str> = rows.iter().map(|d| d.name.as_str()).collect();
        let others =
            ContenderName::ALL.into_iter().filter(|&c| c != ContenderName::Fixed).map(ContenderName::name);
        assert_eq!(names, std::iter::once("warm start").chain(others).collect::<Vec<_>>());
        let read = |p: PathBuf| outcomes(&[p]).unwrap().remove(0);
        let mut table_rows =
            vec![("warm start".to_string(), vec![read(out.join("warm/suite-outcomes.json"))])];
        for c in &x.contenders {
            let seeds = x
                .seeds
                .iter()
                .map(|s| read(out.join(c.name.name()).join(format!("seed-{s}/suite-outcomes.json"))));
            table_rows.push((c.name.to_string(), seeds.collect()));
        }
        let refs: Vec<&Instance> = suite.iter().collect();
        let t = table(&x, &refs, &table_rows);
        let cell =
            |v: (f64, f64), o: (f64, f64)| format!(" {:+.2} ± {:.2} / {:+.2} ± {:.2} |", v.0, v.1, o.0, o.1);
        for d in &rows[1..] {
            let line = t.lines().find(|l| {
                l.starts_with(&format!("| {} | +", d.name)) || l.starts_with(&format!("| {} | -", d.name))
            });
            let line = line.unwrap_or_else(|| panic!("no paired row for {}\n{t}", d.name));
            assert!(line.contains(&cell(d.valid, d.optimal)), "{}: {:?}\n{line}", d.name, d);
        }
        let warm = &rows[0];
        let line = t.lines().find(|l| l.starts_with("| fixed − warm start |")).expect("the rounds' row");
        let turned = cell((-warm.valid.0, warm.valid.1), (-warm.optimal.0, warm.optimal.1));
        assert!(line.contains(&turned), "{warm:?}\n{line}");
        assert!(rows.iter().any(|d| d.valid.0.abs() > 1.0), "the pattern gives some difference: {rows:?}");

        let path = draw_chart(&x, &out).unwrap().expect("a chart");
        assert_eq!(path, out.join(CHART));
        let bytes = std::fs::read(&path).unwrap();
        let reader = png::Decoder::new(std::io::Cursor::new(bytes.as_slice())).read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (chart::WIDTH, chart::HEIGHT));
        // Other outcomes, another chart.
        let other = folder("other", &x, suite.len(), 1);
        let other = std::fs::read(draw_chart(&x, &other).unwrap().expect("a chart")).unwrap();
        assert_ne!(bytes, other);
    }

    #[test]
    fn no_fixed_no_chart_and_missing_outcomes_are_named() {
        let (mut x, suite) = experiment();
        let out = folder("missing", &x, suite.len(), 0);
        std::fs::remove_file(out.join("plr/seed-1/suite-outcomes.json")).unwrap();
        let e = draw_chart(&x, &out).unwrap_err().to_string();
        assert!(e.contains("plr/seed-1/suite-outcomes.json") && e.contains("cannot read"), "{e}");
        std::fs::write(out.join("plr/seed-1/suite-outcomes.json"), "[{\"valid\": 1}]").unwrap();
        let e = draw_chart(&x, &out).unwrap_err().to_string();
        assert!(e.contains("not a list of suite outcomes"), "{e}");
        std::fs::write(out.join("plr/seed-1/suite-outcomes.json"), "[]").unwrap();
        let e = draw_chart(&x, &out).unwrap_err().to_string();
        assert!(e.contains("plr against fixed") && e.contains("not the same suite"), "{e}");
        x.contenders.retain(|c| c.name != ContenderName::Fixed);
        assert!(draw_chart(&x, &out).unwrap().is_none());
        assert!(!out.join(CHART).exists());
    }
}
