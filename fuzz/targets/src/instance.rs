//! Instance JSON (one object) and instance files (JSON Lines, a JSON array, or one object).

use std::collections::HashSet;

use floe_core::instance::parse_instances;
use floe_core::text::{render_prompt, START_LETTERS};
use floe_core::Instance;

/// `Instance::from_json`: a parsed instance keeps its rules, and its JSON reads back equal.
pub fn instance_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Instance::from_json(text) {
        Ok(inst) => {
            check_instance(&inst);
            let json = inst.to_json();
            assert_eq!(Instance::from_json(&json).as_ref(), Ok(&inst), "JSON round trip of {json}");
            assert_eq!(Instance::from_value(inst.to_value()).as_ref(), Ok(&inst), "value round trip");
            assert_eq!(parse_instances(&json), Ok(vec![inst.clone()]), "as an instance file: {json}");
            check_prompt(&inst);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// `parse_instances`: every instance keeps its rules; the instances written back as JSON Lines
/// and as a JSON array read back equal; an error names a line (or array entry) that exists.
pub fn instance_jsonl(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_instances(text) {
        Ok(all) => {
            assert!(!all.is_empty(), "an instance file read as no instances");
            for inst in &all {
                check_instance(inst);
            }
            let lines: Vec<String> = all.iter().map(Instance::to_json).collect();
            let jsonl = lines.join("\n");
            assert_eq!(parse_instances(&jsonl).as_ref(), Ok(&all), "JSON Lines round trip of {jsonl}");
            let array = format!("[{}]", lines.join(","));
            assert_eq!(parse_instances(&array).as_ref(), Ok(&all), "JSON array round trip of {array}");
        }
        Err((line, e)) => {
            let _ = e.to_string();
            if !text.trim_start().starts_with('[') {
                let lines = text.lines().count().max(1);
                assert!(line <= lines, "error on line {line} of a {lines}-line text: {e}");
            }
        }
    }
}

/// Checks the rules of a validated instance directly (not through `Instance::validate`, whose
/// word would be taken on trust otherwise): at least one agent; starts and goals on the grid, on
/// frozen cells, pairwise distinct; a stored plan with one valid move string per agent. Also
/// checks that the grid's rows have its size.
pub(crate) fn check_instance(inst: &Instance) {
    assert_eq!(inst.validate(), Ok(()), "a parsed instance fails validation");
    let grid = &inst.grid;
    let (w, h) = (grid.width(), grid.height());
    assert!(w > 0 && h > 0, "empty {w}x{h} grid");
    let rows = grid.to_rows();
    assert_eq!(rows.len(), h as usize);
    assert!(rows.iter().all(|r| r.len() == w as usize && r.chars().all(|c| c == 'F' || c == 'H')));
    assert!(inst.num_agents() > 0, "an instance without agents");
    let (mut starts, mut goals) = (HashSet::new(), HashSet::new());
    for a in &inst.agents {
        for p in [a.start, a.goal] {
            assert!(p.row < h && p.col < w, "{p} is outside the {w}x{h} grid");
            assert_eq!(rows[p.row as usize].as_bytes()[p.col as usize], b'F', "{p} is a hole");
        }
        assert!(starts.insert(a.start), "two agents start on {}", a.start);
        assert!(goals.insert(a.goal), "two agents end on {}", a.goal);
    }
    if let Some(opt) = &inst.optimal {
        assert_eq!(opt.moves.len(), inst.num_agents());
        assert!(opt.moves.iter().all(|m| m.chars().all(|c| "UDLRW".contains(c))));
    }
    assert_eq!(inst.start_cells().len(), inst.num_agents());
    assert_eq!(inst.goal_cells().len(), inst.num_agents());
}

/// The paper's prompt exists exactly for instances of at most five agents, names every agent's
/// start and goal, and has one row per grid row.
pub(crate) fn check_prompt(inst: &Instance) {
    match render_prompt(inst) {
        Ok(prompt) => {
            assert!(inst.num_agents() <= START_LETTERS.len());
            for (i, a) in inst.agents.iter().enumerate() {
                let line = format!("Agent {i} needs to go from {} to {}.", a.start, a.goal);
                assert!(prompt.contains(&line), "the prompt lacks {line:?}");
            }
            let rows = prompt.lines().skip(1).take(inst.grid.height() as usize);
            assert!(rows.into_iter().all(|r| r.chars().count() == 2 * inst.grid.width() as usize - 1));
        }
        Err(_) => assert!(inst.num_agents() > START_LETTERS.len(), "no prompt for a small instance"),
    }
}
