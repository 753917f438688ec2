//! The paper's free-text answers, read against an instance.

use floe_core::moves::moves_to_string;
use floe_core::text::{parse_answer, render_prompt, AnswerError};
use floe_core::verify::{verify, Answer, Check};
use floe_core::PlanForm;
use floe_core::{FailureKind, Instance, Move, Plan, Verdict};

use crate::instance::check_instance;

/// The instance an answer is read against when the input does not bring its own.
const DEFAULT_INSTANCE: &str = r#"{"grid": ["FFFF", "FHFF", "FFHF", "FFFF"],
    "agents": [{"start": [0, 0], "goal": [3, 3]}, {"start": [3, 0], "goal": [0, 3]}],
    "optimal": {"soc": 12, "makespan": 6, "moves": ["RRRDDD", "UUURRR"]}}"#;

/// `parse_answer` and `verify` of a written answer. The input is an instance's JSON on its first line and the
/// answer after it; if the first line is not a valid instance, the whole input is the answer to a
/// built-in two-agent instance. A parsed plan covers every agent, its paths start on the agents'
/// starts, and written back in the answer format it reads back equal; `verify` of the text agrees
/// with verifying the parsed plan.
pub fn text_answer(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (inst, answer) = match text.split_once('\n').map(|(head, tail)| (Instance::from_json(head), tail)) {
        Some((Ok(inst), tail)) => {
            check_instance(&inst);
            (inst, tail)
        }
        _ => (Instance::from_json(DEFAULT_INSTANCE).expect("the built-in instance is valid"), text),
    };
    let k = inst.num_agents();
    let optimum = inst.optimal.as_ref().map(|o| o.soc);
    let parsed = parse_answer(answer, &inst);
    let verdict = verify(&inst, Answer::Written(answer, PlanForm::Text), Check::against(optimum));
    check_verdict(&verdict, &inst, optimum);
    match &parsed {
        Ok(plan) => {
            assert_eq!(plan.num_agents(), k, "a plan for the wrong number of agents was accepted");
            if let Plan::Paths(paths) = plan {
                for (p, a) in paths.iter().zip(&inst.agents) {
                    assert_eq!(p.first(), Some(&(i64::from(a.start.row), i64::from(a.start.col))));
                }
            }
            let again = write_answer(plan);
            assert_eq!(parse_answer(&again, &inst).as_ref(), Ok(plan), "answer round trip of {again:?}");
            assert_eq!(verdict, verify(&inst, plan, Check::against(optimum)));
        }
        Err(e) => {
            let kind = match e {
                AnswerError::Parse(_) => FailureKind::ParseError,
                AnswerError::WrongAgentCount { found, expected } => {
                    assert_eq!(*expected, k);
                    assert_ne!(*found, k);
                    FailureKind::WrongAgentCount
                }
            };
            assert_eq!(verdict.failure.as_ref().map(|f| f.kind), Some(kind));
        }
    }
    // The prompt's own lines are never read as a plan, except its two example answer lines.
    if let Ok(prompt) = render_prompt(&inst) {
        let examples = [vec![Move::Right, Move::Down, Move::Wait], vec![Move::Up, Move::Left]];
        let want = if k <= 2 {
            Ok(Plan::Moves(examples[..k].to_vec()))
        } else {
            Err(AnswerError::WrongAgentCount { found: 2, expected: k })
        };
        assert_eq!(parse_answer(&prompt, &inst), want, "the prompt read as an answer:\n{prompt}");
    }
}

/// A plan in the answer format floe asks for: `Agent i: R D W` (or `none`), or a coordinate
/// list `Agent i: (r, c) -> (r, c)`.
fn write_answer(plan: &Plan) -> String {
    let mut out = String::new();
    match plan {
        Plan::Moves(all) => {
            for (i, m) in all.iter().enumerate() {
                let body = if m.is_empty() { "none".to_string() } else { moves_to_string(m) };
                out.push_str(&format!("Agent {i}: {body}\n"));
            }
        }
        Plan::Paths(all) => {
            for (i, p) in all.iter().enumerate() {
                let cells: Vec<String> = p.iter().map(|(r, c)| format!("({r}, {c})")).collect();
                out.push_str(&format!("Agent {i}: {}\n", cells.join(" -> ")));
            }
        }
    }
    out
}

/// A verdict is consistent: valid exactly when there is no failure; a valid plan has a sum of
/// costs and a makespan (makespan ≤ sum of costs, agents × makespan ≥ sum of costs); optimal
/// means valid with the optimum's cost; a failure during simulation names an agent and a time.
pub(crate) fn check_verdict(v: &Verdict, inst: &Instance, optimum: Option<u32>) {
    assert_eq!(v.optimal_soc, optimum);
    assert_eq!(v.valid, v.failure.is_none(), "{v:?}");
    if v.valid {
        let (soc, makespan) = (v.soc.expect("a valid plan has a cost"), v.makespan.expect("and a makespan"));
        assert!(makespan <= soc && u64::from(soc) <= inst.num_agents() as u64 * u64::from(makespan), "{v:?}");
        assert_eq!(v.optimal, optimum == Some(soc));
    } else {
        assert!(!v.optimal && v.soc.is_none() && v.makespan.is_none(), "{v:?}");
        let f = v.failure.as_ref().expect("an invalid plan has a failure");
        let before = matches!(f.kind, FailureKind::ParseError | FailureKind::WrongAgentCount);
        assert_eq!(f.agent.is_none(), before, "{f:?}");
        assert_eq!(f.time.is_none(), before, "{f:?}");
        if let Some(a) = f.agent {
            assert!(a < inst.num_agents(), "{f:?}");
        }
    }
}
