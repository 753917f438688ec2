//! With the `train` feature, puts libtorch's library folder (reported by torch-sys as
//! `DEP_TCH_LIBTORCH_LIB`) on the binary's rpath, so `floe` runs without `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
