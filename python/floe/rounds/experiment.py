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

The loop and the folder are floe-rounds' (:func:`floe.run_experiment`): ``warm/`` (the starting
model's suite outcomes), ``<contender>/seed-<s>/`` (each run's folder, with
``suite-outcomes.json`` once evaluated), ``experiment.json`` and ``table.md``. Running it again
resumes: finished runs and evaluations are kept.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .._floe import run_experiment
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
        return base.replace(
            seed=seed, engineer=self.engineer, curriculum=self.curriculum, curriculum_params=self.curriculum_params
        )


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

    def run(c: Optional[int], seed: int, folder: str) -> Trainee:
        if c is None:
            return make_trainee(None, seed, folder)
        contender = contenders[c]
        cfg = contender.config(config, seed)
        trainee = make_trainee(contender, seed, folder)
        settings = {"experiment": contender.name, "seed": seed, "settings": cfg.to_dict()}
        drive(trainee, cfg, folder, settings, resume=True, say=say)
        return trainee

    record = {
        "settings": config.to_dict(),
        "contenders": [dataclasses.asdict(c) for c in contenders],
        "suite": suite,
        "seeds": list(seeds),
    }
    names = [c.name for c in contenders]
    return run_experiment(
        run, out, contenders=names, seeds=list(seeds), suite=suite,
        rounds=config.rounds, samples=config.samples, record=record, say=say,
    )  # fmt: skip
