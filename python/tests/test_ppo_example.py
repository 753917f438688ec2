"""python/examples/ppo_vector_env.py: CleanRL-style PPO on floe.VectorEnv with the default rewards,
run briefly (it runs, trains on a few thousand steps and reports; the figures are in
docs/engine.md, measured with the full budget)."""

import importlib.util
import json
import os

import pytest

import floe

pytest.importorskip("torch")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "ppo_vector_env.py")


def _example():
    spec = importlib.util.spec_from_file_location("ppo_vector_env", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("agents", [2, 1])
def test_ppo_trains_briefly_and_reports(agents, capsys):
    small = ["--agents", str(agents), "--steps", "4096", "--envs", "16", "--rollout", "64", "--train-pool", "40",
             "--eval-pool", "20", "--episodes", "40", "--eval-envs", "20", "--hidden", "32"]
    report = _example().main(small)
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == report
    assert report["train_steps"] == 4096 and report["agents"] == agents
    assert report["held_out_episodes"] == 40
    assert 0.0 <= report["greedy_success"] <= 1.0 and 0.0 <= report["random_success"] <= 1.0
    # The example trains on the engine's own defaults.
    assert report["rewards"] == json.loads(floe.VectorEnv(floe.generate(agents, 5, count=1, wait_ratio=0.0),
                                                          1).engine.config_json)["rewards"]


LEVELS_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "ppo_levels.py")


@pytest.mark.parametrize("sampler", ["plr", "dr"])
def test_the_shared_network_ppo_with_a_level_sampler_trains_briefly_and_reports(sampler, capsys):
    spec = importlib.util.spec_from_file_location("ppo_levels", LEVELS_EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    small = ["--sampler", sampler, "--agents", "2-3", "--size", "5-6", "--steps", "4096", "--envs", "32",
             "--rollout", "16", "--pool", "24", "--hidden", "32", "--eval-levels", "12", "--eval-plays", "2",
             "--eval-size", "6", "--threads", "1"]
    report = mod.main(small)
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == report
    assert report["train_steps"] == 4096 and report["updates"] == 8 and report["agents"] == [2, 3]
    # The sampler was called each update with the script's scores, and refilled the pool.
    assert report["refilled"] > 0, report
    assert 0.0 <= report["held_out_success"] <= 1.0 and 0.0 <= report["random_success"] <= 1.0
