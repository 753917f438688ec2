//! Plan JSON: `{"moves": [...]}` or `{"paths": [...]}`.

use floe_core::verify::{verify, Check};
use floe_core::{FailureKind, Instance, Plan};

use crate::answer::check_verdict;

/// Instances for the verifier, one per agent count 1..=4, on one 4x4 grid with two holes; a
/// plan for k agents is verified against the k-agent one (other plans against the 2-agent one).
const INSTANCES: [&str; 4] = [
    r#"{"grid": ["FFFF", "FHFF", "FFHF", "FFFF"], "agents": [{"start": [0, 0], "goal": [3, 3]}]}"#,
    r#"{"grid": ["FFFF", "FHFF", "FFHF", "FFFF"], "agents": [{"start": [0, 0], "goal": [3, 3]},
        {"start": [3, 0], "goal": [0, 3]}], "optimal": {"soc": 12, "makespan": 6, "moves": ["RRRDDD", "UUURRR"]}}"#,
    r#"{"grid": ["FFFF", "FHFF", "FFHF", "FFFF"], "agents": [{"start": [0, 0], "goal": [3, 3]},
        {"start": [3, 0], "goal": [0, 3]}, {"start": [0, 3], "goal": [3, 0]}]}"#,
    r#"{"grid": ["FFFF", "FHFF", "FFHF", "FFFF"], "agents": [{"start": [0, 0], "goal": [3, 3]},
        {"start": [3, 0], "goal": [0, 3]}, {"start": [0, 3], "goal": [3, 0]}, {"start": [3, 3], "goal": [0, 0]}]}"#,
];

/// `Plan::from_json`: a parsed plan has no empty path and reads back equal from its own JSON; the
/// verifier gives a consistent verdict on it.
pub fn plan_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Plan::from_json(text) {
        Ok(plan) => {
            if let Plan::Paths(paths) = &plan {
                assert!(paths.iter().all(|p| !p.is_empty()), "a parsed plan has an empty path");
            }
            let json = plan.to_json();
            assert_eq!(Plan::from_json(&json).as_ref(), Ok(&plan), "JSON round trip of {json}");
            let k = plan.num_agents();
            let which = if (1..=INSTANCES.len()).contains(&k) { k - 1 } else { 1 };
            let inst = Instance::from_json(INSTANCES[which]).expect("the built-in instances are valid");
            let optimum = inst.optimal.as_ref().map(|o| o.soc);
            let verdict = verify(&inst, &plan, Check::against(optimum));
            check_verdict(&verdict, &inst, optimum);
            if k != inst.num_agents() {
                assert_eq!(verdict.failure.map(|f| f.kind), Some(FailureKind::WrongAgentCount));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}
