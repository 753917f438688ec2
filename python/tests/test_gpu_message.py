"""A host that asks for the GPU where no adapter can be made gets floe's words: the adapters seen,
the Vulkan loader's variables and the container setting to check. Run in a child interpreter with
Vulkan's drivers hidden (``VK_LOADER_DRIVERS_DISABLE='*'``) and wgpu held to Vulkan, since the
loader reads them once per process."""

import os
import subprocess
import sys

CHILD = """
import floe
levels = floe.generate(2, 5, count=2, seed=1)
try:
    floe.VectorEnv(levels, num_envs=2, backend="gpu")
except Exception as e:
    print(type(e).__name__)
    print(e)
else:
    print("opened")
"""


def test_no_gpu_adapter_is_explained_in_floes_words():
    env = dict(os.environ, VK_LOADER_DRIVERS_DISABLE="*", WGPU_BACKEND="vulkan")
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "opened" not in text.splitlines()[0], text
    for want in ("no GPU adapter could be opened", "adapters seen: Vulkan: none", "VK_ICD_FILENAMES",
                 'VK_LOADER_DRIVERS_DISABLE="*"', "NVIDIA_DRIVER_CAPABILITIES includes `graphics`"):
        assert want in text, f"{want!r} not in:\n{text}"
