//! `floe plugin inspect` on real libraries: the built-in Rust library, a C plugin, and
//! libraries that fail to load.

#[path = "../../plugins/host/tests/common/mod.rs"]
mod common;

use std::process::{Command, Output};

fn floe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).output().expect("the binary runs")
}

fn inspect(path: &std::path::Path) -> Output {
    floe(&["plugin", "inspect", path.to_str().expect("utf-8 path")])
}

#[test]
fn inspect_lists_a_rust_library_and_describes_a_c_plugin() {
    let out = inspect(&common::rust_plugin("floe-plugins"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v.as_array().expect("a list for a Rust library");
    assert_eq!(list.len(), 13);
    assert_eq!(list[0]["abi"], "abi_stable");
    assert_eq!(list[0]["kind"], "reward");
    assert_eq!(list[0]["name"], "tiered");
    assert_eq!(list[0]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(list[0]["capabilities"], serde_json::json!(["scores_plans"]));
    assert_eq!(list[1]["capabilities"], serde_json::json!(["scores_steps"]));
    assert_eq!(list[4]["capabilities"], serde_json::json!(["replays"]));
    assert_eq!(list[8]["kind"], "env_engineer");
    assert_eq!(list[8]["capabilities"], serde_json::json!([]));
    let samplers: Vec<&str> = list[9..].iter().map(|p| p["name"].as_str().unwrap_or("")).collect();
    assert_eq!(samplers, ["uniform", "plr", "accel", "learnability"]);
    assert!(list[9..]
        .iter()
        .all(|p| p["kind"] == "level_sampler" && p["capabilities"] == serde_json::json!([])));

    let out = inspect(&common::c_plugin("valid_reward"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["abi"], "c");
    assert_eq!(v["kind"], "reward");
    assert_eq!(v["name"], "c-valid-reward");
    assert_eq!(v["version"], "1.0.0");
    assert_eq!(v["capabilities"], serde_json::json!(["scores_plans"]));
}

#[test]
fn inspect_reports_load_failures() {
    let out = floe(&["plugin", "inspect", "/nonexistent/libnothing.so"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/libnothing.so: no such file"));

    let bad = common::c_plugin("bad_version");
    let out = inspect(&bad);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&bad.display().to_string()) && err.contains("ABI version 999"), "{err}");
    assert!(out.stdout.is_empty());

    let out = inspect(&common::rust_plugin("floe-example-bad-layout"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("layout mismatch"));

    let out = inspect(&common::c_plugin("no_entry"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no floe plugin entry point"));
}

#[test]
fn inspect_loads_a_bare_file_name_from_the_current_folder() {
    // A bare name is a file in the current folder, not a name for the library search path.
    let lib = common::c_plugin("valid_reward");
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bare-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&lib, dir.join("libbare_reward.so")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["plugin", "inspect", "libbare_reward.so"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "c-valid-reward");
    let out = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["plugin", "inspect", "libmissing.so"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("libmissing.so: no such file"));
}
