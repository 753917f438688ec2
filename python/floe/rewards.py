"""Rewards for LLM trainers, on floe's batched verifier and its reward plugins.

* :func:`trl_reward` makes a function with the signature TRL's ``GRPOTrainer`` takes,
  ``(prompts, completions, **kwargs) -> list[float]``; the instances come from the dataset column
  named ``instance`` (JSON text, as :func:`floe.build_records` writes it).
* :func:`compute_score` is verl's ``compute_score(data_source, solution_str, ground_truth,
  extra_info)``, with ``ground_truth`` the instance's JSON (verl's ``reward_model.ground_truth``).

Both score with the same reward plugins as ``floe train`` (``tiered`` by default), built in or
loaded from a plugin library by path.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ._floe import Reward


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or TRL's conversational form (a list of messages,
    the last one's ``content``)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    if isinstance(completion, dict) and "content" in completion:
        return str(completion["content"])
    raise TypeError(f"a completion must be a string or a list of chat messages, not {type(completion).__name__}")


def trl_reward(
    reward: str = "tiered",
    params: Optional[dict] = None,
    library: Optional[str] = None,
    instance_key: str = "instance",
) -> Callable[..., list]:
    """A TRL reward function scoring each completion with the reward plugin ``reward`` (a built-in
    name, or a plugin in the library at path ``library``). All completions of a call are verified
    in one call into Rust, on all cores, with the GIL released."""
    plugin = Reward(reward, params, library)

    def floe_reward(prompts, completions, **kwargs) -> list:
        if instance_key not in kwargs:
            raise KeyError(
                f"the dataset has no column {instance_key!r}: build it with floe.build_records or "
                "floe.to_hf_dataset, or pass instance_key"
            )
        instances = list(kwargs[instance_key])
        texts = [completion_text(c) for c in completions]
        return plugin.score(instances, texts).tolist()

    floe_reward.__name__ = f"floe_{reward.replace('-', '_')}"
    floe_reward.__qualname__ = floe_reward.__name__
    return floe_reward


def make_compute_score(
    reward: str = "tiered", params: Optional[dict] = None, library: Optional[str] = None
) -> Callable[..., float]:
    """verl's ``compute_score`` with a chosen reward plugin."""
    plugin = Reward(reward, params, library)

    def compute_score(data_source, solution_str, ground_truth, extra_info=None, **_: Any) -> float:
        return float(plugin.score([ground_truth], [completion_text(solution_str)])[0])

    return compute_score


_scores: dict = {}


def _plain(value: Any) -> Any:
    """``value`` with every mapping a dict and every sequence but text a list (verl hands its
    ``reward_kwargs`` over as OmegaConf containers)."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):
        return [_plain(v) for v in value]
    return value


def compute_score(
    data_source,
    solution_str,
    ground_truth,
    extra_info=None,
    reward: str = "tiered",
    reward_params: Optional[dict] = None,
    reward_library: Optional[str] = None,
    **kwargs: Any,
) -> float:
    """verl's reward entry point: point verl's ``reward.custom_reward_function.path`` at the
    module, ``pkg://floe.rewards`` (verl cannot load ``floe/rewards.py`` as a file: it imports
    floe's extension), and ``name`` at ``compute_score``. The reward plugin is ``tiered`` unless
    verl's ``reward_kwargs`` name another: ``reward`` (a name), ``reward_params`` (its
    parameters), ``reward_library`` (a plugin library's path); each is made once."""
    params = _plain(reward_params)
    key = (reward, json.dumps(params, sort_keys=True), reward_library)
    score = _scores.get(key)
    if score is None:
        score = _scores[key] = make_compute_score(reward, params, reward_library)
    return score(data_source, solution_str, ground_truth, extra_info)
