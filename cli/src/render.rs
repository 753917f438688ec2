//! Pictures: text frames of an instance and of a plan's positions (`floe render`), and the
//! drawn ones: the board as PNG and GIF (`board`), the evaluation's heat map (`heatmap`) and the
//! experiment's chart (`chart`), on what they share (`canvas`).

pub mod board;
pub mod canvas;
// Drawn by `floe experiment` and `floe eval`, which need the `train` feature; compiled in every
// build so that their tests run without libtorch.
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub mod chart;
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub mod heatmap;

use floe_core::{Instance, Plan};

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

/// Every agent's raw (row, col) at time `t` under the plan (off-grid positions included).
pub fn positions_at(inst: &Instance, plan: &Plan, t: usize) -> Vec<(i64, i64)> {
    inst.agents
        .iter()
        .enumerate()
        .map(|(i, a)| match plan {
            Plan::Paths(p) => p.get(i).and_then(|v| v.get(t.min(v.len().saturating_sub(1)))).copied(),
            Plan::Moves(m) => m.get(i).map(|v| {
                v.iter().take(t).fold((i64::from(a.start.row), i64::from(a.start.col)), |(r, c), mv| {
                    let (dr, dc) = mv.delta();
                    (r + dr, c + dc)
                })
            }),
        })
        .map(|p| p.unwrap_or((i64::from(u32::MAX), 0)))
        .collect()
}

/// The number of time steps a plan spans.
pub fn horizon(plan: &Plan) -> usize {
    match plan {
        Plan::Moves(m) => m.iter().map(Vec::len).max().unwrap_or(0),
        Plan::Paths(p) => p.iter().map(|v| v.len().saturating_sub(1)).max().unwrap_or(0),
    }
}
