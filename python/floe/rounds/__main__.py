"""``python -m floe.rounds``: the paper's loop for a Hugging Face causal language model.

    python -m floe.rounds --model DIR --out DIR [--engineer self|base|fixed|URL|PLUGIN]
                          [--curriculum fixed|difficulty-scaling|plr|sec|PLUGIN]
                          [--rounds N] [--config run.json] [--trl-config trl.json] [--resume]

``--config`` is a JSON object of :class:`floe.rounds.RoundsConfig`'s settings (its ``trl``
object holds TRL's ``GRPOConfig`` arguments); ``--trl-config`` a JSON object of ``GRPOConfig``
arguments over them; the other flags override single settings. ``--resume`` continues the run in
``--out`` after its last finished round, with the settings and model it was started with (given
again, they must be the same). floe reads the command line (:func:`floe._floe.command_line`).
"""

from __future__ import annotations

import sys

from .._floe import command_line
from .trl_trainee import run_rounds


def run(a: dict) -> dict:
    return run_rounds(a["model"], a["out"], a["config"], resume=a["resume"])


def main(argv: list | None = None) -> int:
    return command_line("trl", sys.argv[1:] if argv is None else argv, run)


if __name__ == "__main__":
    sys.exit(main())
