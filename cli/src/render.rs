//! Pictures: text frames of an instance and of a plan's positions (`floe render`), and the
//! drawn ones: the board as PNG and GIF (`board`, with the GIF's palette from `palette`), the
//! evaluation's heat map (`heatmap`) and the experiment's chart (`chart`), on what they share
//! (floe-canvas).

pub mod board;
pub use floe_canvas as canvas;
// Drawn by `floe experiment` and `floe eval`, which need the `train` feature; compiled in every
// build so that their tests run without libtorch.
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub mod chart;
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub mod heatmap;
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub mod levels;
pub mod palette;

use floe_core::{rules, Instance, Plan};

/// The symbol of agent `i`: 0–9, then A–Z, then `@`.
fn agent_symbol(i: usize) -> char {
    match i {
        0..=9 => char::from(b'0' + i as u8),
        10..=35 => char::from(b'A' + (i - 10) as u8),
        _ => '@',
    }
}

/// One frame: `.` frozen, `H` hole, `*` an unoccupied goal, digits for agents.
pub fn frame(inst: &Instance, positions: &[(i64, i64)]) -> String {
    let grid = &inst.grid;
    let mut cells: Vec<Vec<char>> = grid
        .to_rows()
        .iter()
        .map(|r| r.chars().map(|c| if c == 'H' { 'H' } else { '.' }).collect())
        .collect();
    for a in &inst.agents {
        cells[a.goal.row as usize][a.goal.col as usize] = '*';
    }
    for (i, &(r, c)) in positions.iter().enumerate() {
        if grid.in_bounds(r, c) {
            cells[r as usize][c as usize] = agent_symbol(i);
        }
    }
    let mut out = String::new();
    for row in cells {
        let line: Vec<String> = row.iter().map(char::to_string).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    out
}

/// Every agent's (row, col) at times 0, 1, … as the verifier reads the plan
/// ([`Plan::path`]: moves applied from the start, off the grid included, or the path as
/// written); an agent the plan does not cover (a plan for fewer agents) stays at its start.
pub fn paths(inst: &Instance, plan: &Plan) -> Vec<Vec<(i64, i64)>> {
    inst.agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let start = (i64::from(a.start.row), i64::from(a.start.col));
            plan.path(i, start).filter(|p| !p.is_empty()).unwrap_or_else(|| vec![start])
        })
        .collect()
}

/// Every agent's (row, col) at time `t` on `paths` ([`paths`]), by the rules: an agent whose
/// path has ended stays on its last cell ([`rules::at`]).
pub fn positions_at(paths: &[Vec<(i64, i64)>], t: usize) -> Vec<(i64, i64)> {
    let t = u32::try_from(t).unwrap_or(u32::MAX);
    paths.iter().map(|p| rules::at(p, t)).collect()
}
