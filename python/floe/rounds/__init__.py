"""The paper's closed loop for a Hugging Face causal language model: rounds of GRPO with TRL's
``GRPOTrainer`` on floe's prompts and reward, and between rounds an environment engineer (by
default the trainee's own current checkpoint) that reads the failures on a fixed validation set
and writes the next round's generator configuration.

floe does what ``floe train`` does around the trainer: the round's prompts from its
configuration, the validation set and its count by failure kind per map size, the engineer's
context (modules F, G, H, S, T, presets V1–V6), the strict reading of its reply with the design
limits (clamped, or the previous configuration kept and why), and a run folder that ``floe
engineer --run`` reads. A run killed at any point resumes after its last finished round.

    python -m floe.rounds --model third_party/models/SmolLM2-135M-Instruct --out out/llm \\
        --engineer self --rounds 3 --config run.json

or from Python::

    from floe.rounds import RoundsConfig, run_rounds
    state = run_rounds("path/to/model", "out/llm", RoundsConfig(rounds=3, engineer="base"))
"""

from .config import TRL_DEFAULTS, RoundsConfig
from .engineers import ModelEngineer, make_engineer
from .folder import RunFolder, RunState
from .loop import Rounds, load_model, run_rounds
from .validation import table, validate

__all__ = [
    "ModelEngineer",
    "Rounds",
    "RoundsConfig",
    "RunFolder",
    "RunState",
    "TRL_DEFAULTS",
    "load_model",
    "make_engineer",
    "run_rounds",
    "table",
    "validate",
]
