//! Puts libtorch's library folder on the run-time search path (rpath) of this crate's binaries
//! and tests, so they run without `LD_LIBRARY_PATH`. torch-sys (`links = "tch"`) reports the
//! folder as `DEP_TCH_LIBTORCH_LIB` to crates that depend on it directly.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
