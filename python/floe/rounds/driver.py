"""The round protocol for a trainee written in Python: floe-rounds' driver, the one ``floe
train`` runs (:func:`floe.drive_rounds`, where every method's contract and the engineer's choice
are described). The driver gives a trainee each round's instances (from ``floe train``'s round
seeds), validates it on the fixed set, counts the failures, asks the curriculum or the engineer
for the next configuration, and writes the run folder (``floe engineer --run`` reads it).
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence

from .._floe import Instance, drive_rounds, run_state


class Trainee(Protocol):
    """What the driver calls; a trainee whose settings name the ``self`` or ``base`` engineer
    also has ``current_model()`` and ``base_model()``, each a ``(model, tokenizer)``."""

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


def drive(trainee: Trainee, settings: Any, out: str, **options: Any) -> RunState:
    """:func:`floe.drive_rounds` (``model``, ``trainer``, ``verl``, ``engineer``, ``resume``,
    ``overwrite``, ``say``), its state as a :class:`RunState`."""
    return RunState(drive_rounds(trainee, settings, out, **options))
