"""The paper's closed loop for a Hugging Face causal language model: rounds of GRPO with TRL's
``GRPOTrainer`` on floe's prompts and reward, and between rounds an environment engineer (by
default the trainee's own current checkpoint) or a curriculum that reads the failures on a fixed
validation set and writes the next round's generator configuration.

The protocol is floe-rounds', the one ``floe train`` runs (:mod:`floe.rounds.driver`): the
round's prompts from its configuration and ``floe train``'s round seeds, the validation set and
its count by failure kind per map size, the engineer's context (modules F, G, H, S, T, presets
V1–V6), the strict reading of its reply with the design limits, curricula and replay, and a run
folder that ``floe engineer --run`` reads. A run killed at any point resumes after its last
finished round. :mod:`floe.rounds.trl_trainee` is what is TRL's; :mod:`floe.verl` the same for
verl; :func:`experiment` compares designs over any trainee.

    python -m floe.rounds --model third_party/models/SmolLM2-135M-Instruct --out out/llm \\
        --engineer self --rounds 3 --config run.json

or from Python::

    from floe.rounds import RoundsConfig, run_rounds
    state = run_rounds("path/to/model", "out/llm", RoundsConfig(rounds=3, engineer="base"))
"""

from .config import TRL_DEFAULTS, RoundsConfig
from .driver import RunState, Trainee, drive, read_state
from .engineers import ModelEngineer, make_engineer
from .experiment import Contender, experiment
from .trl_trainee import TrlTrainee, load_model, run_rounds

__all__ = [
    "Contender",
    "ModelEngineer",
    "RoundsConfig",
    "RunState",
    "TRL_DEFAULTS",
    "Trainee",
    "TrlTrainee",
    "drive",
    "experiment",
    "load_model",
    "make_engineer",
    "read_state",
    "run_rounds",
]
