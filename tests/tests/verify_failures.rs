//! The verifier against hand-made plans of every failure kind.

use floe_core::verify::{verify, Answer, Check, Verdict};
use floe_core::FailureKind;
use floe_core::PlanForm;
use floe_core::{Instance, Plan};

/// (row, col) of a start or goal.
type Rc = (u32, u32);

fn instance(grid: &[&str], agents: &[(Rc, Rc)]) -> Instance {
    let agents: Vec<String> = agents
        .iter()
        .map(|((sr, sc), (gr, gc))| format!(r#"{{"start": [{sr}, {sc}], "goal": [{gr}, {gc}]}}"#))
        .collect();
    let grid: Vec<String> = grid.iter().map(|r| format!("\"{r}\"")).collect();
    Instance::from_json(&format!(r#"{{"grid": [{}], "agents": [{}]}}"#, grid.join(","), agents.join(",")))
        .expect("test instance is valid")
}

fn moves(m: &[&str]) -> Plan {
    Plan::from_move_strings(m).expect("letters are valid")
}

fn failure(v: &Verdict) -> (FailureKind, Option<usize>, Option<u32>) {
    let f = v.failure.as_ref().expect("the plan must fail");
    assert!(!v.valid && !v.optimal && v.soc.is_none());
    (f.kind, f.agent, f.time)
}

/// Two agents along the top and bottom rows of a 3×3 map with a hole in the middle (optimum 4).
fn rows() -> Instance {
    instance(&["FFF", "FHF", "FFF"], &[((0, 0), (0, 2)), ((2, 0), (2, 2))])
}

#[test]
fn optimal_and_suboptimal_valid_plans() {
    let v = verify(&rows(), &moves(&["RR", "RR"]), Check::default());
    assert_eq!(
        (v.valid, v.optimal, v.soc, v.makespan, v.optimal_soc),
        (true, true, Some(4), Some(2), Some(4))
    );
    assert!(v.failure.is_none());
    // A detour is valid but not optimal; trailing waits on the goal cost nothing.
    let v = verify(&rows(), &moves(&["RRWW", "RLRR"]), Check::default());
    assert_eq!((v.valid, v.optimal, v.soc, v.makespan), (true, false, Some(6), Some(4)));
    // Leaving the goal and coming back counts until the last arrival.
    let v = verify(&rows(), &moves(&["RRLR", "RR"]), Check::default());
    assert_eq!((v.soc, v.makespan), (Some(6), Some(4)));
}

#[test]
fn out_of_bounds() {
    assert_eq!(
        failure(&verify(&rows(), &moves(&["U", "RR"]), Check::default())),
        (FailureKind::OutOfBounds, Some(0), Some(1))
    );
    assert_eq!(
        failure(&verify(&rows(), &moves(&["RR", "RRR"]), Check::default())),
        (FailureKind::OutOfBounds, Some(1), Some(3))
    );
}

#[test]
fn hole() {
    assert_eq!(
        failure(&verify(&rows(), &moves(&["DR", "RR"]), Check::default())),
        (FailureKind::Hole, Some(0), Some(2))
    );
}

#[test]
fn illegal_moves_in_coordinate_paths() {
    let jump = Plan::Paths(vec![vec![(0, 0), (0, 2)], vec![(2, 0), (2, 1), (2, 2)]]);
    assert_eq!(
        failure(&verify(&rows(), &jump, Check::default())),
        (FailureKind::IllegalMove, Some(0), Some(1))
    );
    let diagonal = Plan::Paths(vec![vec![(0, 0), (0, 1), (0, 2)], vec![(2, 0), (1, 1)]]);
    // The diagonal step lands on the hole too, but the jump is checked first.
    assert_eq!(
        failure(&verify(&rows(), &diagonal, Check::default())),
        (FailureKind::IllegalMove, Some(1), Some(1))
    );
    let wrong_start = Plan::Paths(vec![vec![(0, 1), (0, 2)], vec![(2, 0), (2, 1), (2, 2)]]);
    assert_eq!(
        failure(&verify(&rows(), &wrong_start, Check::default())),
        (FailureKind::IllegalMove, Some(0), Some(0))
    );
    let fine = Plan::Paths(vec![vec![(0, 0), (0, 1), (0, 2)], vec![(2, 0), (2, 1), (2, 2)]]);
    assert!(verify(&rows(), &fine, Check::default()).optimal);
}

#[test]
fn vertex_conflicts_including_finished_agents() {
    let cross = instance(&["FFF", "FFF", "FFF"], &[((1, 0), (1, 2)), ((0, 1), (2, 1))]);
    assert_eq!(
        failure(&verify(&cross, &moves(&["RR", "DD"]), Check::default())),
        (FailureKind::VertexConflict, Some(0), Some(1))
    );
    // Agent 0 finishes on (0, 1) at time 1 and still occupies it when agent 1 passes at time 2.
    let park = instance(&["FFF", "FFF", "FFF"], &[((0, 0), (0, 1)), ((1, 2), (0, 0))]);
    assert_eq!(
        failure(&verify(&park, &moves(&["R", "ULL"]), Check::default())),
        (FailureKind::VertexConflict, Some(0), Some(2))
    );
}

#[test]
fn edge_conflicts_but_following_is_allowed() {
    let swap = instance(&["FFF", "FFF", "FFF"], &[((0, 0), (0, 1)), ((0, 1), (0, 0))]);
    assert_eq!(
        failure(&verify(&swap, &moves(&["R", "L"]), Check::default())),
        (FailureKind::EdgeConflict, Some(0), Some(1))
    );
    let follow = instance(&["FFF", "FFF", "FFF"], &[((0, 0), (0, 2)), ((0, 1), (1, 2))]);
    let v = verify(&follow, &moves(&["RR", "RD"]), Check::default());
    assert!(v.valid, "{v:?}");
}

#[test]
fn goal_not_reached() {
    assert_eq!(
        failure(&verify(&rows(), &moves(&["R", "RR"]), Check::default())),
        (FailureKind::GoalNotReached, Some(0), Some(2))
    );
    assert_eq!(
        failure(&verify(&rows(), &moves(&["RR", ""]), Check::default())),
        (FailureKind::GoalNotReached, Some(1), Some(2))
    );
}

#[test]
fn wrong_agent_count_and_parse_errors() {
    assert_eq!(
        failure(&verify(&rows(), &moves(&["RR"]), Check::default())),
        (FailureKind::WrongAgentCount, None, None)
    );
    assert_eq!(
        failure(&verify(
            &rows(),
            Answer::Written("Agent 0: RIGHT RIGHT", PlanForm::Text),
            Check::against(Some(4))
        )),
        (FailureKind::WrongAgentCount, None, None)
    );
    assert_eq!(
        failure(&verify(
            &rows(),
            Answer::Written("I would go around the hole.", PlanForm::Text),
            Check::against(Some(4))
        )),
        (FailureKind::ParseError, None, None)
    );
    let v = verify(
        &rows(),
        Answer::Written("Agent 0: RIGHT RIGHT\nAgent 1: R R", PlanForm::Text),
        Check::against(Some(4)),
    );
    assert!(v.optimal, "{v:?}");
}

#[test]
fn the_first_failure_in_time_wins() {
    // Agent 1 swaps at time 1; agent 0 only steps into the hole at time 2.
    let inst = instance(&["FFF", "FHF", "FFF"], &[((0, 0), (1, 0)), ((1, 0), (0, 0))]);
    assert_eq!(
        failure(&verify(&inst, &moves(&["DR", "U"]), Check::against(None))),
        (FailureKind::EdgeConflict, Some(0), Some(1))
    );
}
