"""The run folder, in ``floe train``'s layout where the two share a meaning, and the run state
that resuming reads.

| path | what |
|---|---|
| ``config.json`` | the run's settings and model folder; a resumed run must have the same |
| ``state.json`` | where the run stands: rounds done, the history, how each round's configuration came about, the lengths of the metrics files; written atomically after every round |
| ``round-<r>/`` | the model and tokenizer after round r (``save_pretrained``) |
| ``steps.jsonl`` | one line per GRPO step (TRL's log, with ``round``) |
| ``rounds.jsonl`` | one line per round's validation: rates, failures per size, configuration, times |
| ``engineer/round-<r>/`` | ``context.md``, ``limits.json``, ``reply.txt``, ``reply-1.txt`` …, ``config.json``, ``rationale.txt``, ``log.txt``: as ``floe train`` writes them, so ``floe engineer --run`` reads them |
| ``validation/round-<r>.md`` | round r's validation table |
| ``eval.md``, ``eval.json`` | the last validation as tables |

A round's files are written before ``state.json`` counts it: a run killed at any point resumes
from the last round that ``state.json`` counts, with the metrics files cut back to their lengths
then and the unfinished round started again (its engineer asked again).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Optional

from .._floe import ConfigError

STATE_FORMAT = "floe-rounds/1"


def write_atomic(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file and a rename."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class RunState:
    """Where a run stands (``state.json``)."""

    rounds_done: int = 0
    #: floe's ``History``: ``{"rounds": [{"round", "config", "results"}, ...]}``.
    history: dict = field(default_factory=lambda: {"rounds": []})
    #: How each round's configuration came about: ``{"round", "source", "rationale", "notes"}``.
    designs: list = field(default_factory=list)
    #: Bytes of ``steps.jsonl`` and ``rounds.jsonl`` when the state was written.
    steps_len: int = 0
    rounds_len: int = 0
    #: GRPO steps over every round.
    grpo_steps: int = 0

    def design(self, r: int) -> Optional[dict]:
        """How round ``r``'s configuration came about, if recorded."""
        return next((d for d in self.designs if d["round"] == r), None)


class RunFolder:
    """The files of one run."""

    def __init__(self, out: str) -> None:
        self.out = out

    def path(self, *parts: str) -> str:
        return os.path.join(self.out, *parts)

    def model_dir(self, r: int) -> str:
        """The model after round ``r``."""
        return self.path(f"round-{r}")

    def engineer_dir(self, r: int) -> str:
        """Round ``r``'s engineer files (``floe train``'s ``engineer/round-<r>/``)."""
        return self.path("engineer", f"round-{r}")

    def start(self, settings: dict, resume: bool) -> RunState:
        """Opens the folder for a run with ``settings`` (``config.json``): a new run in an empty
        (or new) folder, or with ``resume`` the state of the run already there.

        Raises :class:`floe.ConfigError` for a folder that holds a run when not resuming, or one
        written with other settings."""
        os.makedirs(self.out, exist_ok=True)
        state_path, config_path = self.path("state.json"), self.path("config.json")
        if os.path.exists(state_path):
            if not resume:
                raise ConfigError(
                    f"{self.out}: holds a run already (state.json); pass --resume to continue it, "
                    "or choose another --out"
                )
            with open(config_path, encoding="utf-8") as f:
                saved = json.load(f)
            if saved != settings:
                changed = sorted(k for k in set(saved) | set(settings) if saved.get(k) != settings.get(k))
                raise ConfigError(
                    f"{config_path}: written with other settings ({', '.join(changed)} differ); "
                    "resume with the same ones"
                )
            state = self.read_state()
            self.cut_metrics(state)
            return state
        write_atomic(config_path, json.dumps(settings, indent=2) + "\n")
        for name in ("steps.jsonl", "rounds.jsonl"):
            open(self.path(name), "w", encoding="utf-8").close()
        state = RunState()
        self.write_state(state)
        return state

    def read_state(self) -> RunState:
        path = self.path("state.json")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: {e}") from e
        if data.pop("format", None) != STATE_FORMAT:
            raise ConfigError(f"{path}: not a floe.rounds state ({STATE_FORMAT})")
        return RunState(**data)

    def write_state(self, state: RunState) -> None:
        state.steps_len = os.path.getsize(self.path("steps.jsonl"))
        state.rounds_len = os.path.getsize(self.path("rounds.jsonl"))
        data = {"format": STATE_FORMAT, **state.__dict__}
        write_atomic(self.path("state.json"), json.dumps(data, indent=1) + "\n")

    def cut_metrics(self, state: RunState) -> None:
        """Cuts ``steps.jsonl`` and ``rounds.jsonl`` back to their lengths in ``state``: the lines
        of a round that did not finish go."""
        for name, length in (("steps.jsonl", state.steps_len), ("rounds.jsonl", state.rounds_len)):
            with open(self.path(name), "a+b") as f:
                f.truncate(length)

    def append(self, name: str, lines: list) -> None:
        """Appends JSON lines to ``steps.jsonl`` or ``rounds.jsonl``."""
        with open(self.path(name), "a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")

    def save_model(self, r: int, model: Any, tokenizer: Any) -> str:
        """Saves the model after round ``r`` into ``round-<r>/`` (through a temporary folder)."""
        final = self.model_dir(r)
        tmp = final + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        return final

    def write_design(self, r: int, asked: dict, took_s: float) -> dict:
        """Files an engineer's answer for round ``r`` as ``floe train`` does and returns the
        round's design record. ``asked`` is ``floe.Engineer.next_config``'s answer."""
        d = self.engineer_dir(r)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)

        def write(name: str, text: str) -> None:
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)

        write("context.md", asked["context"])
        write("limits.json", json.dumps(asked["limits"], indent=2) + "\n")
        write("reply.txt", asked["reply"] + "\n" if asked["reply"] else "")
        for i, text in enumerate(asked.get("replies") or [], start=1):
            write(f"reply-{i}.txt", text)
        notes = list(asked["notes"]) + [f"engineer answered in {took_s:.1f} s"]
        rationale = asked["rationale"]
        write("rationale.txt", rationale + "\n" if rationale is not None else "")
        write("config.json", json.dumps(asked["config"], indent=2) + "\n")
        write("log.txt", "\n".join(notes) + "\n")
        design = {"round": r, "source": asked["source"], "notes": notes}
        if rationale is not None:
            design["rationale"] = rationale
        return design

    def write_context_only(self, r: int, context: str) -> None:
        """Files the context before the engineer is asked (so that a reply that never comes
        still leaves what it was given)."""
        d = self.engineer_dir(r)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "context.md"), "w", encoding="utf-8") as f:
            f.write(context)
