//! The `floe` binary end to end: outputs, determinism and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use floe_core::instance::parse_instances;

fn floe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("write temp file");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn generate_is_deterministic_and_hits_the_ratios() {
    let args = [
        "generate",
        "-k",
        "3",
        "-n",
        "6",
        "--hole-ratio",
        "0.2",
        "--wait-ratio",
        "0.3",
        "-c",
        "40",
        "-s",
        "9",
    ];
    let a = floe(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&floe(&args)), "same seed, same output");
    let other = floe(&[
        "generate",
        "-k",
        "3",
        "-n",
        "6",
        "--hole-ratio",
        "0.2",
        "--wait-ratio",
        "0.3",
        "-c",
        "40",
        "-s",
        "10",
    ]);
    assert_ne!(stdout(&a), stdout(&other), "another seed, other instances");
    let instances = parse_instances(&stdout(&a)).expect("valid JSONL");
    assert_eq!(instances.len(), 40);
    let waits = instances.iter().filter(|i| i.needs_wait == Some(true)).count();
    assert_eq!(waits, 12, "round(0.3 * 40)");
    for inst in &instances {
        // round(0.2 * 36) = 7 holes on every map.
        assert_eq!(inst.grid.hole_count(), 7);
        assert!(inst.optimal.is_some());
    }
}

