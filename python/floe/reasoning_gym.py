"""MAPF-FrozenLake as a Reasoning Gym dataset.

Importing this module registers the dataset ``floe_mapf`` (with its curriculum) in Reasoning Gym::

    import reasoning_gym
    import floe.reasoning_gym  # registers "floe_mapf"

    data = reasoning_gym.create_dataset("floe_mapf", size=500, seed=1, min_size=4, max_size=6)
    entry = data[0]            # question (the paper's prompt), answer (an optimal plan), metadata
    data.score_answer(completion, entry)   # floe's reward for the completion

Items are floe instances made by :func:`floe.generate`, asked with the paper's prompt (as
:func:`floe.build_records` writes it); ``metadata["instance"]`` is the instance's JSON, the
``instance`` column of the TRL dataset and verl's ``reward_model.ground_truth``.
:meth:`FloeMapfDataset.score_answer` is the reward plugin's score for the answer, the value
:func:`floe.trl_reward` and :func:`floe.compute_score` give for the same instance and answer.

The curriculum :class:`FloeMapfCurriculum` has three attributes: ``size`` (the range of map
sides), ``hole_ratio`` and ``wait_ratio`` (the share of instances whose optimal plans need a wait).

Needs ``reasoning-gym`` (``pip install 'floe[reasoning-gym]'``), which needs Python 3.10 or later.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Optional, Sequence

try:
    import reasoning_gym.factory as _rg_factory
    from reasoning_gym.coaching import BaseCurriculum, RangeAttributeDefinition, ScalarAttributeDefinition
    from reasoning_gym.factory import ProceduralDataset, register_dataset
except ImportError as e:  # pragma: no cover - exercised by a test in a separate interpreter
    raise ImportError(
        "floe.reasoning_gym needs Reasoning Gym (Python 3.10 or later): "
        "pip install 'floe[reasoning-gym]' (or pip install reasoning-gym)"
    ) from e

from ._floe import Instance, Reward, generate, write_answer
from .datasets import build_records

DATASET_NAME = "floe_mapf"

@dataclass
class FloeMapfConfig:
    """What to generate. Each item draws its map side from ``min_size..=max_size`` and its number
    of agents from ``min_agents..=max_agents``; it needs a wait with probability ``wait_ratio``
    (never with one agent). ``reward`` (with ``reward_params`` and a plugin ``reward_library``)
    is the reward plugin ``score_answer`` uses, as for :func:`floe.trl_reward`."""

    min_size: int = 4
    max_size: int = 6
    min_agents: int = 3
    max_agents: int = 3
    hole_ratio: float = 0.1
    wait_ratio: float = 0.5
    max_attempts: int = 2000
    max_nodes: int = 5000
    reward: str = "tiered"
    reward_params: Optional[dict] = None
    reward_library: Optional[str] = None
    seed: Optional[int] = None
    size: int = 500

    def validate(self) -> None:
        if not 1 <= self.min_size <= self.max_size:
            raise ValueError(f"need 1 <= min_size <= max_size, got {self.min_size} and {self.max_size}")
        if not 1 <= self.min_agents <= self.max_agents:
            raise ValueError(f"need 1 <= min_agents <= max_agents, got {self.min_agents} and {self.max_agents}")
        if not 0.0 <= self.hole_ratio < 1.0:
            raise ValueError(f"hole_ratio {self.hole_ratio} is outside [0, 1)")
        if not 0.0 <= self.wait_ratio <= 1.0:
            raise ValueError(f"wait_ratio {self.wait_ratio} is outside [0, 1]")
        if self.size < 1:
            raise ValueError(f"size must be at least 1, got {self.size}")


class FloeMapfDataset(ProceduralDataset):
    """MAPF-FrozenLake instances with the paper's prompt, scored by floe's reward plugin."""

    def __init__(self, config: FloeMapfConfig):
        super().__init__(config=config, seed=config.seed, size=config.size)
        self._reward: Optional[Reward] = None

    @property
    def reward(self) -> Reward:
        """The reward plugin of the configuration (made on first use)."""
        if self._reward is None:
            c = self.config
            self._reward = Reward(c.reward, c.reward_params, c.reward_library)
        return self._reward

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_reward"] = None
        return state

    def instance(self, idx: int) -> Instance:
        """Item ``idx``'s instance: the same for the same seed, configuration and index."""
        c = self.config
        rng = random.Random(self.seed + idx)
        side = rng.randint(c.min_size, c.max_size)
        agents = rng.randint(c.min_agents, c.max_agents)
        wants_wait = rng.random() < c.wait_ratio and agents > 1
        return generate(
            agents,
            side,
            hole_ratio=c.hole_ratio,
            wait_ratio=1.0 if wants_wait else 0.0,
            count=1,
            seed=rng.getrandbits(63),
            max_attempts=c.max_attempts,
            max_nodes=c.max_nodes,
        )[0]

    def __getitem__(self, idx: int) -> dict[str, Any]:
        if not 0 <= idx < self.size:
            raise IndexError(f"index {idx} is outside the dataset's {self.size} items")
        c = self.config
        inst = self.instance(idx)
        record = build_records([inst])[0]
        moves = json.loads(record["instance"])["optimal"]["moves"]
        return {
            "question": record["prompt"][-1]["content"],
            "answer": write_answer(inst, moves),
            "metadata": {
                "source_dataset": DATASET_NAME,
                "source_index": idx,
                "instance": record["instance"],
                "num_agents": record["num_agents"],
                "size": record["size"],
                "hole_ratio": c.hole_ratio,
                "needs_wait": inst.needs_wait,
                "optimal_soc": record["optimal_soc"],
                "difficulty": {
                    "size": (c.min_size, c.max_size),
                    "agents": (c.min_agents, c.max_agents),
                    "hole_ratio": c.hole_ratio,
                    "wait_ratio": c.wait_ratio,
                },
            },
        }

    def score_answer(self, answer: Optional[str], entry: dict[str, Any]) -> float:
        """floe's reward for ``answer`` (``None`` is scored as an empty answer) on the entry's
        instance."""
        text = answer if isinstance(answer, str) else ""
        return float(self.reward.score([entry["metadata"]["instance"]], [text])[0])

    def score_answers(self, answers: Sequence[Optional[str]], entries: Sequence[dict[str, Any]]) -> list:
        """:meth:`score_answer` for many answers, verified in one call (on all cores)."""
        if len(answers) != len(entries):
            raise ValueError(f"{len(answers)} answers for {len(entries)} entries")
        texts = [a if isinstance(a, str) else "" for a in answers]
        return self.reward.score([e["metadata"]["instance"] for e in entries], texts).tolist()


class FloeMapfCurriculum(BaseCurriculum):
    """Levels of map size (the range of sides grows from 4), hole ratio and wait ratio."""

    def __init__(self):
        super().__init__(FloeMapfCurriculum.__name__, FloeMapfConfig)
        self._define_attributes(
            RangeAttributeDefinition(
                name="size",
                levels=[4, 5, 6, 8, 10],
                description="Side of the square map",
                lower_field_name="min_size",
                upper_field_name="max_size",
            ),
            ScalarAttributeDefinition(
                name="hole_ratio",
                levels=[0.0, 0.1, 0.2, 0.3],
                default_level=1,
                description="Share of the map's cells that are holes",
                field_name="hole_ratio",
            ),
            ScalarAttributeDefinition(
                name="wait_ratio",
                levels=[0.0, 0.25, 0.5, 0.75],
                description="Share of instances whose optimal plans need a wait",
                field_name="wait_ratio",
            ),
        )


if DATASET_NAME not in _rg_factory.DATASETS:
    register_dataset(DATASET_NAME, FloeMapfDataset, FloeMapfConfig, FloeMapfCurriculum)
