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

from .._floe import ConfigError, FloeError
from .config import RoundsConfig, add_run_flags, apply_run_flags, saved_run
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


def settings(a: argparse.Namespace) -> tuple:
    """The model folder and the settings the flags ask for."""
    saved = saved_run(a, a.config is not None or a.trl_config is not None)
    if saved is not None:
        return saved["model"], RoundsConfig.from_dict(saved["settings"])
    if a.model is None:
        raise ConfigError("--model: required (except with --resume alone, which reads the run's own)")
    data = {}
    if a.config:
        data = RoundsConfig.from_file(a.config).to_dict()
    if a.trl_config:
        try:
            with open(a.trl_config, encoding="utf-8") as f:
                trl = json.load(f)
        except (OSError, ValueError) as e:
            raise ConfigError(f"{a.trl_config}: {e}") from e
        if not isinstance(trl, dict):
            raise ConfigError(f"{a.trl_config}: a JSON object of GRPOConfig arguments")
        data["trl"] = {**data.get("trl", {}), **trl}
    return a.model, RoundsConfig.from_dict(apply_run_flags(data, a))


def main(argv: list | None = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        model, cfg = settings(a)
        state = run_rounds(model, a.out, cfg, resume=a.resume)
    except FloeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{state.rounds_done} rounds done; run folder {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
