"""python/examples/trl_grpo.py: TRL's GRPOTrainer for two steps on the CPU, scored by floe."""

import importlib.util
import math
import os

import pytest

import floe

pytest.importorskip("trl")
pytest.importorskip("torch")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "trl_grpo.py")


def _example():
    spec = importlib.util.spec_from_file_location("trl_grpo", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_grpo_steps_are_scored_by_floe(tmp_path):
    trainer, calls = _example().run(steps=2, out=str(tmp_path / "out"))
    assert trainer.state.global_step == 2
    # One reward call a step, on the batch's completions, with the dataset's instance column.
    assert len(calls) == 2
    logged = [e for e in trainer.state.log_history if "rewards/floe_tiered/mean" in e]
    assert len(logged) == 2
    for (completions, instances, rewards), entry in zip(calls, logged):
        assert len(completions) == len(instances) == len(rewards) == 4
        assert all(isinstance(r, float) and 0.0 <= r <= 1.0 for r in rewards)
        texts = [c[-1]["content"] for c in completions]
        assert rewards == floe.Reward("tiered").score(instances, texts).tolist()
        assert math.isclose(entry["rewards/floe_tiered/mean"], sum(rewards) / len(rewards), abs_tol=1e-6)
        assert all(floe.Instance.from_json(i).num_agents == 2 for i in instances)
