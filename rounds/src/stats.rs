//! The statistics of an experiment: rates over seeds and instances with standard errors
//! clustered two ways, paired differences between contenders, and the paper-style table. Any
//! trainee's outcomes on a suite go in (per seed, per instance), so the same table compares
//! floe's planner and a language model across designs.

use floe_core::suite::SuiteConfig;
use floe_core::Instance;

use crate::report::Outcome;

/// One row's outcomes: per seed, per suite instance.
pub type Outcomes = Vec<Vec<Outcome>>;

/// What the table's first line says of the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSetup {
    /// The suite the outcomes are on.
    pub suite: SuiteConfig,
    /// Seeds per contender.
    pub seeds: usize,
    /// GRPO rounds per contender (round 0 included).
    pub rounds: u32,
    /// Prompts a round.
    pub samples: usize,
}

/// A paired difference is marked resolved when it is more than this many standard errors from 0.
pub const RESOLVED_SE: f64 = 2.0;
/// `fixed` must beat the warm start by more than this many standard errors for the rounds to
/// count as doing measurable work.
pub const ROUNDS_WORK_SE: f64 = 3.0;

/// The mean of `x[s][i]` (seed `s`, instance `i`; every seed the same instances) and its
/// standard error, clustered two ways (Cameron, Gelbach and Miller): by seed, since the outcomes
/// of one trained model move together (training's variance between seeds), and by instance,
/// since every seed and contender answers the same suite. The two-way variance is
/// `V_seed + V_instance − V_iid`, never taken below either one-way variance. With one seed it is
/// the plain standard error over the instances.
pub fn clustered(x: &[Vec<f64>]) -> (f64, f64) {
    let (seeds, n) = (x.len(), x.first().map_or(0, Vec::len));
    let total = (seeds * n) as f64;
    if total == 0.0 {
        return (0.0, 0.0);
    }
    let mean = x.iter().flatten().sum::<f64>() / total;
    // The variance of the mean of independent groups of equal size, from their means.
    let of_means = |means: &[f64]| {
        let g = means.len() as f64;
        if g < 2.0 {
            return 0.0;
        }
        means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (g - 1.0) / g
    };
    let seed_means: Vec<f64> = x.iter().map(|s| s.iter().sum::<f64>() / n as f64).collect();
    let instance_means: Vec<f64> =
        (0..n).map(|i| x.iter().map(|s| s[i]).sum::<f64>() / seeds as f64).collect();
    let v_iid = if total < 2.0 {
        0.0
    } else {
        x.iter().flatten().map(|v| (v - mean).powi(2)).sum::<f64>() / (total - 1.0) / total
    };
    let (v_seed, v_instance) = (of_means(&seed_means), of_means(&instance_means));
    let v = (v_seed + v_instance - v_iid).max(v_seed).max(v_instance);
    (mean, v.sqrt())
}

/// Per seed, `f` of the outcomes whose instance passes `keep`.
fn kept(
    outcomes: &Outcomes,
    suite: &[&Instance],
    keep: &dyn Fn(&Instance) -> bool,
    f: &dyn Fn(usize, usize, &Outcome) -> f64,
) -> Vec<Vec<f64>> {
    outcomes
        .iter()
        .enumerate()
        .map(|(s, seed)| {
            seed.iter()
                .zip(suite)
                .enumerate()
                .filter(|(_, (_, inst))| keep(inst))
                .map(|(i, (o, _))| f(s, i, o))
                .collect()
        })
        .collect()
}

/// Mean valid and optimal rates (%) over seeds of the outcomes whose instance passes `keep`,
/// with their standard errors ([`clustered`]).
fn rates(outcomes: &Outcomes, suite: &[&Instance], keep: &dyn Fn(&Instance) -> bool) -> Rates {
    let (valid, valid_se) = clustered(&kept(outcomes, suite, keep, &|_, _, o| f64::from(u8::from(o.valid))));
    let (optimal, optimal_se) =
        clustered(&kept(outcomes, suite, keep, &|_, _, o| f64::from(u8::from(o.optimal))));
    Rates {
        valid: 100.0 * valid,
        valid_se: 100.0 * valid_se,
        optimal: 100.0 * optimal,
        optimal_se: 100.0 * optimal_se,
    }
}

