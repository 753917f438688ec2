"""floe for Python: MAPF-FrozenLake instances, the optimal solver and the verifier, the paper's
prompt and answer parser, Gymnasium and PettingZoo environments over floe's batched engine with
level samplers (:class:`floe.Levels`: PLR, learnability and others steer which levels they
play), and rewards and datasets for TRL and verl; ``floe.ray`` builds suites and training sets,
verifies answers and keeps the level sampling of shards in step over a Ray cluster;
``floe.rounds`` runs the paper's loop for a Hugging Face language model with TRL, the model its
own environment engineer, through the round protocol that ``floe train`` runs
(``floe.drive_rounds``, over any trainee written in Python).

Errors are exceptions under :class:`floe.FloeError` carrying floe's own messages; those of values
floe refuses (``BadInput``, ``ConfigError``, ``UnknownPlugin``, ``BadOutput``) are ``ValueError``
too.
"""

from ._floe import (
    FAILURE_KINDS,
    INFO_FIELDS,
    LEVEL_FIELDS,
    BadInput,
    BadOutput,
    ConfigError,
    Curriculum,
    Engine,
    EngineFailed,
    Engineer,
    Failed,
    FloeError,
    Instance,
    LevelDecision,
    Levels,
    LevelSampler,
    PluginFailed,
    Reward,
    TooLarge,
    UnknownPlugin,
    __version__,
    default_reward,
    drive_rounds,
    engineer_context,
    generate,
    generate_slots,
    paired_difference,
    parse_answer,
    prompt,
    random_instances,
    read_instances,
    round0_config,
    round_configs,
    round_instances,
    round_seed,
    trainer_folder,
    trainer_seed,
    warm_start_seed,
    run_record,
    run_state,
    unpack_bits,
    solve,
    mutate,
    evaluate,
    cvar,
    suite,
    suite_cells,
    validation_counts,
    validation_set,
    verdict_lines,
    verify,
    verify_batch,
    write_answer,
    write_instances,
)
from .records import info_columns, level_columns
from .rewards import compute_score, make_compute_score, trl_reward
from .datasets import build_records, to_hf_dataset, write_verl_parquet

__all__ = [
    "FAILURE_KINDS",
    "INFO_FIELDS",
    "LEVEL_FIELDS",
    "BadInput",
    "BadOutput",
    "ConfigError",
    "Curriculum",
    "Engine",
    "EngineFailed",
    "Engineer",
    "Failed",
    "FloeError",
    "Instance",
    "LevelDecision",
    "Levels",
    "LevelSampler",
    "PluginFailed",
    "Reward",
    "TooLarge",
    "UnknownPlugin",
    "__version__",
    "build_records",
    "compute_score",
    "default_reward",
    "engineer_context",
    "generate",
    "generate_slots",
    "info_columns",
    "level_columns",
    "make_compute_score",
    "paired_difference",
    "parse_answer",
    "prompt",
    "random_instances",
    "read_instances",
    "round0_config",
    "round_seed",
    "trainer_folder",
    "trainer_seed",
    "warm_start_seed",
    "run_record",
    "run_state",
    "drive_rounds",
    "round_configs",
    "round_instances",
    "unpack_bits",
    "solve",
    "mutate",
    "evaluate",
    "cvar",
    "suite",
    "suite_cells",
    "to_hf_dataset",
    "trl_reward",
    "validation_counts",
    "validation_set",
    "verdict_lines",
    "verify",
    "verify_batch",
    "write_answer",
    "write_instances",
    "write_verl_parquet",
]


def __getattr__(name):
    # The environments need gymnasium (and pettingzoo): imported on first use only.
    if name in ("VectorEnv", "Env"):
        from . import gym as _gym

        return getattr(_gym, name)
    if name == "ray":
        # Needs ray: imported on first use only (`import floe.ray` works too).
        import importlib

        return importlib.import_module(".ray", __name__)
    if name == "ParallelEnv":
        from .pettingzoo import ParallelEnv

        return ParallelEnv
    raise AttributeError(f"module 'floe' has no attribute {name!r}")
