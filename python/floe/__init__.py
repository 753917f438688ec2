"""floe for Python: MAPF-FrozenLake instances, the optimal solver and the verifier, the paper's
prompt and answer parser, Gymnasium and PettingZoo environments over floe's batched engine, and
rewards and datasets for TRL and verl.

Errors are exceptions under :class:`floe.FloeError` carrying floe's own messages.
"""

from ._floe import (
    BadInput,
    ConfigError,
    Curriculum,
    Engine,
    EngineFailed,
    Engineer,
    Failed,
    FloeError,
    Instance,
    PluginFailed,
    Reward,
    __version__,
    generate,
    parse_answer,
    prompt,
    read_instances,
    round_instances,
    solve,
    suite,
    verify,
    verify_batch,
    write_instances,
)
from .rewards import compute_score, make_compute_score, trl_reward
from .datasets import build_records, to_hf_dataset, write_verl_parquet

__all__ = [
    "BadInput",
    "ConfigError",
    "Curriculum",
    "Engine",
    "EngineFailed",
    "Engineer",
    "Failed",
    "FloeError",
    "Instance",
    "PluginFailed",
    "Reward",
    "__version__",
    "build_records",
    "compute_score",
    "generate",
    "make_compute_score",
    "parse_answer",
    "prompt",
    "read_instances",
    "round_instances",
    "solve",
    "suite",
    "to_hf_dataset",
    "trl_reward",
    "verify",
    "verify_batch",
    "write_instances",
    "write_verl_parquet",
]


def __getattr__(name):
    # The environments need gymnasium (and pettingzoo): imported on first use only.
    if name in ("VectorEnv", "Env"):
        from . import gym as _gym

        return getattr(_gym, name)
    if name == "ParallelEnv":
        from .pettingzoo import ParallelEnv

        return ParallelEnv
    raise AttributeError(f"module 'floe' has no attribute {name!r}")
