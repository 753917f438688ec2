//! The level-driver target on stable Rust, beyond its corpus: a few hundred inputs drawn from a
//! fixed seed, each a run of calls with edited buffers checked against a twin (see the target's
//! docs). A failure prints the input, to keep under `fuzz/regressions/level_driver/`.

use floe_core::rng::Rng;
use floe_fuzz_targets::{level_driver_run, DriverRun};

#[test]
fn random_calls_on_the_level_driver_never_panic_and_refusals_change_nothing() {
    let mut rng = Rng::from_counters(&[56]);
    let mut total = DriverRun::default();
    for case in 0..300 {
        let len = 16 + rng.below(1500) as usize;
        let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        match std::panic::catch_unwind(|| level_driver_run(&data)) {
            Ok(run) => {
                total.accepted += run.accepted;
                total.refused += run.refused;
                total.steps += run.steps;
                total.refills += run.refills;
                total.decisions[0] += run.decisions[0];
                total.decisions[1] += run.decisions[1];
            }
            Err(_) => panic!("case {case} fails; its input: {data:?}"),
        }
    }
    // The inputs reach every path: steps, calls taken (refills among them) and calls refused,
    // decide and apply both taken and refused.
    println!("{total:?}");
    assert!(
        total.steps > 1000 && total.accepted > 1000 && total.refused > 1000 && total.refills > 50,
        "{total:?}"
    );
    assert!(total.decisions[0] > 50 && total.decisions[1] > 50, "{total:?}");
}
