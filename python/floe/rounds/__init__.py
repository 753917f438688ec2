"""The paper's closed loop for a Hugging Face causal language model (docs/rounds.md): rounds of
GRPO with TRL's ``GRPOTrainer`` on floe's prompts and reward, and between rounds an environment
engineer (by default the trainee's own checkpoint) or a curriculum that writes the next round's
generator configuration. The protocol is floe-rounds', the one ``floe train`` runs
(:func:`drive`); its settings are :class:`RunSettings` and :func:`experiment` compares designs
(:class:`Contender`) over any trainee, both floe's own (``floe._floe``).
:mod:`floe.rounds.trl_trainee` is what is TRL's, :mod:`floe.verl` the same for verl.

    from floe.rounds import RunSettings, run_rounds
    state = run_rounds("path/to/model", "out/llm", RunSettings(rounds=3, engineer="base"))
"""

from .._floe import Contender, RunSettings, experiment
from .driver import RunState, Trainee, drive, read_state
from .engineers import ModelEngineer
from .trl_trainee import TRL_DEFAULTS, TrlTrainee, load_model, run_rounds

__all__ = [
    "Contender",
    "ModelEngineer",
    "RunSettings",
    "RunState",
    "TRL_DEFAULTS",
    "Trainee",
    "TrlTrainee",
    "drive",
    "experiment",
    "load_model",
    "read_state",
    "run_rounds",
]
