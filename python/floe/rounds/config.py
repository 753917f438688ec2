"""The settings of a run of :mod:`floe.rounds` and :mod:`floe.verl`: :class:`RoundsConfig`, read
and checked by floe (``floe._floe``; each setting's meaning in docs/rounds.md), and the flags
both drivers take over them.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from .._floe import ConfigError, FloeError, RoundsConfig, run_settings

__all__ = ["RoundsConfig", "add_run_flags", "cli_settings", "cli_main"]

#: The settings a command-line flag of the same name sets.
FLAG_SETTINGS = ("engineer", "curriculum", "rounds", "epochs", "samples", "seed")


def add_run_flags(parser: Any) -> None:
    """The flags both drivers take besides their own: the settings of :data:`FLAG_SETTINGS`,
    the endpoint's model, and ``--resume``."""
    parser.add_argument("--engineer", help="self (default), base, fixed, an http(s):// URL, or a floe engineer plugin")
    parser.add_argument("--engineer-model", help="with a URL: the model name the server expects")
    parser.add_argument("--curriculum", help="fixed, difficulty-scaling, plr, sec, frontier, or a plugin name")
    for key in FLAG_SETTINGS[2:]:
        parser.add_argument(f"--{key}", type=int)
    parser.add_argument("--resume", action="store_true", help="continue the run in --out after its last finished round")


def cli_settings(a: Any, files_given: bool, read: Callable[[], tuple]) -> tuple:
    """``(model folder, RoundsConfig, the trainer's own settings)``: with ``--resume`` alone the
    run folder's own; else ``read()``'s ``(settings dict, own settings)`` with the flags over them."""
    given = files_given or a.engineer_model is not None or any(getattr(a, k) is not None for k in FLAG_SETTINGS)
    if a.resume and a.model is None and not given:
        saved = run_settings(a.out)
        if saved is not None:
            return saved["model"], RoundsConfig.from_dict(saved["settings"]), saved.get("verl")
    if a.model is None:
        raise ConfigError("--model: required (except with --resume alone, which reads the run's own)")
    data, own = read()
    data.update({k: getattr(a, k) for k in FLAG_SETTINGS if getattr(a, k) is not None})
    if a.engineer_model is not None:
        data["engineer_params"] = {**(data.get("engineer_params") or {}), "model": a.engineer_model}
    return a.model, RoundsConfig.from_dict(data), own


def cli_main(run: Callable[[], Optional[str]]) -> int:
    """A driver's exit status: ``run()``'s message on standard error and 0, or floe's error and 2."""
    try:
        message = run()
    except FloeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if message:
        print(message, file=sys.stderr)
    return 0
