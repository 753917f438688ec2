//! The solver (CBS, with the core's joint search on small joint spaces) against the independent
//! joint-state search: same optimal sum of costs, same verdict on solvability, and the same answer
//! to "is there a wait-free optimal plan".

use floe_core::generator::{generate, GeneratorConfig};
use floe_core::solver::{solve, SolveError, SolverConfig};
use floe_core::verify::{verify, Check};
use floe_core::{Instance, Plan};
use floe_tests::joint::{joint_optimal_soc, JointResult};
use proptest::prelude::*;

/// A random small instance (holes with probability 1/5); see [`floe_tests::random`].
fn random_instance(w: u32, h: u32, k: usize, seed: u64) -> Option<Instance> {
    floe_tests::random::random_instance(w, h, k, seed, 5, 0x7e57)
}

fn check_against_joint(inst: &Instance) -> Result<(), TestCaseError> {
    let reference = joint_optimal_soc(inst, true, 3_000_000);
    let config = SolverConfig { max_nodes: 5_000, ..SolverConfig::default() };
    match reference {
        JointResult::Limit => {}
        JointResult::Unsolvable => {
            let got = solve(inst, &config);
            prop_assert!(got.is_err(), "joint search says unsolvable, CBS found {:?}", got.map(|s| s.soc));
        }
        JointResult::Optimal(opt) => {
            let sol = solve(inst, &SolverConfig { max_nodes: 200_000, ..SolverConfig::default() })
                .map_err(|e| TestCaseError::fail(format!("CBS failed on a solvable instance: {e}")))?;
            prop_assert_eq!(sol.soc, opt);
            let plan = Plan::from_move_strings(&sol.move_strings(&inst.grid)).expect("solver moves parse");
            let verdict = verify(inst, &plan, Check::against(Some(opt)));
            prop_assert!(verdict.valid && verdict.optimal, "{verdict:?}");
            prop_assert_eq!(verdict.soc, Some(opt));
            prop_assert_eq!(verdict.makespan, Some(sol.makespan));

            // Wait-free plans of the same cost exist exactly when the joint search finds one.
            let wait_free = joint_optimal_soc(inst, false, 3_000_000);
            if wait_free != JointResult::Limit {
                let bounded = SolverConfig {
                    max_nodes: 200_000,
                    time_limit: None,
                    allow_waits: false,
                    soc_bound: Some(opt),
                };
                let got = solve(inst, &bounded);
                match (wait_free, got) {
                    (JointResult::Optimal(x), Ok(s)) if x == opt => {
                        prop_assert_eq!(s.soc, opt);
                        prop_assert!(!s.has_wait_before_arrival());
                    }
                    (JointResult::Optimal(x), Err(SolveError::Exhausted { .. })) if x > opt => {}
                    (JointResult::Unsolvable, Err(SolveError::Exhausted { .. })) => {}
                    (w, g) => {
                        prop_assert!(false, "wait-free: joint {w:?}, CBS {:?} (opt {opt})", g.map(|s| s.soc))
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, rng_seed: proptest::test_runner::RngSeed::Fixed(20261130), ..ProptestConfig::default() })]

    #[test]
    fn cbs_is_optimal_on_small_random_instances(w in 2u32..=5, h in 2u32..=5, k in 1usize..=3, seed in any::<u64>()) {
        if let Some(inst) = random_instance(w, h, k, seed) {
            check_against_joint(&inst)?;
        }
    }
}

#[test]
fn cbs_is_optimal_with_four_agents_on_6x6() {
    let mut compared = 0;
    for wait_ratio in [0.0, 1.0] {
        let cfg = GeneratorConfig::default()
            .size(6)
            .agents(4)
            .hole_ratio(0.1)
            .wait_ratio(wait_ratio)
            .count(6)
            .seed(11);
        for inst in generate(&cfg).expect("generates") {
            let opt = inst.optimal.as_ref().expect("generated instances carry their optimum").soc;
            let reference = joint_optimal_soc(&inst, true, 20_000_000);
            assert_eq!(reference, JointResult::Optimal(opt), "{}", inst.to_json());
            let wait_free = joint_optimal_soc(&inst, false, 20_000_000);
            let needs_wait = inst.needs_wait.expect("flag set");
            assert_eq!(needs_wait, wait_free != JointResult::Optimal(opt), "{}", inst.to_json());
            compared += 1;
        }
    }
    assert_eq!(compared, 12);
}

#[test]
fn random_four_agent_6x6_instances_match_the_joint_search() {
    let mut compared = 0;
    for seed in 0..40 {
        let Some(inst) = random_instance(6, 6, 4, seed) else {
            continue;
        };
        check_against_joint(&inst).expect("agrees");
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} instances drawn");
}

/// Solves `inst` with the default config and checks the plan against the reference optimum.
fn solve_and_check_optimal(inst: &Instance) -> u32 {
    let JointResult::Optimal(opt) = joint_optimal_soc(inst, true, 3_000_000) else {
        panic!("the reference finds no optimum for {}", inst.to_json());
    };
    let sol = solve(inst, &SolverConfig::default()).expect("solvable");
    assert_eq!(sol.soc, opt, "{}", inst.to_json());
    let plan = Plan::from_move_strings(&sol.move_strings(&inst.grid)).expect("solver moves parse");
    let verdict = verify(inst, &plan, Check::against(Some(opt)));
    assert!(verdict.valid && verdict.optimal, "{verdict:?}");
    opt
}

#[test]
fn a_corridor_swap_is_reported_unsolvable() {
    // Two agents at the ends of a 1x6 corridor, each going to the other's end. CBS alone only
    // gives up at its node limit (then the reachability check decides); the joint search proves
    // it at once.
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFFF"], "agents": [{"start": [0, 0], "goal": [0, 5]}, {"start": [0, 5], "goal": [0, 0]}]}"#,
    )
    .expect("valid");
    assert_eq!(joint_optimal_soc(&inst, true, 3_000_000), JointResult::Unsolvable);
    for max_nodes in [0, 1_000_000] {
        let config = SolverConfig { max_nodes, ..SolverConfig::default() };
        assert_eq!(solve(&inst, &config), Err(SolveError::Exhausted { bound: None }));
    }
    // The generator's question, without waits and within a bound, gets the same answer.
    let wait_free =
        SolverConfig { max_nodes: 5_000, time_limit: None, allow_waits: false, soc_bound: Some(30) };
    assert_eq!(solve(&inst, &wait_free), Err(SolveError::Exhausted { bound: Some(30) }));
}

#[test]
fn a_corridor_with_a_side_pocket_is_solved_optimally() {
    // A pocket below column 2 lets one agent step aside while the other passes.
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFFF", "HHFHHH"], "agents": [{"start": [0, 0], "goal": [0, 5]}, {"start": [0, 5], "goal": [0, 0]}]}"#,
    )
    .expect("valid");
    assert_eq!(solve_and_check_optimal(&inst), 12);
    // Longer corridors, more agents: the pocket still lets them pass one by one.
    let inst = Instance::from_json(
        r#"{"grid": ["FFFFFFFF", "HHHFHHHH"], "agents": [{"start": [0, 0], "goal": [0, 7]}, {"start": [0, 7], "goal": [0, 0]}, {"start": [0, 6], "goal": [0, 1]}]}"#,
    )
    .expect("valid");
    solve_and_check_optimal(&inst);
}

