"""``python -m floe.rounds``: the paper's loop for a Hugging Face causal language model.

    python -m floe.rounds --model DIR --out DIR [--engineer self|base|fixed|URL|PLUGIN]
                          [--curriculum fixed|difficulty-scaling|plr|sec|PLUGIN]
                          [--rounds N] [--config run.json] [--trl-config trl.json] [--resume]

``--config`` is a JSON object of :class:`floe.rounds.RunSettings`' settings (its ``trl``
object holds TRL's ``GRPOConfig`` arguments); ``--trl-config`` a JSON object of ``GRPOConfig``
arguments over them; the other flags override single settings. ``--resume`` continues the run in
``--out`` after its last finished round, with the settings and model it was started with (given
again, they must be the same). floe runs the command line whole
(:func:`floe._floe.command_line`): it reads it, calls :func:`make` for the trainee, and drives it.
"""

from __future__ import annotations

import sys

from .._floe import command_line
from .trl_trainee import TrlTrainee


def make(a: dict) -> TrlTrainee:
    """The command line's trainee: ``a`` holds its ``model``, ``config`` and run folder ``out``."""
    return TrlTrainee(a["model"], a["config"], a["out"])


def main(argv: list | None = None) -> int:
    return command_line("trl", sys.argv[1:] if argv is None else argv, make)


if __name__ == "__main__":
    sys.exit(main())
