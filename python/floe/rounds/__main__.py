"""``python -m floe.rounds``: the paper's loop for a Hugging Face causal language model.

    python -m floe.rounds --model DIR --out DIR [--engineer self|base|fixed|URL|PLUGIN]
                          [--curriculum fixed|difficulty-scaling|plr|sec|PLUGIN]
                          [--rounds N] [--config run.json] [--trl-config trl.json] [--resume]

``--config`` is a JSON object of :class:`floe.rounds.RoundsConfig`'s settings (its ``trl``
object holds TRL's ``GRPOConfig`` arguments); ``--trl-config`` a JSON object of ``GRPOConfig``
arguments over them; the other flags override single settings. ``--resume`` continues the run in
``--out`` after its last finished round, with the settings and model it was started with (given
again, they must be the same).
"""

from __future__ import annotations

import argparse
import json
import sys

from .._floe import ConfigError
from .config import RoundsConfig, add_run_flags, cli_main, cli_settings
from .trl_trainee import run_rounds


def parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m floe.rounds",
        description="GRPO rounds with TRL on MAPF-FrozenLake; between rounds an environment engineer "
        "(by default the trainee itself) writes the next round's generator configuration.",
    )
    p.add_argument("--model", help="a Hugging Face causal LM folder (with its tokenizer and chat template)")
    p.add_argument("--out", required=True, help="the run folder")
    p.add_argument("--config", help="a JSON file of floe.rounds settings (RoundsConfig), its `trl` TRL's arguments")
    p.add_argument("--trl-config", help="a JSON file of TRL GRPOConfig arguments, over the config's `trl`")
    add_run_flags(p)
    return p.parse_args(argv)


def read_files(a: argparse.Namespace) -> tuple:
    """The settings of ``--config`` with ``--trl-config``'s TRL arguments over its ``trl``."""
    data = RoundsConfig.from_file(a.config).to_dict() if a.config else {}
    if a.trl_config:
        try:
            with open(a.trl_config, encoding="utf-8") as f:
                trl = json.load(f)
        except (OSError, ValueError) as e:
            raise ConfigError(f"{a.trl_config}: {e}") from e
        if not isinstance(trl, dict):
            raise ConfigError(f"{a.trl_config}: a JSON object of GRPOConfig arguments")
        data["trl"] = {**data.get("trl", {}), **trl}
    return data, None


def main(argv: list | None = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)

    def run() -> str:
        model, cfg, _ = cli_settings(a, a.config is not None or a.trl_config is not None, lambda: read_files(a))
        state = run_rounds(model, a.out, cfg, resume=a.resume)
        return f"{state.rounds_done} rounds done; run folder {a.out}"

    return cli_main(run)


if __name__ == "__main__":
    sys.exit(main())