/// A 3-agent 4x4 instance, drawn by the proptest above, on which CBS alone expanded more than
/// 200,000 high-level nodes without finding the plan (about 7 s). The joint search finds it.
#[test]
fn regression_three_agents_on_4x4_that_sent_cbs_past_its_node_limit() {
    let inst = random_instance(4, 4, 3, 6_198_210_246_894_171_978).expect("drawn");
    let literal = Instance::from_json(
        r#"{"grid": ["FFFF", "FHFH", "HFFH", "HFHF"], "agents": [{"start": [3, 1], "goal": [1, 0]}, {"start": [1, 0], "goal": [0, 1]}, {"start": [0, 2], "goal": [0, 2]}]}"#,
    )
    .expect("valid");
    assert_eq!(inst, literal);
    assert_eq!(solve_and_check_optimal(&inst), 28);
    // No plan without waits exists (the reference agrees), and the solver proves it, with the
    // optimum as bound (the generator's `needs_wait` question) and without a bound.
    assert_eq!(joint_optimal_soc(&inst, false, 3_000_000), JointResult::Unsolvable);
    for soc_bound in [Some(28), None] {
        let wait_free = SolverConfig { max_nodes: 5_000, time_limit: None, allow_waits: false, soc_bound };
        assert_eq!(solve(&inst, &wait_free), Err(SolveError::Exhausted { bound: soc_bound }));
    }
}
