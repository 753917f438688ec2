//! A host that asks for the GPU where no adapter can be made gets floe's words through the C
//! API: the adapters seen, the Vulkan loader's variables and the container setting to check.
//! The check runs in a child process of this test with Vulkan's drivers hidden
//! (`VK_LOADER_DRIVERS_DISABLE='*'`) and wgpu held to Vulkan, since the loader reads them once.

use std::ffi::CStr;
use std::process::Command;
use std::ptr;

use floe::*;

const CHILD: &str = "FLOE_GPU_MESSAGE_CHILD";

#[test]
fn no_gpu_adapter_is_explained_in_floes_words() {
    if std::env::var_os(CHILD).is_some() {
        let setting = c"{\"size\": 5, \"agents\": 2, \"solve\": false}";
        let mut pool = ptr::null_mut();
        let mut engine = ptr::null_mut();
        // SAFETY: valid strings and out-pointers; the pool is freed once.
        unsafe {
            assert_eq!(floe_pool_generate(setting.as_ptr(), 2, 1, &mut pool), 0);
            let status = floe_engine_new(pool, c"{\"backend\": \"gpu\"}".as_ptr(), &mut engine);
            let message = CStr::from_ptr(floe_last_error()).to_string_lossy().into_owned();
            assert_eq!(status, 13, "FLOE_STATUS_GPU: {message}");
            for want in [
                "no GPU adapter could be opened",
                "adapters seen: Vulkan: none",
                "VK_ICD_FILENAMES",
                "VK_LOADER_DRIVERS_DISABLE=\"*\"",
                "NVIDIA_DRIVER_CAPABILITIES",
            ] {
                assert!(message.contains(want), "{want:?} not in:\n{message}");
            }
            assert_eq!(floe_pool_free(pool), 0);
        }
        return;
    }
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "no_gpu_adapter_is_explained_in_floes_words", "--nocapture"])
        .env(CHILD, "1")
        .env("VK_LOADER_DRIVERS_DISABLE", "*")
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .expect("the child runs");
    assert!(
        out.status.success(),
        "the child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the child ran the check");
}
