//! The generator: exact wait ratio, hole density, solvability, and output that depends only on
//! the configuration.

use floe_core::generator::{generate, GeneratorConfig};
use floe_core::suite::{build_suite, SuiteConfig};
use floe_core::verify::{verify, Check};
use floe_core::Plan;
use floe_tests::joint::{joint_optimal_soc, JointResult};
use proptest::prelude::*;

fn jsonl(cfg: &GeneratorConfig) -> String {
    generate(cfg).expect("generates").iter().map(|i| i.to_json() + "\n").collect()
}

/// FNV-1a, to pin the exact output.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[test]
fn output_is_independent_of_the_thread_count_and_pinned() {
    let cfg =
        GeneratorConfig::default().size(7).agents(4).hole_ratio(0.15).wait_ratio(0.5).count(24).seed(2026);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool").install(|| jsonl(&cfg));
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("pool").install(|| jsonl(&cfg));
    assert_eq!(one, three);
    // A change of this value changes every data set generated with floe: bump it deliberately.
    assert_eq!(fnv(&one), PINNED, "generator output changed: {:#x}", fnv(&one));
}

const PINNED: u64 = 0x81af_0213_5474_88d1;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, rng_seed: proptest::test_runner::RngSeed::Fixed(20261130), ..ProptestConfig::default() })]

    #[test]
    fn every_instance_is_solvable_and_the_ratios_hold(
        size in 3u32..=7,
        agents in 2usize..=3,
        hole_ratio in 0.0f64..0.3,
        wait_ratio in 0.0f64..=1.0,
        count in 1usize..12,
        seed in any::<u64>(),
    ) {
        let cfg = GeneratorConfig::default().size(size).agents(agents).hole_ratio(hole_ratio).wait_ratio(wait_ratio).count(count).seed(seed);
        let instances = generate(&cfg).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(instances.len(), count);
        let want = (wait_ratio * count as f64).round() as usize;
        prop_assert_eq!(instances.iter().filter(|i| i.needs_wait == Some(true)).count(), want);
        for inst in &instances {
            prop_assert_eq!(inst.grid.hole_count(), (hole_ratio * f64::from(size * size)).round() as u32);
            let opt = inst.optimal.as_ref().expect("stored optimum");
            let plan = Plan::from_move_strings(&opt.moves).expect("letters");
            let v = verify(inst, &plan, Check::against(Some(opt.soc)));
            prop_assert!(v.optimal, "{:?}", v);
            // The stored optimum and flag agree with the independent search.
            prop_assert_eq!(joint_optimal_soc(inst, true, 5_000_000), JointResult::Optimal(opt.soc));
            let wait_free = joint_optimal_soc(inst, false, 5_000_000);
            prop_assert_eq!(inst.needs_wait == Some(true), wait_free != JointResult::Optimal(opt.soc));
        }
    }
}

#[test]
fn a_small_suite_has_the_papers_layout() {
    let config = SuiteConfig { per_cell: 4, max_size: 6, ..SuiteConfig::default() };
    let cells = build_suite(&config).expect("generates");
    // agents 3: sizes 3..6, 4: 4..6, 5: 5..6; three wait ratios each.
    assert_eq!(cells.len(), (4 + 3 + 2) * 3);
    for cell in &cells {
        assert!(cell.size as usize >= cell.agents);
        assert_eq!(cell.instances.len(), 4);
        assert!(cell.instances.iter().all(|i| i.num_agents() == cell.agents && i.grid.width() == cell.size));
        let waits = cell.instances.iter().filter(|i| i.needs_wait == Some(true)).count();
        assert_eq!(waits, (cell.wait_ratio * 4.0).round() as usize, "{}", cell.file_name());
    }
}

#[test]
fn min_size_skips_maps_too_small_for_the_hole_ratio() {
    // Two agents need four free cells; a 2x2 map at hole ratio 0.2 has one hole and three.
    let config = SuiteConfig {
        agents: vec![2],
        max_size: 4,
        wait_ratios: vec![0.5],
        per_cell: 2,
        hole_ratio: 0.2,
        ..SuiteConfig::default()
    };
    let err = build_suite(&config).expect_err("2x2 cannot hold two agents and a hole");
    assert!(err.to_string().contains("2x2"), "{err}");
    let cells = build_suite(&SuiteConfig { min_size: 3, ..config }).expect("generates");
    assert_eq!(cells.iter().map(|c| c.size).collect::<Vec<_>>(), [3, 4]);
    // Below the agent count, min_size changes nothing.
    let cells = build_suite(&SuiteConfig {
        min_size: 1,
        ..SuiteConfig { agents: vec![3, 4], per_cell: 1, max_size: 4, ..SuiteConfig::default() }
    });
    assert_eq!(cells.expect("generates").iter().map(|c| c.size).min(), Some(3));
    // An agent count left with no map size at all is refused, not skipped.
    let err = build_suite(&SuiteConfig { per_cell: 1, max_size: 4, ..SuiteConfig::default() })
        .expect_err("5 agents get no size up to 4");
    assert!(err.to_string().contains("5 agents get no map size"), "{err}");
}
