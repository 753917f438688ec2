"""The round protocol for a trainee written in Python: floe-rounds' driver, the one ``floe
train`` runs, called through :func:`floe.drive_rounds`. A trainee is any object with the methods
of :class:`Trainee`; the driver gives it each round's instances (from ``floe train``'s round
seeds), validates it on the fixed set, counts the failures, asks the curriculum or the engineer
for the next configuration, and writes the run folder (``floe engineer --run`` reads it).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Protocol, Sequence

from .._floe import Engineer, Instance, drive_rounds, run_state
from .config import RoundsConfig
from .engineers import run_engineer


def say_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Trainee(Protocol):
    """What the driver calls (see :func:`floe.drive_rounds` for every method's contract); a
    trainee whose settings name the ``self`` or ``base`` engineer also has ``current_model()``
    and ``base_model()``, each a ``(model, tokenizer)``."""

    def describe(self) -> str: ...

    def restore(self, folder: str, saved: Optional[dict]) -> Optional[dict]: ...

    def warm_start(self) -> Optional[dict]: ...

    def train(self, round: dict) -> dict: ...

    def answer(self, instances: Sequence[Instance]) -> list: ...

    def save(self, stage: str, folder: str, state: dict) -> None: ...

    def details(self) -> dict: ...


class RunState(dict):
    """A run state as the driver returns it (``state.json``'s content), its keys also readable
    as attributes: ``rounds_done``, ``history``, ``designs``, ``evals``, ``grpo_steps``, …"""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e

    def design(self, r: int) -> Optional[dict]:
        """How round ``r``'s configuration came about, if recorded."""
        return next((d for d in self["designs"] if d["round"] == r), None)


def read_state(out: str) -> Optional[RunState]:
    """The run state of the run folder ``out``, or None."""
    s = run_state(out)
    return RunState(s) if s is not None else None


def drive(
    trainee: Trainee,
    config: RoundsConfig,
    out: str,
    settings: dict,
    *,
    engineer: Optional[Engineer] = None,
    resume: bool = False,
    overwrite: bool = False,
    say: Callable[[str], None] = say_stderr,
) -> RunState:
    """Runs ``config``'s rounds with ``trainee`` into the run folder ``out``; ``settings`` is
    what its ``config.json`` records (a resumed run must give the same). The rounds after round
    0 are designed by ``engineer`` when given, else by the one ``config.engineer`` names
    (:func:`floe.rounds.engineers.run_engineer`), else by the curriculum."""
    if engineer is not None and not config.designs():
        config = config.replace(engineer=engineer.name)
    if engineer is None:
        engineer = run_engineer(config, trainee)
    state = drive_rounds(
        trainee,
        config.protocol(settings),
        out,
        engineer=engineer,
        resume=resume,
        overwrite=overwrite,
        say=say,
    )
    return RunState(state)
