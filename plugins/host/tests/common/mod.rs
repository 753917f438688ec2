//! Builds the plugin libraries the loading tests need, with the cargo and profile of the tests
//! themselves, and compiles the C examples with the system C compiler. Nothing is skipped: a
//! build that fails fails the test that asked for it.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The crates whose `cdylib`s the tests load.
pub const RUST_PLUGIN_CRATES: [&str; 4] =
    ["floe-plugins", "floe-example-plugin", "floe-example-faulty", "floe-example-bad-layout"];

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors().find(|p| p.join("Cargo.lock").is_file()).expect("the workspace root").to_path_buf()
}

/// The profile directory the running test was built into (`target/release`, `target/debug`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/<profile>/deps/<test>: two levels up.
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>").to_path_buf()
}

fn cargo_profile_args(dir: &Path) -> Vec<String> {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => vec![],
        Some("release") => vec!["--release".into()],
        Some(other) => vec!["--profile".into(), other.into()],
        None => panic!("no profile directory in {}", dir.display()),
    }
}

/// Builds the Rust plugin libraries once per test process (a no-op when they are fresh).
pub fn build_rust_plugins() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = profile_dir();
        let target = dir.parent().expect("target dir");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.arg("build")
            .args(cargo_profile_args(&dir))
            .arg("--manifest-path")
            .arg(workspace_root().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", target);
        for c in RUST_PLUGIN_CRATES {
            cmd.args(["-p", c]);
        }
        let out = cmd.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "building the plugin libraries failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// The path of a Rust plugin library (`floe-example-plugin` → `libfloe_example_plugin.so`),
/// built first.
pub fn rust_plugin(krate: &str) -> PathBuf {
    build_rust_plugins();
    let file = format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        krate.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    let p = profile_dir().join(file);
    assert!(p.is_file(), "{} was not built", p.display());
    p
}

/// Compiles `plugins/examples/c/<name>.c` into a shared library (once per test process) with
/// warnings as errors, and returns its path.
pub fn c_plugin(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let root = workspace_root();
    let dir = profile_dir().join("c-plugins");
    std::fs::create_dir_all(&dir).expect("c-plugins dir");
    let out = dir.join(format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX));
    // Compiled under a name of this process, then renamed into place: test processes running
    // at once never load a half-written file.
    let partial = dir.join(format!("{name}.{}.partial", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(&partial)
        .arg("-I")
        .arg(root.join("plugins/api/include"))
        .arg(root.join(format!("plugins/examples/c/{name}.c")))
        .output()
        .unwrap_or_else(|e| panic!("the C compiler {cc:?} cannot run: {e}"));
    assert!(
        status.status.success(),
        "compiling {name}.c failed:\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    std::fs::rename(&partial, &out).expect("move the compiled plugin into place");
    built.insert(name.to_string(), out.clone());
    out
}
