//! The committed header is what cbindgen makes of the crate today. `FLOE_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn the_committed_header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8");
    let path = dir.join("include/floe.h");
    if std::env::var("FLOE_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &generated).expect("writes include/floe.h");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "ffi/include/floe.h is not what cbindgen generates from the crate: rerun with FLOE_BLESS=1 \
         (cargo test -p floe-ffi --test header) and commit the result"
    );
}
