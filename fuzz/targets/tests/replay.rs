//! Replays the committed corpus seeds and every regression input through the fuzz targets on
//! stable Rust, so that what a fuzzer once found stays fixed without a fuzzer.

use std::path::{Path, PathBuf};

use floe_fuzz_targets::TARGETS;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries.map(|e| e.expect("a readable folder entry").path()).collect();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

#[test]
fn every_corpus_and_regression_file_passes() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/targets has a parent");
    let mut failed = Vec::new();
    for (name, target) in TARGETS {
        let seeds = files(&fuzz.join("corpus").join(name));
        assert!(!seeds.is_empty(), "fuzz/corpus/{name}/ has no seeds");
        let regressions = files(&fuzz.join("regressions").join(name));
        for path in seeds.iter().chain(&regressions) {
            let data = std::fs::read(path).expect("a readable file");
            if std::panic::catch_unwind(|| target(&data)).is_err() {
                failed.push(path.display().to_string());
            }
        }
    }
    assert!(failed.is_empty(), "inputs that fail their target: {failed:#?}");
}

#[test]
fn every_target_has_a_fuzz_target_file() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/targets has a parent");
    for (name, _) in TARGETS {
        let file = fuzz.join("fuzz_targets").join(format!("{name}.rs"));
        let src = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            src.contains(&format!("floe_fuzz_targets::{name}(")),
            "{} calls another target",
            file.display()
        );
    }
}
