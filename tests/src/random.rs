//! Small random instances for the solver tests.

use floe_core::rng::Rng;
use floe_core::{Agent, Grid, Instance};

/// A random `w`×`h` instance: each cell a hole with probability 1/`hole_one_in`, `k` agents with
/// distinct starts and goals on frozen cells (goals need not be reachable: unsolvable instances
/// are part of the tests). `stream` keeps the draws of different tests apart; `None` when the
/// map has fewer than `k` frozen cells.
#[must_use]
pub fn random_instance(
    w: u32,
    h: u32,
    k: usize,
    seed: u64,
    hole_one_in: u32,
    stream: u64,
) -> Option<Instance> {
    let mut rng = Rng::from_counters(&[seed, stream]);
    let mut grid = Grid::new(w, h);
    for c in 0..grid.cells() {
        if rng.below(hole_one_in) == 0 {
            grid.set_hole(c, true);
        }
    }
    let mut free: Vec<u32> = (0..grid.cells()).filter(|&c| !grid.is_hole(c)).collect();
    if free.len() < k {
        return None;
    }
    rng.shuffle(&mut free);
    let mut goals = free.clone();
    rng.shuffle(&mut goals);
    let agents = (0..k).map(|i| Agent { start: grid.pos(free[i]), goal: grid.pos(goals[i]) }).collect();
    Instance::new(grid, agents).ok()
}

/// Generated (solved) instances of several settings, `count` each: (side, agents, seed) per
/// setting, 20% holes, half of them needing a wait. The engine tests' mixed pools.
#[must_use]
pub fn generated_mix(settings: &[(u32, usize, u64)], count: usize) -> Vec<Instance> {
    settings
        .iter()
        .flat_map(|&(side, agents, seed)| {
            let cfg = floe_core::generator::GeneratorConfig::default()
                .size(side)
                .agents(agents)
                .hole_ratio(0.2)
                .wait_ratio(0.5)
                .count(count)
                .seed(seed);
            floe_core::generator::generate(&cfg).expect("generates")
        })
        .collect()
}
