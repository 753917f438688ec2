//! MovingAI `.map` and `.scen` files.

use floe_core::movingai::{parse_map, parse_scenario};
use floe_core::Grid;

use crate::instance::check_instance;

/// `parse_map` and `parse_scenario`. The input's first line is the number of agents to read,
/// then comes a map file, then (from the first line that starts with `version`) a scenario
/// file. A parsed map written back as a map file reads back equal; a parsed scenario has the
/// agents asked for on that map, keeps the instance rules, and written back as a scenario file
/// reads back equal.
pub fn movingai(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some((count, rest)) = text.split_once('\n') else { return };
    let Ok(agents) = count.trim().parse::<usize>() else { return };
    let (map, scenario) = match rest.find("\nversion") {
        Some(at) => (&rest[..at + 1], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let grid = match parse_map(map) {
        Ok(grid) => grid,
        Err(e) => {
            assert!(!e.is_empty());
            return;
        }
    };
    let again = write_map(&grid);
    assert_eq!(parse_map(&again).as_ref(), Ok(&grid), "map round trip of {again:?}");
    let Some(scenario) = scenario else { return };
    match parse_scenario(grid.clone(), scenario, agents) {
        Ok(inst) => {
            assert_eq!(inst.num_agents(), agents, "a scenario read with the wrong number of agents");
            assert_eq!(inst.grid, grid);
            check_instance(&inst);
            let mut scen = String::from("version 1\n");
            for a in &inst.agents {
                scen.push_str(&format!(
                    "0\tfuzz.map\t{}\t{}\t{}\t{}\t{}\t{}\t0\n",
                    grid.width(),
                    grid.height(),
                    a.start.col,
                    a.start.row,
                    a.goal.col,
                    a.goal.row
                ));
            }
            assert_eq!(parse_scenario(grid, &scen, agents), Ok(inst), "scenario round trip of {scen:?}");
        }
        Err(e) => assert!(!e.is_empty()),
    }
}

/// A grid as a MovingAI map file: `.` for frozen cells, `@` for holes.
fn write_map(grid: &Grid) -> String {
    let mut out = format!("type octile\nheight {}\nwidth {}\nmap\n", grid.height(), grid.width());
    for row in grid.to_rows() {
        out.extend(row.chars().map(|c| if c == 'F' { '.' } else { '@' }));
        out.push('\n');
    }
    out
}
