//! `floe levels` end to end at the tiny budget (with the `train` feature): every contender
//! trains, plays the held-out sets and lands in the table, the pictures are drawn, a second run
//! of the same command goes on from the runs already done (each in its own folder of floe-rounds'
//! experiment), a subset of contenders and seeds reads the same folder, a folder of the layout
//! before is moved into run folders, and bad input is exit 2.
#![cfg(feature = "train")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("the binary runs")
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("floe-levels-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn the_comparison_runs_end_to_end_at_the_tiny_budget() {
    let out = dir("tiny");
    let o = run(&[
        "levels",
        "--budget",
        "tiny",
        "--out",
        out.to_str().expect("utf-8"),
        "--quiet",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    for c in [
        "uniform",
        "fixed",
        "plr",
        "accel",
        "learnability",
        "frontier",
        "engineer",
        "target",
        "random actions",
    ] {
        assert!(table.lines().any(|l| l.starts_with(&format!("| {c} |"))), "{c} not in:\n{table}");
    }
    assert_eq!(std::fs::read_to_string(out.join("table.md")).expect("table.md"), table);
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).expect("runs.jsonl");
    assert_eq!(runs.lines().count(), 16, "8 contenders × 2 seeds");
    // The paper's question has its columns: every contender against `fixed` and `uniform`.
    let header = table.lines().next().expect("a header");
    assert!(header.contains("| vs fixed | vs uniform |") && header.contains("hard CVaR25 %"), "{header}");
    assert!(header.contains("wall time per run"), "{header}");
    let row =
        |c: &str| table.lines().find(|l| l.starts_with(&format!("| {c} |"))).expect("a row").to_string();
    assert!(row("fixed").starts_with("| fixed | 2 | ") && row("fixed").contains("| — |"), "{}", row("fixed"));
    assert!(row("engineer").contains(" ± "), "{}", row("engineer"));
    for line in runs.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("JSON");
        assert_eq!(r["hard"].as_array().map(Vec::len), Some(12), "{line}");
        assert!(r["env_steps"].as_u64() >= Some(4096), "{line}");
        assert!(!r["played"].as_array().expect("played").is_empty(), "{line}");
        // The phase samplers keep each phase's design in the run's record.
        let designs = r["designs"].as_array().expect("designs").len();
        let phased = ["fixed", "frontier", "engineer"].contains(&r["contender"].as_str().expect("contender"));
        assert_eq!(designs > 0, phased, "{line}");
        // `plr` is robust PLR, and `accel` builds on it: their PPO learned from replayed levels
        // alone.
        let robust = r["contender"] == "plr" || r["contender"] == "accel";
        assert_eq!(r["robust"].as_bool(), Some(robust), "{line}");
    }
    for png in ["curves.png", "placement.png", "spread.png"] {
        let bytes = std::fs::read(out.join(png)).expect(png);
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    // Each run has its folder of floe-rounds' experiment, its results kept there.
    assert!(out.join("experiment.json").is_file() && !out.join("config.json").exists());
    let outcome = |c: &str, s: u64| out.join(c).join(format!("seed-{s}")).join("suite-outcomes.json");
    for line in runs.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let kept = std::fs::read_to_string(outcome(
            r["contender"].as_str().expect("a name"),
            r["seed"].as_u64().expect("a seed"),
        ))
        .expect("the run's outcome");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&kept).expect("JSON"), r);
    }
    // Again: every run's results are in its folder, so nothing trains and the same table comes out.
    let again = run(&["levels", "--budget", "tiny", "--out", out.to_str().expect("utf-8"), "--threads", "1"]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout), table);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("training for"), "nothing trained again");
    // Fewer contenders and seeds only pick runs: the same folder serves, nothing trains, and the
    // table has their rows alone.
    let some = run(&[
        "levels",
        "--budget",
        "tiny",
        "--out",
        out.to_str().expect("utf-8"),
        "--contenders",
        "uniform,plr",
        "--seeds",
        "1",
    ]);
    assert!(some.status.success(), "{}", String::from_utf8_lossy(&some.stderr));
    assert!(!String::from_utf8_lossy(&some.stderr).contains("training for"), "nothing trained again");
    let some = String::from_utf8_lossy(&some.stdout).into_owned();
    let rows = |c: &str| some.lines().filter(|l| l.starts_with(&format!("| {c} |"))).count();
    assert_eq!((rows("uniform"), rows("plr"), rows("learnability"), rows("target")), (2, 2, 0, 0), "{some}");
    // Fewer seeds give the table of those alone, still paired with `fixed`'s runs in the folder.
    let uniform = some.lines().find(|l| l.starts_with("| uniform |")).expect("a row");
    assert!(uniform.starts_with("| uniform | 1 | ") && uniform.matches(" ± ").count() >= 3, "{uniform}");
    // A `plr` run recorded before `plr` was robust is run again, and its results replaced.
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome("plr", 0)).expect("plr's")).expect("JSON");
    r["robust"] = serde_json::Value::Bool(false);
    std::fs::write(outcome("plr", 0), r.to_string()).expect("plr's outcome");
    let o =
        run(&["levels", "--budget", "tiny", "--out", out.to_str().expect("utf-8"), "--contenders", "plr"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(log.contains("plr with seed 0 again"), "{log}");
    assert!(log.contains("plr, seed 0: training for") && !log.contains("plr, seed 1: training"), "{log}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome("plr", 0)).expect("plr's")).expect("JSON");
    assert_eq!(r["robust"].as_bool(), Some(true));
    assert_eq!(std::fs::read_to_string(out.join("runs.jsonl")).expect("runs.jsonl").lines().count(), 16);
    // Other settings in the same folder, and an unknown contender, are refused.
    let o =
        run(&["levels", "--budget", "tiny", "--out", out.to_str().expect("utf-8"), "--env-steps", "8192"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds another experiment"));
    let o =
        run(&["levels", "--budget", "tiny", "--out", out.to_str().expect("utf-8"), "--contenders", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("contender \"nope\""));
    let o =
        run(&["levels", "--budget", "tiny", "--out", out.to_str().expect("utf-8"), "--contenders", "upper"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is now `target`"));
    // A folder of the layout before (its settings in config.json, its runs in runs.jsonl, a later
    // line of a run replacing an earlier one) is moved into run folders: nothing trains, and the
    // later line is the run's.
    let old = dir("old");
    std::fs::create_dir_all(&old).expect("a folder");
    let settings = std::fs::read_to_string(out.join("experiment.json")).expect("the record");
    std::fs::write(old.join("config.json"), &settings).expect("config.json");
    let uniform0 =
        runs.lines().find(|l| l.contains("\"contender\":\"uniform\",\"seed\":0")).expect("uniform 0");
    let mut earlier: serde_json::Value = serde_json::from_str(uniform0).expect("JSON");
    earlier["hard_success"] = serde_json::json!(0.5);
    std::fs::write(old.join("runs.jsonl"), format!("{earlier}\nnot JSON\n")).expect("runs.jsonl");
    let args = [
        "levels",
        "--budget",
        "tiny",
        "--out",
        old.to_str().expect("utf-8"),
        "--contenders",
        "uniform",
        "--seeds",
        "1",
    ];
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("runs.jsonl line 2"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(old.join("config.json").is_file() && !old.join("uniform").exists(), "nothing changed");
    std::fs::write(old.join("runs.jsonl"), format!("{earlier}\n{uniform0}\n")).expect("runs.jsonl");
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("training for"), "nothing trained again");
    assert!(!old.join("config.json").exists() && old.join("experiment.json").is_file());
    let moved = std::fs::read_to_string(old.join("uniform/seed-0/suite-outcomes.json")).expect("moved");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&moved).expect("JSON"),
        serde_json::from_str::<serde_json::Value>(uniform0).expect("JSON")
    );
    // The runs a shard would make, printed and nothing written; a folder of other settings is
    // refused first.
    let o = run(&[
        "levels",
        "--budget",
        "tiny",
        "--out",
        old.to_str().expect("utf-8"),
        "--contenders",
        "fixed,plr",
        "--seed",
        "1,3",
        "--plan",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "[\"fixed\",1]\n[\"plr\",1]\n[\"fixed\",3]\n[\"plr\",3]\n"
    );
    assert!(!old.join("fixed").exists());
    let o = run(&["levels", "--budget", "small", "--out", old.to_str().expect("utf-8"), "--plan"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds another experiment"));
    // The held-out sets as data: every set a JSONL file, the levels the table's figures come
    // from (12 hard levels at tiny, as each run's per-level results have).
    let data = dir("held-out");
    let o = run(&["levels", "--budget", "tiny", "--held-out", data.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let hard = std::fs::read_to_string(data.join("hard.jsonl")).expect("hard.jsonl");
    assert_eq!(hard.lines().count(), 12);
    for line in hard.lines() {
        let level: serde_json::Value = serde_json::from_str(line).expect("JSON");
        assert_eq!(level["agents"].as_array().map(Vec::len), Some(3), "{line}");
        assert!(level["optimal"]["soc"].as_u64().is_some(), "solved: {line}");
    }
    for name in ["paper.jsonl", "ten-2.jsonl", "ten-4.jsonl", "ten-8.jsonl"] {
        assert!(std::fs::read_to_string(data.join(name)).expect(name).lines().count() > 0, "{name}");
    }
}