/// Rates (%) and their standard errors (points).
#[derive(Debug, Clone, Copy)]
struct Rates {
    valid: f64,
    valid_se: f64,
    optimal: f64,
    optimal_se: f64,
}

/// Mean and standard error (percentage points) of the paired differences `a − b`, pairing each
/// seed's outcome on each instance ([`clustered`]: by seed and by instance); `b` with one seed
/// is paired with every seed of `a` (the shared warm start).
fn paired(
    a: &Outcomes,
    b: &Outcomes,
    suite: &[&Instance],
    keep: &dyn Fn(&Instance) -> bool,
    f: fn(&Outcome) -> bool,
) -> (f64, f64) {
    let d = kept(a, suite, keep, &|s, i, x| {
        let y = if b.len() == 1 { &b[0][i] } else { &b[s][i] };
        f64::from(u8::from(f(x))) - f64::from(u8::from(f(y)))
    });
    let (mean, se) = clustered(&d);
    (100.0 * mean, 100.0 * se)
}

/// Mean and standard error (percentage points) of the paired differences `a − b` over every
/// (seed, instance) pair, `a[s][i]` being seed `s`'s outcome on instance `i`: the table's "all"
/// column (`clustered` by seed and by instance). A side with a single seed is paired with
/// every seed of the other (the shared warm start). `floe experiment`'s chart draws these.
///
/// # Errors
/// No outcomes, or sides whose seeds or instances do not pair up.
pub fn paired_difference(a: &[Vec<bool>], b: &[Vec<bool>]) -> Result<(f64, f64), String> {
    let rates = |x: &[Vec<bool>]| -> Vec<Vec<f64>> {
        x.iter().map(|s| s.iter().map(|&v| f64::from(u8::from(v))).collect()).collect()
    };
    paired_rates(&rates(a), &rates(b))
}

/// [`paired_difference`] of rates in [0, 1] (a level's success over its plays, say): the mean
/// and standard error, in percentage points, of `a[s][i] − b[s][i]`, clustered by seed and by
/// instance. `floe levels`' "vs fixed" and "vs uniform" columns are these.
///
/// # Errors
/// No outcomes, or sides whose seeds or instances do not pair up.
pub fn paired_rates(a: &[Vec<f64>], b: &[Vec<f64>]) -> Result<(f64, f64), String> {
    let seeds = a.len().max(b.len());
    if a.is_empty()
        || b.is_empty()
        || (a.len() != seeds && a.len() != 1)
        || (b.len() != seeds && b.len() != 1)
    {
        return Err(format!("{} seeds against {}: they do not pair up", a.len(), b.len()));
    }
    let mut d = Vec::with_capacity(seeds);
    for s in 0..seeds {
        let (x, y) = (&a[s.min(a.len() - 1)], &b[s.min(b.len() - 1)]);
        if x.len() != y.len() {
            return Err(format!("{} outcomes against {}: not the same suite", x.len(), y.len()));
        }
        d.push(x.iter().zip(y).map(|(x, y)| x - y).collect::<Vec<_>>());
    }
    if d[0].is_empty() {
        return Err("no outcomes to pair".into());
    }
    let (mean, se) = clustered(&d);
    Ok((100.0 * mean, 100.0 * se))
}

/// A paired difference as a table shows it: `+1.23 ± 0.45`, marked ` ✓` when it is resolved
/// (at least [`RESOLVED_SE`] standard errors from 0).
#[must_use]
pub fn format_paired(mean: f64, se: f64) -> String {
    let mark = if se > 0.0 && (mean / se).abs() >= RESOLVED_SE { " ✓" } else { "" };
    format!("{mean:+.2} ± {se:.2}{mark}")
}

