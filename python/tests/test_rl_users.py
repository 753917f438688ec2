"""What reinforcement-learning users of floe's environments met: a goal paid again and again,
leaving the grid cheaper than a hole, undocumented rewards and failure codes, TorchRL's spec
check, and one agent behind a multi-agent action space."""

import json
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import floe

ROOT = Path(__file__).resolve().parents[2]

# Agent 0 starts next to its goal; agent 1 is far from its own, so the episode goes on.
REVISIT = floe.Instance.from_json(
    '{"grid": ["FFFFF", "FFFFH"], "agents": [{"start": [0, 0], "goal": [0, 1]}, {"start": [1, 0], "goal": [1, 3]}]}'
)


@pytest.mark.parametrize("step_reward", [None, {"name": "shaped"}])
@pytest.mark.parametrize("mode", ["strict", "soft"])
def test_a_goal_is_paid_once_per_episode(mode, step_reward):
    """Stepping off the goal and back, five times, earns the arrival once: with the engine's
    weights and with the ``shaped`` plugin alike."""
    vec = floe.VectorEnv([REVISIT], 1, mode=mode, episode_limit=20, step_reward=step_reward)
    vec.reset(seed=0)
    rewards, reached = [], []
    for t in range(10):
        _, _, term, trunc, info = vec.step(np.array([[4 if t % 2 == 0 else 3, 0]], np.uint8))
        assert not term[0] and not trunc[0]
        rewards.append(float(info["agent_rewards"][0, 0]))
        reached.append(bool(info["events"][0, 0] & 32))
    assert reached == [True] + [False] * 9
    assert sum(rewards) < 1.0, f"ten steps on and off the goal earn {sum(rewards):.3f}"


def test_leaving_the_grid_costs_at_least_a_hole():
    inst = floe.Instance.from_json(
        '{"grid": ["FFFFF", "FFFFH"], "agents": [{"start": [0, 4], "goal": [0, 3]}, {"start": [1, 0], "goal": [1, 1]}]}'
    )
    totals = {}
    for name, action in (("off_grid", 1), ("hole", 2)):
        vec = floe.VectorEnv([inst], 1, mode="strict")
        vec.reset(seed=0)
        _, rew, term, _, info = vec.step(np.array([[action, 0]], np.uint8))
        assert term[0] and info["final_info"]["failure_kind"][0] == floe.FAILURE_KINDS.index(
            "out_of_bounds" if name == "off_grid" else "hole") + 1
        totals[name] = rew[0]
    assert totals["off_grid"] <= totals["hole"], totals


def _doc_table(text: str) -> dict:
    """``weight: default`` pairs of the rows of a reward table (Markdown or reStructuredText) in ``text``."""
    row = r"^\|? ?``?(reach_goal|step|blocked|off_grid|hole|conflict)``?\s*\|?\s*([+-]?\d+(?:\.\d+)?)"
    return {m[0]: float(m[1]) for m in re.findall(row, text, re.M)}


def test_the_reward_table_is_documented_with_the_engine_defaults():
    defaults = json.loads(floe.VectorEnv([REVISIT], 1).engine.config_json)["rewards"]
    for where, text in (("docs/engine.md", (ROOT / "docs/engine.md").read_text()),
                        ("floe.gym's docstring", floe.gym.__doc__)):
        assert _doc_table(text) == pytest.approx(defaults), where
        for kind in ("out_of_bounds", "vertex_conflict", "edge_conflict"):
            code = floe.FAILURE_KINDS.index(kind) + 1
            assert re.search(rf"{code}\W+``?{kind}", text), f"{where}: failure code {code} {kind}"
    shaped = (ROOT / "docs/engine.md").read_text()
    for param in ("progress", "gamma", "step_cost", "collision", "hole", "out_of_bounds", "goal"):
        assert f"`{param}`" in shaped, f"docs/engine.md: the shaped plugin's {param}"


def test_vector_env_infos_and_attributes_fit_wrappers():
    vec = floe.VectorEnv([REVISIT], 3)
    assert vec.autoreset_mode == gym.vector.AutoresetMode.SAME_STEP
    _, reset_info = vec.reset(seed=1)
    _, _, _, _, step_info = vec.step(vec.action_space.sample())

    def keys(d, prefix=""):
        return {prefix + k for k, v in d.items()} | {x for k, v in d.items() if isinstance(v, dict)
                                                   for x in keys(v, prefix + k + ".")}
    assert keys(reset_info) == keys(step_info)
    for k in ("agent_rewards", "events", "final_obs", "_final_obs", "_final_info"):
        assert reset_info[k].shape == step_info[k].shape and reset_info[k].dtype == step_info[k].dtype, k
    assert step_info["events"].dtype == np.int32
    assert not reset_info["_final_obs"].any()


def test_torchrl_check_env_specs():
    torchrl_gym = pytest.importorskip("torchrl.envs.libs.gym")
    from torchrl.envs.utils import check_env_specs
    insts = floe.generate(2, 5, count=4, seed=3, hole_ratio=0.2, wait_ratio=0.0)
    env = torchrl_gym.GymWrapper(floe.VectorEnv(insts, 4, episode_limit=8))
    check_env_specs(env)
    env.rollout(20, break_when_any_done=False)


def test_one_agent_gets_a_discrete_action_space():
    insts = floe.generate(1, 5, count=6, seed=2, hole_ratio=0.2, wait_ratio=0.0)
    vec = floe.VectorEnv(insts, 4, single_agent=True)
    assert vec.single_action_space == gym.spaces.Discrete(5)
    assert vec.single_observation_space.shape == (3, 5, 5)
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (4, 3, 5, 5)
    obs, rew, _, _, info = vec.step(vec.action_space.sample())
    assert obs.shape == (4, 3, 5, 5) and np.shares_memory(obs, vec.engine.obs)
    assert info["final_obs"].shape == (4, 3, 5, 5)
    env = floe.Env(insts, single_agent=True, episode_limit=12)
    check_env(env, skip_render_check=True)
    assert env.action_space == gym.spaces.Discrete(5)
    with pytest.raises(ValueError, match="one agent"):
        floe.VectorEnv(floe.generate(2, 5, count=2, seed=1, wait_ratio=0.0), 2, single_agent=True)
    sb3 = pytest.importorskip("stable_baselines3")
    sb3.DQN("MlpPolicy", env, learning_starts=0, buffer_size=100).learn(64)
