//! `floe verify --plan FILE` reads plans with floe-core's one plan reader: every form the C API
//! and the Python package take, and a JSON plan with a mistake is named as one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const INST: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#;

fn tmp(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-plan-forms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("write temp file");
    p
}

fn verify(plan: &str, name: &str) -> Output {
    let inst = tmp("inst.json", INST);
    let plan = tmp(name, plan);
    Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["verify", "-i", inst.to_str().expect("UTF-8"), "-p", plan.to_str().expect("UTF-8")])
        .output()
        .expect("the binary runs")
}

#[test]
fn every_documented_form_of_a_plan_verifies() {
    for (n, plan) in [
        r#"["RR", "RR"]"#,
        "\n  [\"RR\",\n   \"RR\"]\n",
        r#"{"moves": ["RR", "RR"]}"#,
        r#"{"soc": 4, "makespan": 2, "moves": ["RR", "RR"]}"#,
        r#"{"paths": [[[0, 0], [0, 1], [0, 2]], [[2, 0], [2, 1], [2, 2]]]}"#,
        "[[[0, 0], [0, 1], [0, 2]], [[2, 0], [2, 1], [2, 2]]]",
        "Agent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT\n",
    ]
    .into_iter()
    .enumerate()
    {
        let o = verify(plan, &format!("plan{n}.txt"));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{plan}: {}{}", out, String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
        assert_eq!(
            (v["valid"].as_bool(), v["optimal"].as_bool(), v["soc"].as_u64()),
            (Some(true), Some(true), Some(4))
        );
    }
    // JSON Lines of bare arrays: one plan per instance.
    let two = tmp("two.jsonl", &format!("{INST}\n{INST}\n"));
    let plans = tmp("plans.jsonl", "[\"RR\", \"RR\"]\n[\"R\", \"RR\"]\n");
    let o = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["verify", "-i", two.to_str().expect("UTF-8"), "-p", plans.to_str().expect("UTF-8")])
        .output()
        .expect("runs");
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0]["valid"].as_bool(), lines[1]["failure"]["kind"].as_str()),
        (Some(true), Some("goal_not_reached"))
    );
}

#[test]
fn a_json_plan_with_a_mistake_is_named_as_json_never_read_as_prose() {
    let o = verify(r#"["RR", "RX"]"#, "x.json");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("x.json") && err.contains("agent 1, move 1: unknown move letter 'X'"), "{err}");
    let o = verify(r#"["RR", [[0, 0]]]"#, "mixed.json");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("one move string (or one path) per agent"), "{err}");
}
