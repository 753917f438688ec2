"""The paper's comparison of environment designs, over any trainee: every contender (a curriculum,
an engineer, or ``fixed``) trains from the same starting model with the same settings and seeds,
the final models answer one held-out suite, and the table gives valid / optimal rates with
standard errors clustered by seed and instance, the rounds' gain over the start, and each
contender's paired difference from ``fixed`` — floe-rounds' table, the one ``floe experiment``
prints for floe's own policy.

    from floe.rounds import Contender, RoundsConfig, experiment
    table = experiment(make_trainee, RoundsConfig(rounds=2, samples=16), out="out/x",
                       contenders=[Contender("fixed"), Contender("sec", curriculum="sec")],
                       seeds=[0, 1], suite={"agents": [2], "max_size": 4, "per_cell": 4})

Everything lives in ``out``: ``start/`` (the starting model's suite outcomes),
``<contender>/seed-<s>/`` (each run's folder, with ``suite-outcomes.json`` once evaluated) and
``table.md``. Running it again resumes: finished runs and evaluations are kept.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .._floe import Instance, experiment_table, suite as make_suite, verify_batch
from .config import RoundsConfig
from .driver import Trainee, drive, say_stderr


@dataclass
class Contender:
    """One design of the rounds after round 0: ``engineer`` (``fixed``: none) and a curriculum."""

    name: str
    engineer: str = "fixed"
    curriculum: Optional[str] = None
    curriculum_params: Optional[dict] = None

    def config(self, base: RoundsConfig, seed: int) -> RoundsConfig:
        """``base`` with this contender's designers and ``seed``."""
        return dataclasses.replace(
            base,
            seed=seed,
            engineer=self.engineer,
            curriculum=self.curriculum,
            curriculum_params=self.curriculum_params,
        )


def outcomes(trainee: Trainee, suite: Sequence[Instance], path: str) -> list:
    """The trainee's ``(valid, optimal)`` on every suite instance, kept in ``path`` (read back
    when it holds as many)."""
    try:
        with open(path, encoding="utf-8") as f:
            kept = [tuple(o) for o in json.load(f)]
        if len(kept) == len(suite):
            return kept
    except (OSError, ValueError):
        pass
    v = verify_batch(list(suite), trainee.answer(suite))
    got = [(bool(a), bool(b)) for a, b in zip(v["valid"], v["optimal"])]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(got, f)
    return got


def experiment(
    make_trainee: Callable[[Optional[Contender], int, str], Trainee],
    config: RoundsConfig,
    *,
    out: str,
    contenders: Sequence[Contender],
    seeds: Sequence[int],
    suite: dict,
    say: Callable[[str], None] = say_stderr,
) -> str:
    """Runs (or resumes) the comparison in ``out`` and returns the table as Markdown.

    ``make_trainee(contender, seed, folder)`` makes a fresh trainee from the shared starting
    model (``contender`` None: the start itself, whose suite outcomes are the table's ``warm
    start`` row); a contender's engineer is the one its settings name (``self`` and ``base``
    ask the trainee's models). ``suite`` holds :func:`floe.suite`'s settings (``agents``, ``max_size``,
    ``per_cell``, …; the others its defaults)."""
    cells = make_suite(**suite)
    instances = [inst for _, cell in cells for inst in cell]
    os.makedirs(out, exist_ok=True)
    start = os.path.join(out, "start")
    rows = [("warm start", [outcomes(make_trainee(None, seeds[0], start), instances, os.path.join(start, "suite-outcomes.json"))])]
    per = {c.name: [] for c in contenders}
    for seed in seeds:
        for c in contenders:
            folder = os.path.join(out, c.name, f"seed-{seed}")
            cfg = c.config(config, seed)
            trainee = make_trainee(c, seed, folder)
            say(f"experiment: {c.name} with seed {seed}")
            settings = {"experiment": c.name, "seed": seed, "settings": cfg.to_dict()}
            drive(trainee, cfg, folder, settings, resume=True, say=say)
            per[c.name].append(outcomes(trainee, instances, os.path.join(folder, "suite-outcomes.json")))
    rows += [(c.name, per[c.name]) for c in contenders]
    setup = {
        "suite": {k: v for k, v in suite.items() if k != "out"},
        "seeds": len(seeds),
        "rounds": config.rounds,
        "samples": config.samples,
    }
    table = experiment_table(setup, instances, rows)
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as f:
        f.write(table)
    return table
