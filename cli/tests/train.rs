//! `floe train` and `floe eval` end to end (with the `train` feature): a run killed with SIGKILL
//! after its first round resumes with `--resume` and keeps that round; the evaluation tables; bad
//! input is exit 2.
#![cfg(feature = "train")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn floe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_floe"))
}

fn run(args: &[&str]) -> Output {
    floe().args(args).output().expect("the binary runs")
}

fn dir(name: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-train-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A tiny configuration: a 1-layer model, a short warm start, 3 rounds of 32 GRPO steps (shared
/// with the C API's training test).
const TINY: &str = include_str!("../../tests/fixtures/tiny-train.json");

fn stages(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("rounds.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("JSON line")["stage"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn a_killed_run_resumes_and_keeps_its_finished_round() {
    let d = dir("kill");
    let cfg = d.join("tiny.json");
    std::fs::write(&cfg, TINY).unwrap();
    let out = d.join("run");
    let mut child = floe()
        .args(["train", "--quiet", "--config", s(&cfg), "--out", s(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("floe train starts");
    // Wait until round 0 is in the checkpoint, then kill the process (in round 1).
    let started = Instant::now();
    let round0 = loop {
        let lines = std::fs::read_to_string(out.join("rounds.jsonl")).unwrap_or_default();
        if let Some(l) = lines.lines().find(|l| l.contains("\"stage\":\"round 0\"")) {
            if out.join("round-0.safetensors").exists() {
                break l.to_string();
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "floe train ended before round 0 was seen");
        assert!(started.elapsed() < Duration::from_secs(300), "round 0 took too long");
        std::thread::sleep(Duration::from_millis(5));
    };
    // round-<r>.safetensors is written after the checkpoint that holds round r.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!stages(&out).contains(&"round 2".to_string()), "the run finished before it was killed");

    let resumed = run(&["train", "--quiet", "--resume", "--out", s(&out)]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(stages(&out), ["untrained", "warm start", "round 0", "round 1", "round 2"]);
    let lines = std::fs::read_to_string(out.join("rounds.jsonl")).unwrap();
    assert_eq!(lines.lines().nth(2).unwrap(), round0, "round 0 changed on resume");
    let table = String::from_utf8_lossy(&resumed.stdout);
    assert!(table.contains("| round 2 |") && table.contains("| agents | 3x3 | 4x4 | mean |"), "{table}");
    for f in ["checkpoint.safetensors", "round-2.safetensors", "grpo.png", "per_size.png", "eval.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }

    // floe eval on a suite: the tables, JSON, and the cell counts.
    let suite = d.join("suite");
    let made = run(&[
        "suite",
        "--out",
        s(&suite),
        "--agents",
        "2,3",
        "--max-size",
        "4",
        "--wait-ratios",
        "0",
        "--per-cell",
        "2",
    ]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let json = d.join("eval.json");
    let ckpt = out.join("checkpoint.safetensors");
    let each = d.join("outcomes.jsonl");
    let heat = d.join("eval.png");
    let e = run(&[
        "eval",
        "--checkpoint",
        s(&ckpt),
        "--suite",
        s(&suite),
        "--json",
        s(&json),
        "--outcomes",
        s(&each),
        "--png",
        s(&heat),
    ]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    let md = String::from_utf8_lossy(&e.stdout);
    assert!(md.starts_with("| agents | 2x2 | 3x3 | 4x4 | mean |"), "{md}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cells = v["cells"].as_array().unwrap();
    // 2 agents on 2x2..4x4, 3 agents on 3x3..4x4; 2 instances per cell.
    assert_eq!(cells.len(), 5);
    assert!(cells.iter().all(|c| c["instances"] == 2));
    assert_eq!(v["mean"].as_array().unwrap().len(), 2);
    // One outcome per instance, in the suite's order, adding up to the cells' counts.
    let rows: Vec<serde_json::Value> =
        std::fs::read_to_string(&each).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 10);
    assert_eq!((&rows[0]["instance"], &rows[1]["instance"]), (&1.into(), &2.into()));
    let valid = rows.iter().filter(|r| r["valid"] == true).count() as u64;
    assert_eq!(valid, cells.iter().map(|c| c["valid"].as_u64().unwrap()).sum::<u64>());
    assert!(rows.iter().all(|r| r["optimal"] == false || r["valid"] == true));
    // The heat map: two panels of 3 map sizes and the mean, 64-pixel cells, 2 agent counts
    // (cli/src/render/heatmap.rs: 2·(80 + 4·64 + 10) + 3·16 wide, 44 + 30 + 24 + 2·64 + 30 high).
    let bytes = std::fs::read(&heat).expect("eval.png");
    let reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a PNG");
    assert_eq!((reader.info().width, reader.info().height), (740, 256));
}

#[test]
fn bad_input_is_exit_2() {
    let d = dir("bad");
    let bad_cfg = d.join("bad.json");
    std::fs::write(&bad_cfg, r#"{"grpo": {"group_sise": 4}}"#).unwrap();
    let o = run(&["train", "--config", s(&bad_cfg), "--out", s(&d.join("x"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("group_sise"));
    // A reward that scores only engine steps cannot judge a plan: refused when the configuration
    // is read, before any training, with the reason.
    let step_only = d.join("step-only.json");
    std::fs::write(&step_only, r#"{"rounds": {"reward": {"name": "shaped"}}}"#).unwrap();
    let out = d.join("step-only");
    let o = run(&["train", "--config", s(&step_only), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`shaped` rewards only steps") && err.contains("GRPO on plans"), "{err}");
    assert!(!out.join("checkpoint.safetensors").exists() && !out.join("train.log").exists());
    let o = run(&["eval", "--checkpoint", s(&d.join("none.safetensors")), "--suite", s(&d)]);
    assert_eq!(o.status.code(), Some(2));
    let not_ckpt = d.join("not.safetensors");
    std::fs::write(&not_ckpt, b"12345678").unwrap();
    let o = run(&["eval", "--checkpoint", s(&not_ckpt), "--suite", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["train", "--print-config"]);
    assert!(o.status.success());
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cfg["rounds"]["curriculum"]["name"], "difficulty-scaling");
    // The shipped "2 agents only" configuration (the paper's shape) is valid and trains on 2 agents
    // everywhere.
    let two = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/two-agents.json");
    let o = run(&["train", "--config", two, "--print-config"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cfg["warm_start"]["data"]["agents"], serde_json::json!([2]));
    assert_eq!(cfg["rounds"]["curriculum"]["params"]["config"]["agents"], serde_json::json!([2]));
    assert_eq!(cfg["rounds"]["round0"]["agents"], serde_json::json!([2]));
    assert_eq!(cfg["rounds"]["design_limits"]["agents"], serde_json::json!([2]));
    assert_eq!(cfg["validation"]["agents"], serde_json::json!([2]));
    // Maps up to 10×10, as the paper's evaluation.
    assert_eq!(cfg["warm_start"]["data"]["sizes"].as_array().unwrap().len(), 8);
}

#[test]
fn engineer_gguf_is_checked_before_any_work_and_becomes_the_embedded_engineer() {
    let d = dir("gguf");
    let missing = d.join("missing.gguf");
    for cmd in ["train", "experiment"] {
        let out = d.join(cmd);
        let o = run(&[cmd, "--out", s(&out), "--engineer-gguf", s(&missing)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--engineer-gguf") && err.contains("cannot read the model file"), "{err}");
        assert!(!out.exists(), "floe {cmd} wrote {}", out.display());
        let o = run(&[
            cmd,
            "--out",
            s(&out),
            "--engineer-gguf",
            s(&missing),
            "--engineer-endpoint",
            "http://127.0.0.1:1/v1",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("cannot be used with"), "{err}");
    }
    // A file that begins as GGUF does is taken (the model is loaded only when the engineer is
    // made), as the `embedded` engineer with its absolute path.
    let fake = d.join("fake.gguf");
    std::fs::write(&fake, b"GGUF\x03\0\0\0").unwrap();
    let o = run(&["train", "--print-config", "--engineer-gguf", s(&fake)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cfg["rounds"]["engineer"]["name"], "embedded");
    assert_eq!(cfg["rounds"]["engineer"]["params"]["model"], s(&fake));
}

/// The context ablation's configurations (V1–V6, the paper's 2-agent shape with the embedded
/// engineer) are valid, and each asks for its own preset.
#[test]
fn the_ablation_configurations_are_valid_and_differ_in_their_preset() {
    for v in 1..=6 {
        let path = format!("{}/../configs/ablation/v{v}.json", env!("CARGO_MANIFEST_DIR"));
        let o = run(&["train", "--config", &path, "--print-config"]);
        assert!(o.status.success(), "v{v}: {}", String::from_utf8_lossy(&o.stderr));
        let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(cfg["rounds"]["context"]["preset"], format!("V{v}"));
        assert_eq!(cfg["rounds"]["engineer"]["name"], "embedded");
        assert!(cfg["rounds"]["curriculum"].is_null());
        assert_eq!(cfg["warm_start"]["data"]["agents"], serde_json::json!([2]));
    }
}

/// The `map` trainee's longer rounds (docs/training-results.md): a valid configuration that
/// starts from `floe experiment --inputs map`'s warm start and keeps round 0's uniform
/// configuration, with eight times the experiment's prompts a round and the legal prefix of a
/// failed answer left out of its penalty.
#[test]
fn the_map_trainees_longer_rounds_are_a_valid_configuration() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/map-rounds.json");
    let o = run(&["train", "--config", path, "--print-config"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cfg["model"]["layout"]["inputs"], "map");
    assert_eq!(
        (cfg["rounds"]["samples"].as_u64(), cfg["grpo"]["blame_failure"].as_bool()),
        (Some(3072), Some(true))
    );
    assert_eq!(cfg["rounds"]["curriculum"]["name"], "fixed");
    assert_eq!(cfg["rounds"]["curriculum"]["params"]["config"], cfg["rounds"]["round0"]);
    assert_eq!(cfg["warm_start"]["steps"], 0);
    assert!(cfg["init_checkpoint"].as_str().unwrap().ends_with("warm/reference.safetensors"));
}

/// `floe experiment`'s budget, contenders and trainee inputs are names clap checks, listed in
/// the help; a name that is none of them is refused before any work.
#[test]
fn experiment_budgets_and_contenders_are_checked_names() {
    let d = dir("names");
    let out = d.join("experiment");
    for (flag, value, listed) in [
        ("--budget", "huge", "small, medium, full"),
        (
            "--contenders",
            "fixed,PLR",
            "fixed, fixed-random, difficulty-scaling, plr, sec, frontier, engineer, best-of-n",
        ),
        ("--inputs", "grid", "planner, map"),
    ] {
        let o = run(&["experiment", "--out", s(&out), flag, value]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(flag) && err.contains(&format!("[possible values: {listed}]")), "{err}");
        assert!(!out.exists(), "floe experiment {flag} {value} wrote {}", out.display());
    }
    let help = String::from_utf8_lossy(&run(&["experiment", "--help"]).stdout).into_owned();
    assert!(help.contains("[possible values: small, medium, full]"), "{help}");
    let contenders = "fixed, fixed-random, difficulty-scaling, plr, sec, frontier, engineer, best-of-n";
    assert!(help.contains(&format!("[possible values: {contenders}]")), "{help}");
    assert!(help.contains("[default: planner] [possible values: planner, map]"), "{help}");
}