/// A table's header row for the agent counts and "all".
fn header(first: &str, agents: &[usize], last: &[&str]) -> String {
    let mut s = format!("| {first} |");
    for k in agents {
        s.push_str(&format!(" {k} agents |"));
    }
    for l in last {
        s.push_str(&format!(" {l} |"));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(agents.len() + last.len()));
    s.push('\n');
    s
}

/// The paper-style table.
#[must_use]
pub fn table(x: &TableSetup, suite: &[&Instance], rows: &[(String, Outcomes)]) -> String {
    let agents: Vec<usize> = x.suite.agents.clone();
    let mut sizes: Vec<u32> = suite.iter().map(|i| i.grid.width()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = format!(
        "Suite: {} instances ({} agents × sizes from the agent count up to {}×{} × wait ratios {:?}, {} per cell); {} seed(s) per contender, {} GRPO rounds of {} prompts each.\n\n",
        suite.len(),
        agents.iter().map(ToString::to_string).collect::<Vec<_>>().join("/"),
        x.suite.max_size,
        x.suite.max_size,
        x.suite.wait_ratios,
        x.suite.per_cell,
        x.seeds,
        x.rounds,
        x.samples
    );
    s.push_str(
        "Valid % / optimal %, ± standard error clustered by seed and by instance (training's variance between seeds counts):\n\n",
    );
    s.push_str(&header("contender", &agents, &["all"]));
    for (name, o) in rows {
        s.push_str(&format!("| {name} |"));
        let cell = |keep: &dyn Fn(&Instance) -> bool| {
            let r = rates(o, suite, keep);
            format!(" {:.2} ± {:.2} / {:.2} ± {:.2} |", r.valid, r.valid_se, r.optimal, r.optimal_se)
        };
        for &k in &agents {
            s.push_str(&cell(&|i| i.num_agents() == k));
        }
        s.push_str(&cell(&|_| true));
        s.push('\n');
    }
    let pair_cell = |a: &Outcomes, b: &Outcomes, keep: &dyn Fn(&Instance) -> bool| {
        let (dv, sv) = paired(a, b, suite, keep, |x| x.valid);
        let (dop, sop) = paired(a, b, suite, keep, |x| x.optimal);
        (format!(" {dv:+.2} ± {sv:.2} / {dop:+.2} ± {sop:.2} |"), dv, sv)
    };
    let fixed = rows.iter().find(|(n, _)| n == "fixed").map(|(_, o)| o);
    let warm = rows.iter().find(|(n, _)| n == "warm start").map(|(_, o)| o);
    if let (Some(fixed), Some(warm)) = (fixed, warm) {
        s.push_str(&format!(
            "\nDo the rounds work? `fixed` against the warm start (paired, percentage points ± standard error; valid / optimal; the rounds work when the \"all\" valid difference exceeds {ROUNDS_WORK_SE} standard errors):\n\n"
        ));
        s.push_str(&header("", &agents, &["all", "rounds work"]));
        s.push_str("| fixed − warm start |");
        for &k in &agents {
            s.push_str(&pair_cell(fixed, warm, &|i| i.num_agents() == k).0);
        }
        let (c, d, se) = pair_cell(fixed, warm, &|_| true);
        s.push_str(&c);
        s.push_str(&format!(
            " {} ({:.1} SE) |\n",
            if d > ROUNDS_WORK_SE * se { "yes" } else { "no" },
            d / se.max(1e-9)
        ));
    }
    if let Some(fixed) = fixed {
        s.push_str(&format!(
            "\nPaired difference from `fixed` (percentage points, ± standard error; valid / optimal; resolved: the \"all\" valid difference is more than {RESOLVED_SE} standard errors from 0):\n\n"
        ));
        s.push_str(&header("contender", &agents, &["all", "resolved"]));
        for (name, o) in rows.iter().filter(|(n, _)| n != "fixed" && n != "warm start") {
            s.push_str(&format!("| {name} |"));
            for &k in &agents {
                s.push_str(&pair_cell(o, fixed, &|i| i.num_agents() == k).0);
            }
            let (c, d, se) = pair_cell(o, fixed, &|_| true);
            s.push_str(&c);
            let verdict = if d.abs() <= RESOLVED_SE * se {
                "no"
            } else if d > 0.0 {
                "yes, better"
            } else {
                "yes, worse"
            };
            s.push_str(&format!(" {verdict} |\n"));
        }
    }
    s.push_str("\nPer agent count and map size, valid % / optimal %:\n\n| contender | agents |");
    for z in &sizes {
        s.push_str(&format!(" {z}×{z} |"));
    }
    s.push_str(" mean over sizes |\n|---|---|");
    s.push_str(&"---|".repeat(sizes.len() + 1));
    s.push('\n');
    for (name, o) in rows {
        for &k in &agents {
            s.push_str(&format!("| {name} | {k} |"));
            let (mut mv, mut mo, mut m) = (0.0, 0.0, 0usize);
            for &z in &sizes {
                let keep = |i: &Instance| i.grid.width() == z && i.num_agents() == k;
                if suite.iter().any(|i| keep(i)) {
                    let r = rates(o, suite, &keep);
                    s.push_str(&format!(" {:.1} / {:.1} |", r.valid, r.optimal));
                    (mv, mo, m) = (mv + r.valid, mo + r.optimal, m + 1);
                } else {
                    s.push_str(" – |");
                }
            }
            let m = m.max(1) as f64;
            s.push_str(&format!(" {:.2} / {:.2} |\n", mv / m, mo / m));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::suite::build_suite;

    /// The table's paired differences, worked by hand: `engineer` solves the first two of the
    /// 3-agent instances where `fixed` solves none, in one seed of two.
    #[test]
    fn the_table_gives_means_and_paired_differences_with_their_standard_errors() {
        let x = TableSetup {
            suite: SuiteConfig {
                agents: vec![3, 4],
                max_size: 4,
                wait_ratios: vec![0.5],
                per_cell: 2,
                seed: 0x5e7,
                ..SuiteConfig::default()
            },
            seeds: 2,
            rounds: 3,
            samples: 128,
        };
        let cells = build_suite(&x.suite).unwrap();
        let suite: Vec<&Instance> = cells.iter().flat_map(|c| c.instances.iter()).collect();
        let three = suite.iter().filter(|i| i.num_agents() == 3).count();
        assert!(three >= 2 && three < suite.len());
        let none = vec![Outcome { valid: false, optimal: false }; suite.len()];
        let mut some = none.clone();
        let mut seen = 0;
        for (o, i) in some.iter_mut().zip(&suite) {
            if i.num_agents() == 3 && seen < 2 {
                *o = Outcome { valid: true, optimal: seen == 0 };
                seen += 1;
            }
        }
        let rows = vec![
            ("warm start".to_string(), vec![none.clone()]),
            ("fixed".to_string(), vec![none.clone(), none.clone()]),
            ("engineer".to_string(), vec![some, none]),
        ];
        let t = table(&x, &suite, &rows);
        // Worked by hand (clustered): 4 three-agent instances and 2 four-agent ones.
        assert_eq!((three, suite.len()), (4, 6));
        // The engineer's 3-agent valid outcomes are [1 1 0 0] with seed 0, [0 0 0 0] with seed
        // 1: mean 1/4. Between seeds, means 1/2 and 0: V_seed = (1/16 + 1/16) / 1 / 2 = 1/16.
        // Between instances, means [1/2 1/2 0 0]: V_instance = (4/16) / 3 / 4 = 1/48. Each
        // outcome alone: V_iid = (2·9/16 + 6/16) / 7 / 8 = 3/112. Two-way: 1/16 + 1/48 − 3/112
        // = 0.0565 < V_seed, so V_seed: a standard error of 1/4. Optimal ([1 0 0 0] and zeros,
        // mean 1/8): V_seed = 1/64, V_instance = (9/64 + 3/64) / 3 / 4 = 1/64, V_iid = (49/64 +
        // 7/64) / 7 / 8 = 1/64: two-way 1/64, a standard error of 1/8. fixed solves nothing, so
        // the rates and the differences from fixed agree.
        assert!(t.contains("| engineer | +25.00 ± 25.00 / +12.50 ± 12.50 |"), "{t}");
        assert!(t.contains("| engineer | 25.00 ± 25.00 / 12.50 ± 12.50 |"), "{t}");
        assert!(t.contains("| warm start | 0.00 ± 0.00 / 0.00 ± 0.00 | 0.00 ± 0.00 / 0.00 ± 0.00 |"), "{t}");
        assert!(!t.contains("| warm start | +"), "the warm start is not paired with fixed: {t}");
        // fixed solves nothing, like the warm start: the rounds are not shown to work.
        assert!(t.contains("| fixed − warm start | +0.00 ± 0.00 / +0.00 ± 0.00 |"), "{t}");
        assert!(t.contains(" no (0.0 SE) |"), "{t}");
        // "all", 6 instances: valid [1 1 0 0 0 0] and zeros, mean 1/6; V_seed = 2·(1/6)² / 2 =
        // 1/36, V_instance = (2·(1/3)² + 4·(1/6)²) / 5 / 6 = 1/90, V_iid = (2·(5/6)² + 10·(1/6)²)
        // / 11 / 12 = 5/396; two-way 0.02626 < 1/36: a standard error of 1/6 (outcomes taken as
        // independent, 0.112). Optimal: V_seed = V_instance = V_iid = 1/144, 1/12. A difference
        // of one standard error: not resolved.
        assert!(t.contains("| +16.67 ± 16.67 / +8.33 ± 8.33 |"), "{t}");
        assert!(t.lines().any(|l| l.starts_with("| engineer | +") && l.ends_with(" no |")), "{t}");
        // One seed: the plain standard error over instances (the warm start's row).
        let (m, se) = clustered(&[vec![1.0, 0.0, 0.0, 0.0]]);
        assert!((m - 0.25).abs() < 1e-12 && (se - (0.25f64 * 0.75 / 3.0).sqrt()).abs() < 1e-12, "{se}");
    }

    #[test]
    fn paired_differences_by_hand() {
        // Two seeds of 2 instances against one seed (paired with both): differences [1 0] and
        // [0 -1], mean 0. Seed means 1/2 and -1/2: V_seed = (1/4 + 1/4) / 1 / 2 = 1/4; instance
        // means likewise, V_instance = 1/4; V_iid = 2 / 3 / 4 = 1/6: two-way 1/3.
        let a = vec![vec![true, true], vec![false, false]];
        let b = vec![vec![false, true]];
        let (m, se) = paired_difference(&a, &b).expect("pairs");
        assert!(m.abs() < 1e-12);
        assert!((se - 100.0 * (1.0f64 / 3.0).sqrt()).abs() < 1e-9, "{se}");
        let (m, _) = paired_difference(&b, &a).expect("pairs");
        assert!(m.abs() < 1e-12);
        // One seed: the plain standard error over the instances.
        let (m, se) = paired_difference(&[vec![true, true]], &[vec![false, true]]).expect("pairs");
        assert_eq!((m, se), (50.0, 50.0));
        assert!(paired_difference(&a, &[vec![true]]).is_err(), "suites of different sizes");
        assert!(
            paired_difference(&a, &[vec![true, true], vec![true, true], vec![true, true]]).is_err(),
            "2 seeds against 3"
        );
        assert!(paired_difference(&[], &b).is_err());
        assert!(paired_difference(&[vec![]], &[vec![]]).is_err());
    }
}
