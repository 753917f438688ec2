//! MovingAI benchmark files: `.map` grids and `.scen` scenarios.
//!
//! A map has a header (`type`, `height H`, `width W`, `map`) and then H rows; `.` is free and every
//! other character is a hole. A scenario is `version 1` followed by lines
//! `bucket map width height start_x start_y goal_x goal_y optimal_length` (x = column,
//! y = row); the first k lines give the agents.

use crate::error::InstanceError;
use crate::grid::{Grid, Pos};
use crate::instance::{Agent, Instance};

/// Parses a `.map` file.
///
/// # Errors
/// A missing or malformed header, or rows of the wrong size.
pub fn parse_map(text: &str) -> Result<Grid, String> {
    let mut lines = text.lines();
    let (mut width, mut height) = (None, None);
    for line in lines.by_ref() {
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next()) {
            (Some("type"), _) => {}
            (Some("height"), Some(v)) => {
                height = Some(v.parse::<usize>().map_err(|e| format!("bad height {v:?}: {e}"))?)
            }
            (Some("width"), Some(v)) => {
                width = Some(v.parse::<usize>().map_err(|e| format!("bad width {v:?}: {e}"))?)
            }
            (Some("map"), None) => break,
            (None, _) => {}
            _ => return Err(format!("unexpected header line {line:?}")),
        }
    }
    let (width, height) = match (width, height) {
        (Some(w), Some(h)) => (w, h),
        _ => return Err("the header must give height and width before 'map'".into()),
    };
    let rows: Vec<String> = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim_end_matches('\r').chars().map(|c| if c == '.' { 'F' } else { 'H' }).collect())
        .collect();
    if rows.len() != height {
        return Err(format!("the header says {height} rows, the map has {}", rows.len()));
    }
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.chars().count() != width) {
        return Err(format!("map row {i} has {} cells, the header says {width}", r.chars().count()));
    }
    Grid::from_rows(&rows).map_err(|e| e.to_string())
}

/// Builds an instance from a map and the first `agents` lines of a scenario.
///
/// # Errors
/// Malformed scenario lines, too few of them, or agents that break the rules.
pub fn parse_scenario(grid: Grid, text: &str, agents: usize) -> Result<Instance, String> {
    // Not `with_capacity(agents)`: the count comes from the caller, and a huge one must be an
    // error ("the scenario has n agents"), not an allocation failure.
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if out.len() == agents {
            break;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with("version") {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            return Err(format!("scenario line {}: expected 9 fields, found {}", n + 1, f.len()));
        }
        let num = |i: usize| -> Result<u32, String> {
            f[i].parse::<u32>().map_err(|_| {
                format!("scenario line {}: field {} ({:?}) is not a whole number", n + 1, i + 1, f[i])
            })
        };
        let (w, h) = (num(2)?, num(3)?);
        if (w, h) != (grid.width(), grid.height()) {
            return Err(format!(
                "scenario line {}: map size {w}x{h} does not match the map's {}x{}",
                n + 1,
                grid.width(),
                grid.height()
            ));
        }
        out.push(Agent { start: Pos::new(num(5)?, num(4)?), goal: Pos::new(num(7)?, num(6)?) });
    }
    if out.len() < agents {
        return Err(format!(
            "the scenario has {}, {agents} were asked for",
            crate::text::count(out.len() as u64, "agent", "agents")
        ));
    }
    Instance::new(grid, out).map_err(|e: InstanceError| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_and_scenario_make_an_instance() {
        let grid = parse_map("type octile\nheight 2\nwidth 3\nmap\n..@\nT..\n").expect("valid map");
        assert_eq!(grid.to_rows(), vec!["FFH", "HFF"]);
        let scen = "version 1\n0\tm.map\t3\t2\t0\t0\t2\t1\t3.0\n0\tm.map\t3\t2\t1\t0\t1\t1\t1\n";
        let inst = parse_scenario(grid.clone(), scen, 2).expect("valid scenario");
        assert_eq!(inst.agents[0], Agent { start: Pos::new(0, 0), goal: Pos::new(1, 2) });
        assert!(parse_scenario(grid.clone(), scen, 3).is_err());
        assert!(parse_scenario(grid.clone(), scen, usize::MAX)
            .expect_err("too many")
            .contains("has 2 agents"));
        assert!(parse_map("height 2\nwidth 3\nmap\n...\n").is_err());
    }
}
