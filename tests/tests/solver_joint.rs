//! The core's joint-state search against the independent reference search: the same optimum or
//! the same proof that there is none, with waits allowed or forbidden, with and without a bound.

use floe_core::solver::{joint, Solution, SolveError, SolverConfig};
use floe_core::verify::{verify, Check};
use floe_core::{Instance, Plan};
use floe_tests::joint::{joint_optimal_soc, JointResult};
use proptest::prelude::*;

/// A random small instance (holes with probability 1/4); see [`floe_tests::random`].
fn random_instance(w: u32, h: u32, k: usize, seed: u64) -> Option<Instance> {
    floe_tests::random::random_instance(w, h, k, seed, 4, 0x501e)
}

const STATES: usize = 2_000_000;

fn config(allow_waits: bool, soc_bound: Option<u32>) -> SolverConfig {
    SolverConfig { max_nodes: 0, time_limit: None, allow_waits, soc_bound }
}

/// The plan is valid, has the expected sum of costs, is optimal, and (without waits) waits never.
fn check_plan(inst: &Instance, sol: &Solution, soc: u32, allow_waits: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(sol.soc, soc);
    let plan = Plan::from_move_strings(&sol.move_strings(&inst.grid)).expect("solver moves parse");
    let verdict = verify(inst, &plan, Check::against(Some(soc)));
    prop_assert!(verdict.valid && verdict.optimal, "{verdict:?}");
    prop_assert_eq!((verdict.soc, verdict.makespan), (Some(soc), Some(sol.makespan)));
    if !allow_waits {
        prop_assert!(!sol.has_wait_before_arrival(), "{:?}", sol.paths);
    }
    Ok(())
}

/// The joint search under `allow_waits`, unbounded, at the bound of the optimum and just below.
fn check_mode(inst: &Instance, allow_waits: bool) -> Result<(), TestCaseError> {
    let got = joint::search(inst, &config(allow_waits, None));
    match (joint_optimal_soc(inst, allow_waits, STATES), got) {
        (JointResult::Limit, _) | (_, Err(SolveError::NodeLimit { .. })) => {}
        (JointResult::Unsolvable, Err(SolveError::Exhausted { bound: None })) => {
            let bounded = joint::search(inst, &config(allow_waits, Some(40)));
            prop_assert_eq!(bounded.map(|s| s.soc), Err(SolveError::Exhausted { bound: Some(40) }));
        }
        (JointResult::Optimal(opt), Ok(sol)) => {
            check_plan(inst, &sol, opt, allow_waits)?;
            let at = joint::search(inst, &config(allow_waits, Some(opt)))
                .map_err(|e| TestCaseError::fail(format!("no plan at the optimum {opt}: {e}")))?;
            check_plan(inst, &at, opt, allow_waits)?;
            if opt > 0 {
                let below = joint::search(inst, &config(allow_waits, Some(opt - 1)));
                prop_assert_eq!(below.map(|s| s.soc), Err(SolveError::Exhausted { bound: Some(opt - 1) }));
            }
        }
        (want, got) => prop_assert!(false, "reference {want:?}, joint search {:?}", got.map(|s| s.soc)),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(20261201), ..ProptestConfig::default() })]

    #[test]
    fn the_joint_search_matches_the_reference(w in 1u32..=5, h in 2u32..=5, k in 1usize..=3, seed in any::<u64>()) {
        if let Some(inst) = random_instance(w, h, k, seed) {
            check_mode(&inst, true)?;
            check_mode(&inst, false)?;
        }
    }
}

#[test]
fn four_and_five_agents_on_small_maps_match_the_reference() {
    let mut compared = 0;
    for (w, h, k) in [(4, 4, 4), (3, 4, 4), (3, 3, 5), (2, 4, 5)] {
        for seed in 0..12 {
            let Some(inst) = random_instance(w, h, k, seed) else {
                continue;
            };
            check_mode(&inst, true).expect("agrees with waits");
            check_mode(&inst, false).expect("agrees without waits");
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} instances drawn");
}