#[test]
fn generate_reports_unreachable_ratios_and_bad_settings() {
    let o =
        floe(&["generate", "-k", "2", "-n", "10", "--wait-ratio", "1", "-c", "20", "--max-attempts", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("wait_ratio 1"), "{}", stderr(&o));
    let o = floe(&["generate", "-k", "1", "-n", "4", "--wait-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    let o = floe(&["generate", "-k", "9", "-n", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("distinct free cells"), "{}", stderr(&o));
}

#[test]
fn solve_finds_the_stored_optimum() {
    let gen = floe(&["generate", "-k", "4", "-n", "7", "--wait-ratio", "0.5", "-c", "12", "-s", "3"]);
    let file = tmp("solve.jsonl", &stdout(&gen));
    let o = floe(&["solve", "--instance", s(&file)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let instances = parse_instances(&stdout(&gen)).expect("valid");
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), instances.len());
    for (inst, line) in instances.iter().zip(&lines) {
        assert_eq!(line["soc"], inst.optimal.as_ref().expect("stored").soc);
        assert_eq!(line["moves"].as_array().expect("moves").len(), 4);
    }
}

#[test]
fn solve_reports_unsolvable_instances() {
    let cut = tmp("cut.json", r#"{"grid": ["FHF"], "agents": [{"start": [0, 0], "goal": [0, 2]}]}"#);
    let o = floe(&["solve", "-i", s(&cut)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unsolvable"), "{}", stderr(&o));
    let swap = tmp(
        "swap.json",
        r#"{"grid": ["FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [0, 2], "goal": [0, 0]}]}"#,
    );
    let o = floe(&["solve", "-i", s(&swap), "--max-nodes", "2000"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no plan exists"), "{}", stderr(&o));
}

const INST: &str = r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#;

/// The verdict `floe verify` prints; it exits 0 for a valid plan and 1 for an invalid one.
fn verdict(plan: &str, name: &str) -> serde_json::Value {
    let inst = tmp("verify-inst.json", INST);
    let plan = tmp(name, plan);
    let o = floe(&["verify", "--instance", s(&inst), "--plan", s(&plan)]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON line");
    let expected = if v["valid"] == true { 0 } else { 1 };
    assert_eq!(o.status.code(), Some(expected), "{v}: {}", stderr(&o));
    if expected == 1 {
        let kind = v["failure"]["kind"].as_str().expect("a failure kind");
        assert_eq!(stderr(&o).trim(), format!("floe: the plan is invalid: {kind}"));
    }
    v
}

#[test]
fn verify_prints_the_verdict_for_each_failure_kind() {
    let v = verdict(r#"{"moves": ["RR", "RR"]}"#, "ok.json");
    assert_eq!(
        v,
        serde_json::json!({"valid": true, "optimal": true, "failure": null, "soc": 4, "makespan": 2, "optimal_soc": 4})
    );
    for (plan, kind, agent, time) in [
        (r#"{"moves": ["U", "RR"]}"#, "out_of_bounds", 0, 1),
        (r#"{"moves": ["DR", "RR"]}"#, "hole", 0, 2),
        (r#"{"paths": [[[0, 0], [0, 2]], [[2, 0], [2, 1], [2, 2]]]}"#, "illegal_move", 0, 1),
        (r#"{"moves": ["R", "RR"]}"#, "goal_not_reached", 0, 2),
        (r#"{"moves": ["WD", "UU"]}"#, "edge_conflict", 0, 2),
        (r#"{"moves": ["D", "U"]}"#, "vertex_conflict", 0, 1),
    ] {
        let v = verdict(plan, "plan.json");
        assert_eq!(v["valid"], false, "{plan}");
        assert_eq!(v["failure"]["kind"], kind, "{plan}: {v}");
        assert_eq!(v["failure"]["agent"], agent, "{plan}: {v}");
        assert_eq!(v["failure"]["time"], time, "{plan}: {v}");
    }
    let v = verdict(r#"{"moves": ["RR"]}"#, "short.json");
    assert_eq!(v["failure"]["kind"], "wrong_agent_count");
    let v = verdict("I am not sure how to do this.", "answer.txt");
    assert_eq!(v["failure"]["kind"], "parse_error");
    let v = verdict("Agent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT\n", "good.txt");
    assert_eq!(v["optimal"], true);
}

#[test]
fn bad_input_gets_one_line_naming_the_file_and_exit_code_2() {
    let inst = tmp("inst.json", INST);
    for (name, contents, needle) in [
        ("malformed.json", r#"{"grid": ["FF""#, "malformed instance JSON"),
        (
            "badchar.json",
            r#"{"grid": ["FQ"], "agents": [{"start": [0, 0], "goal": [0, 1]}]}"#,
            "unexpected character 'Q'",
        ),
        (
            "outside.json",
            r#"{"grid": ["FF"], "agents": [{"start": [0, 5], "goal": [0, 1]}]}"#,
            "outside the 2x1 grid",
        ),
        (
            "dup.json",
            r#"{"grid": ["FFF"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [0, 0], "goal": [0, 2]}]}"#,
            "share the start",
        ),
    ] {
        let file = tmp(name, contents);
        let o = floe(&["solve", "-i", s(&file)]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(name) && err.contains(needle), "{name}: {err}");
    }
    let plan = tmp("letters.json", r#"{"moves": ["RZ", "RR"]}"#);
    let o = floe(&["verify", "-i", s(&inst), "-p", s(&plan)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("letters.json") && stderr(&o).contains("unknown move letter 'Z'"),
        "{}",
        stderr(&o)
    );
    let o = floe(&["verify", "-i", s(&inst), "-p", "/nonexistent/plan.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/plan.json"));
}

#[test]
fn prompt_and_render() {
    let inst = tmp("render.json", INST);
    let o = floe(&["prompt", "-i", s(&inst)]);
    assert!(stdout(&o).starts_with(
        "You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 2 agents:\nS F G\nF H F\ns F g\n"
    ));
    let plan = tmp("render-plan.json", r#"{"moves": ["RR", "RR"]}"#);
    let o = floe(&["render", "-i", s(&inst), "-p", s(&plan)]);
    let out = stdout(&o);
    assert!(out.contains("t = 2\n. . 0\n. H .\n. . 1\n"), "{out}");
    assert!(out.contains("valid, sum of costs 4, makespan 2 (optimal: 4)"), "{out}");
}

#[test]
fn movingai_map_and_scenario() {
    let map = tmp("m.map", "type octile\nheight 3\nwidth 4\nmap\n....\n.@@.\n....\n");
    let scen = tmp("m.scen", "version 1\n0\tm.map\t4\t3\t0\t0\t3\t2\t5\n0\tm.map\t4\t3\t3\t0\t0\t2\t5\n");
    let o = floe(&["solve", "--map", s(&map), "--scen", s(&scen), "--agents", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("JSON");
    assert_eq!(v["soc"], 10);
}

#[test]
fn check_passes_on_a_generated_suite() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-cli-suite-{}", std::process::id()));
    let o = floe(&["suite", "--out", s(&dir), "--per-cell", "4", "--agents", "3", "--max-size", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = floe(&["check", "--suite", s(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("36 instances: 36 solved"), "{}", stdout(&o));
}

#[test]
fn bench_prints_one_json_line_per_setting() {
    let common =
        ["bench", "--seconds", "0.05", "--sizes", "8", "--densities", "0.2", "--agents", "3", "--envs", "16"];
    for holes in ["block", "drop"] {
        let o = floe(&[&common[..], &["--holes", holes, "--plans", "500"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let lines: Vec<serde_json::Value> =
            stdout(&o).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
        assert_eq!(lines.len(), 2, "one stepping and one verification line");
        let step = &lines[0];
        assert_eq!(step["bench"], "step");
        assert!(step["agent_steps_per_sec"].as_f64().expect("rate") > 0.0);
        assert!(["avx2", "neon", "baseline"].contains(&step["isa"].as_str().expect("isa")), "{step}");
        let share = step["active_share"].as_f64().expect("share");
        if holes == "block" {
            // Holes as walls: every agent takes part in every step.
            assert_eq!(share, 1.0);
        } else {
            // Agents that fall into holes stop counting.
            assert!(share > 0.0 && share < 1.0, "{share}");
        }
        assert_eq!(lines[1]["bench"], "verify");
        assert!(lines[1]["plans_per_sec"].as_f64().expect("rate") > 0.0);
    }
    let bad = floe(&["bench", "--seconds", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn bench_sweep_measures_every_point_and_plots_them() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-sweep-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let base = ["bench", "--seconds", "0.05", "--pool", "4"];
    let sweep = [
        "--sweep",
        s(&dir),
        "--base-size",
        "16",
        "--base-agents",
        "4",
        "--base-envs",
        "16",
        "--sweep-envs",
        "16,64",
        "--sweep-agents",
        "1,4",
        "--sweep-sizes",
        "8,16",
        "--sweep-radii",
        "0,2",
    ];
    let o = floe(&[&base[..], &sweep[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("sweep.jsonl")).expect("sweep.jsonl");
    assert_eq!(stdout(&o), text, "the lines go to stdout and to the file");
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    // The fields of an ordinary step line, plus the factor swept.
    let plain = floe(&[
        "bench",
        "--seconds",
        "0.05",
        "--sizes",
        "8",
        "--agents",
        "2",
        "--envs",
        "16",
        "--plans",
        "0",
    ]);
    let plain: serde_json::Value =
        serde_json::from_str(stdout(&plain).lines().next().expect("a line")).expect("JSON");
    let mut want: Vec<&str> = plain.as_object().expect("object").keys().map(String::as_str).collect();
    want.push("sweep");
    let expected = [
        ("envs", 16, [16, 4, 16, 2]),
        ("envs", 64, [64, 4, 16, 2]),
        ("agents", 1, [16, 1, 16, 2]),
        ("agents", 4, [16, 4, 16, 2]),
        ("size", 8, [16, 4, 8, 2]),
        ("size", 16, [16, 4, 16, 2]),
        ("radius", 0, [16, 4, 16, 0]),
        ("radius", 2, [16, 4, 16, 2]),
    ];
    assert_eq!(lines.len(), expected.len(), "{text}");
    for (line, (factor, value, [envs, agents, size, radius])) in lines.iter().zip(expected) {
        let keys: Vec<&str> = line.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys, want);
        assert_eq!(line["sweep"], factor);
        assert_eq!(line[factor], value);
        assert_eq!(
            [&line["envs"], &line["agents"], &line["size"], &line["radius"]],
            [envs, agents, size, radius]
        );
        assert_eq!(line["backend"], "cpu");
        assert_eq!(line["density"], 0.2);
        assert!(line["agent_steps_per_sec"].as_f64().expect("rate") > 0.0, "{line}");
        assert!(line["bytes_per_agent_step"].as_f64().expect("bytes") > 0.0, "{line}");
    }
    // A PNG of the documented size, with the blue rate and red bytes curves drawn on white.
    let file = std::fs::File::open(dir.join("sweep.png")).expect("sweep.png");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut pixels).expect("decodes");
    assert_eq!((info.width, info.height), (1600, 900));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let rgb: Vec<&[u8]> = pixels[..info.buffer_size()].chunks(3).collect();
    assert!(rgb.iter().any(|p| *p == [0, 0, 255]), "a blue curve");
    assert!(rgb.iter().any(|p| *p == [255, 0, 0]), "a red curve");
    assert!(rgb.iter().filter(|p| **p == [255, 255, 255]).count() > rgb.len() / 2, "mostly white");

    // The GPU, the grid flags of the plain bench and base flags without a sweep are refused.
    for bad in [
        &["--sweep", s(&dir), "--backends", "gpu"][..],
        &["--sweep", s(&dir), "--sizes", "8"],
        &["--sweep", s(&dir), "--sweep-radii", ""],
        &["--base-size", "8"],
    ] {
        let o = floe(&[&base[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
    }
}

#[test]
fn an_unknown_move_is_named_in_the_verdict() {
    let v = verdict("Agent 0: RIGHT RIGHT JUMP DOWN\nAgent 1: RIGHT RIGHT\n", "jump.txt");
    assert_eq!(v["failure"]["kind"], "parse_error");
    let detail = v["failure"]["detail"].as_str().expect("a detail");
    assert!(detail.contains("line 1: 'JUMP' (move 3 of agent 0) is not a move"), "{detail}");
}

#[test]
fn negative_numbers_are_values_that_the_range_checks_refuse() {
    let o = floe(&["generate", "-k", "2", "-n", "4", "--hole-ratio", "-0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).trim(), "floe: invalid arguments: hole_ratio -0.1 is outside [0, 1)");
    let o = floe(&["suite", "--out", "unused", "--wait-ratios", "0.5,-0.25"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("wait_ratio -0.25 is outside [0, 1]"), "{}", stderr(&o));
    let o = floe(&["solve", "-i", "unused.json", "--time-limit", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--time-limit must be a positive number"), "{}", stderr(&o));
}

#[test]
fn settings_that_cannot_give_anything_are_refused_up_front() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-cli-refused-{}", std::process::id()));
    for (args, needle) in [
        (vec!["--per-cell", "0"], "instances per cell must be at least 1"),
        (vec!["--min-size", "20", "--max-size", "10"], "smallest map side 20 is larger than the largest 10"),
        (vec!["--max-size", "300"], "largest map side 300 is over the generator's limit 256"),
        (vec!["--agents", "3", "--max-size", "3", "--hole-ratio", "0.5"], "distinct free cells"),
        (vec!["--agents", "4,6", "--max-size", "5"], "6 agents get no map size"),
    ] {
        let mut all = vec!["suite", "--out", s(&dir)];
        all.extend(&args);
        let o = floe(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!dir.exists(), "{args:?} wrote {}", dir.display());
    }
    let o = floe(&["generate", "-k", "2", "-n", "4", "--count", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--count must be at least 1"), "{}", stderr(&o));
}

#[test]
fn exit_codes_follow_the_table() {
    // 2: bad input, the same in every command (too few free cells here).
    let o = floe(&["generate", "-k", "3", "-n", "3", "--hole-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("floe-cli-codes-{}", std::process::id()));
    let o = floe(&["suite", "--out", s(&dir), "--agents", "3", "--max-size", "3", "--hole-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // 1: a failed check: an invalid plan, and a suite whose stored optimum is wrong.
    assert_eq!(verdict(r#"{"moves": ["D", "U"]}"#, "conflict.json")["valid"], false);
    let wrong = tmp(
        "wrong-optimum.jsonl",
        r#"{"grid": ["FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}], "optimal": {"soc": 3, "makespan": 3, "moves": ["RRW"]}}"#,
    );
    let o = floe(&["check", "--suite", s(&wrong)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("instance 1: stored optimum 3 but the solver finds 2"), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 of 1 instance failed a check"), "{}", stderr(&o));
    // 0: a valid plan.
    assert_eq!(verdict(r#"{"moves": ["RR", "RR"]}"#, "fine.json")["valid"], true);
}

#[test]
fn engineer_gguf_must_be_a_gguf_file_and_not_beside_an_endpoint() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-model.gguf");
    let o = floe(&["engineer", "--run", "x", "--ask", "--engineer-gguf", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--engineer-gguf")
            && err.contains("no-such-model.gguf")
            && err.contains("cannot read the model file"),
        "{err}"
    );
    let not_gguf = tmp("not-a-model.gguf", "a text file, not a model");
    let o = floe(&["engineer", "--run", "x", "--ask", "--engineer-gguf", s(&not_gguf)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a GGUF file"), "{}", stderr(&o));
    let o = floe(&[
        "engineer",
        "--run",
        "x",
        "--ask",
        "--engineer-gguf",
        s(&not_gguf),
        "--engineer-endpoint",
        "http://127.0.0.1:1/v1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[cfg(not(feature = "train"))]
#[test]
fn train_and_eval_say_how_to_get_them() {
    for cmd in ["train", "eval"] {
        let o = floe(&[cmd, "--out", "x"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(&format!("`floe {cmd}` is not in this build")), "{}", stderr(&o));
        assert!(stderr(&o).contains("--features train"), "{}", stderr(&o));
    }
}

#[test]
fn check_help_documents_suite() {
    let o = floe(&["check", "--help"]);
    assert!(stdout(&o).contains("--suite"), "{}", stdout(&o));
}

#[test]
fn the_readme_example_files_are_made_as_the_readme_says() {
    let gen = floe(&[
        "generate",
        "--agents",
        "3",
        "--size",
        "6",
        "--hole-ratio",
        "0.1",
        "--wait-ratio",
        "0.5",
        "--count",
        "100",
        "--seed",
        "1",
    ]);
    assert!(gen.status.success(), "{}", stderr(&gen));
    let first = stdout(&gen).lines().next().expect("an instance").to_string();
    let one = tmp("readme-one.json", &first);
    let plan = tmp("readme-plan.json", r#"{"moves": ["DDLDL", "URRDRRRL", "DDLLRUDL"]}"#);
    let answer = tmp(
        "readme-answer.txt",
        "Agent 0: DOWN DOWN LEFT DOWN LEFT\nAgent 1: UP RIGHT RIGHT DOWN RIGHT RIGHT RIGHT LEFT\nAgent 2: DOWN DOWN LEFT LEFT RIGHT UP DOWN LEFT\n",
    );
    for p in [&plan, &answer] {
        let o = floe(&["verify", "--instance", s(&one), "--plan", s(p)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("JSON");
        assert_eq!(
            (v["valid"].clone(), v["optimal"].clone(), v["soc"].clone()),
            (true.into(), true.into(), 21.into())
        );
    }
}

/// With Vulkan's drivers hidden and wgpu held to Vulkan, asking for the GPU is an error in
/// floe's words: the adapters seen, the Vulkan loader's variables, the container setting.
#[test]
fn no_gpu_adapter_is_explained_in_floes_words() {
    let out = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["bench", "--backends", "gpu", "--envs", "8", "--sizes", "6", "--agents", "2"])
        .args(["--densities", "0.1", "--seconds", "0.05", "--plans", "0"])
        .env("VK_LOADER_DRIVERS_DISABLE", "*")
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .expect("the binary runs");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    for want in [
        "no GPU adapter could be opened",
        "adapters seen: Vulkan: none",
        "VK_ICD_FILENAMES",
        "VK_LOADER_DRIVERS_DISABLE=\"*\"",
        "NVIDIA_DRIVER_CAPABILITIES includes `graphics`",
    ] {
        assert!(err.contains(want), "{want:?} not in:\n{err}");
    }
}
