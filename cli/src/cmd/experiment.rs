//! `floe experiment`: the paper's comparison of environment designs (see
//! `floe_train::experiment`): one shared warm start on 2-agent boards, the same GRPO budget under
//! each curriculum and the LLM engineer, several seeds, one held-out suite of 3, 4 and 5 agents,
//! and a paper-style table; then the chart of each contender's paired difference from `fixed`
//! (`<out>/experiment.png`, see `crate::render::chart`), drawn from the suite outcomes of the runs. Re-running the same command resumes.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use floe_plugin_host::PluginSpec;
use floe_rounds::experiment::START_ROW;
use floe_train::experiment::{run_experiment, Budget, ContenderName, Experiment, Outcomes};
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
    /// Training prompts per round (default: the budget's). The `map` trainee's rounds teach it
    /// at eight times the `medium` budget's (3072; docs/training-results.md).
    #[arg(long)]
    prompts: Option<usize>,
    /// Blame each failed plan's located failure on the moves that caused it (`grpo.blame_failure`
    /// of `floe train`) in every contender's rounds.
    #[arg(long)]
    blame_failure: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten, next_help_heading = "Engineer flags, over the `engineer` contender's embedded model")]
    engineer: EngineerFlags,
}

pub fn run(a: &Args) -> Result<(), CliError> {
    let x = experiment(a)?;
    let resolve = |cfg: &floe_train::TrainConfig| {
        floe_plugin_registry::rounds_plugins(&cfg.rounds).map_err(|e| TrainError::Input(e.to_string()))
    };
    let bars = crate::progress::Bars::new("floe experiment", a.quiet);
    let got = run_experiment(&x, &a.out, &resolve, &bars).map_err(crate::cmd::train::cli_error)?;
    crate::emit(None, &got.table)?;
    match draw_chart(&x, &got.rows, &a.out)? {
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

/// The experiment the flags ask for.
fn experiment(a: &Args) -> Result<Experiment, CliError> {
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
    if let Some(n) = a.prompts {
        if n == 0 {
            return Err(CliError::Input("--prompts must be at least 1".into()));
        }
        x.base.rounds.samples = n;
    }
    x.base.grpo.blame_failure |= a.blame_failure;
    Ok(x)
}

/// The chart's file in the experiment's folder.
pub const CHART: &str = "experiment.png";

/// The chart's rows: the warm start, then every contender but `fixed`, each paired with `fixed`
/// on the whole suite; and the suite's size. `None` when `fixed` is not a contender. `rows` are
/// the experiment's ([`floe_rounds::experiment::Results::rows`]).
fn differences(rows: &[(String, Outcomes)]) -> Result<Option<(Vec<Difference>, usize)>, CliError> {
    let name = ContenderName::Fixed.name();
    let Some((_, fixed)) = rows.iter().find(|(n, _)| n == name) else { return Ok(None) };
    let flags = |o: &[Vec<Outcome>], f: fn(&Outcome) -> bool| -> Vec<Vec<bool>> {
        o.iter().map(|seed| seed.iter().map(f).collect()).collect()
    };
    let row = |(name, o): &(String, Outcomes)| -> Result<Difference, CliError> {
        let pair = |f: fn(&Outcome) -> bool| {
            floe_train::experiment::paired_difference(&flags(o, f), &flags(fixed, f))
                .map_err(|e| CliError::Failed(format!("{name} against fixed: {e}")))
        };
        Ok(Difference {
            name: name.clone(),
            valid: pair(|o| o.valid)?,
            optimal: pair(|o| o.optimal)?,
            reference: name == START_ROW,
        })
    };
    let n = rows.first().and_then(|(_, o)| o.first()).map_or(0, Vec::len);
    Ok(Some((rows.iter().filter(|(n, _)| n != name).map(row).collect::<Result<_, _>>()?, n)))
}

/// Draws `<out>/experiment.png` from the experiment's rows; its path, or `None` when `fixed`
/// is not a contender.
fn draw_chart(x: &Experiment, rows: &[(String, Outcomes)], out: &Path) -> Result<Option<PathBuf>, CliError> {
    let Some((rows, instances)) = differences(rows)? else { return Ok(None) };
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

    /// An experiment's rows: the warm start and each contender's seeds, with outcomes that
    /// differ from one another in a fixed pattern.
    fn rows_of(x: &Experiment, n: usize, shift: usize) -> Vec<(String, Outcomes)> {
        let pattern = |k: usize, s: usize| -> Vec<Outcome> {
            (0..n)
                .map(|i| {
                    let valid = (i * (k + 2) + s * 3 + shift) % (k + 3) < 2;
                    Outcome { valid, optimal: valid && (i + k + s).is_multiple_of(2) }
                })
                .collect()
        };
        let mut rows = vec![(START_ROW.to_string(), vec![pattern(7, 0)])];
        for (k, c) in x.contenders.iter().enumerate() {
            rows.push((c.name.to_string(), x.seeds.iter().map(|&s| pattern(k, s as usize)).collect()));
        }
        rows
    }

    fn folder(name: &str) -> PathBuf {
        let out = std::env::temp_dir().join(format!("floe-chart-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
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

    /// `--prompts` and `--blame-failure` reach every contender's rounds; without them the
    /// budget's prompts and no blame.
    #[test]
    fn the_rounds_flags_reach_every_contenders_run() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let of = |flags: &[&str]| {
            let cli = <Cli as clap::Parser>::try_parse_from(
                ["experiment", "--budget", "medium", "--inputs", "map"].iter().chain(flags),
            )
            .unwrap();
            super::experiment(&cli.args)
        };
        let warm = Path::new("warm");
        let x = of(&["--prompts", "3072", "--blame-failure"]).unwrap();
        for c in &x.contenders {
            let cfg = x.run_config(&x.rounds_of(c), 3, warm);
            assert_eq!((cfg.rounds.samples, cfg.grpo.blame_failure), (3072, true), "{}", c.name);
        }
        let x = of(&[]).unwrap();
        let cfg = x.run_config(&x.rounds_of(&x.contenders[0]), 3, warm);
        assert_eq!((cfg.rounds.samples, cfg.grpo.blame_failure), (384, false));
        assert!(matches!(of(&["--prompts", "0"]), Err(CliError::Input(m)) if m.contains("--prompts")));
    }

    /// The chart's numbers are the table's: its "all" column of the paired differences from
    /// fixed, and (with the sign turned) of fixed against the warm start.
    #[test]
    fn the_chart_shows_the_tables_paired_differences() {
        let (x, suite) = experiment();
        let table_rows = rows_of(&x, suite.len(), 0);
        let (rows, n) = differences(&table_rows).unwrap().expect("fixed is a contender");
        assert_eq!(n, suite.len());
        let names: Vec<&str> = rows.iter().map(|d| d.name.as_str()).collect();
        let others =
            ContenderName::ALL.into_iter().filter(|&c| c != ContenderName::Fixed).map(ContenderName::name);
        assert_eq!(names, std::iter::once("warm start").chain(others).collect::<Vec<_>>());
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

        let out = folder("table");
        let path = draw_chart(&x, &table_rows, &out).unwrap().expect("a chart");
        assert_eq!(path, out.join(CHART));
        let bytes = std::fs::read(&path).unwrap();
        let reader = png::Decoder::new(std::io::Cursor::new(bytes.as_slice())).read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (chart::WIDTH, chart::HEIGHT));
        // Other outcomes, another chart.
        let other_rows = rows_of(&x, suite.len(), 1);
        let other = std::fs::read(draw_chart(&x, &other_rows, &out).unwrap().expect("a chart")).unwrap();
        assert_ne!(bytes, other);
    }

    #[test]
    fn no_fixed_no_chart_and_other_suites_are_named() {
        let (x, suite) = experiment();
        let out = folder("missing");
        let mut rows = rows_of(&x, suite.len(), 0);
        let plr = rows.iter_mut().find(|(n, _)| n == "plr").unwrap();
        plr.1[1].pop();
        let e = draw_chart(&x, &rows, &out).unwrap_err().to_string();
        assert!(e.contains("plr against fixed") && e.contains("not the same suite"), "{e}");
        rows.retain(|(n, _)| n != "fixed");
        assert!(draw_chart(&x, &rows, &out).unwrap().is_none());
        assert!(!out.join(CHART).exists());
    }
}
