import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.utils.passive_env_checker import check_obs
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from pettingzoo.test import parallel_api_test

import floe


def test_gymnasium_check_env(small):
    for mode in ("strict", "soft"):
        check_env(floe.Env(small, mode=mode, episode_limit=12), skip_render_check=True)


def test_vector_env_matches_gymnasium_sync_vector_env(small):
    """Gymnasium's own SyncVectorEnv over single floe environments, same-step autoreset, must give
    the same observations, rewards and flags as floe's batched VectorEnv."""
    n = 6
    vec = floe.VectorEnv(small, n, mode="soft", episode_limit=9)
    ref = SyncVectorEnv([lambda: floe.Env(small, mode="soft", episode_limit=9) for _ in range(n)],
                        autoreset_mode=AutoresetMode.SAME_STEP)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, _ = vec.reset(seed=5)
    robs, _ = ref.reset(seed=5)
    assert data_equivalence(obs, robs, exact=True)
    vec.action_space.seed(1)
    ended = 0
    for _ in range(60):
        a = vec.action_space.sample()
        obs, rew, term, trunc, info = vec.step(a)
        robs, rrew, rterm, rtrunc, rinfo = ref.step(a)
        assert data_equivalence(obs, robs, exact=True)
        assert data_equivalence(rew, rrew, exact=True)
        assert data_equivalence(term, rterm, exact=True) and data_equivalence(trunc, rtrunc, exact=True)
        # Where an episode ended, floe's info["final_obs"] is Gymnasium's.
        for e in np.flatnonzero(term | trunc):
            assert info["_final_obs"][e] and rinfo["_final_obs"][e]
            assert data_equivalence(info["final_obs"][e], rinfo["final_obs"][e], exact=True)
            ended += 1
    assert ended > 0


def test_vector_env_shares_memory_with_the_engine(small):
    vec = floe.VectorEnv(small, 8, mode="soft")
    obs, _ = vec.reset(seed=0)
    check_obs(obs, vec.observation_space, "reset")
    assert np.shares_memory(obs, vec.engine.obs)
    obs2, rew, term, trunc, info = vec.step(vec.action_space.sample())
    assert obs2 is obs  # the same buffer, written in place
    assert np.shares_memory(term, vec.engine.terminated)
    assert np.shares_memory(info["agent_rewards"], vec.engine.rewards)
    check_obs(obs2, vec.observation_space, "step")
    assert rew.shape == (8,) and rew.dtype == np.float64
    assert np.allclose(rew, info["agent_rewards"].sum(axis=1))


def test_vector_env_bad_input(small):
    vec = floe.VectorEnv(small, 4)
    with pytest.raises(floe.BadInput, match="not reset|reset"):
        vec.step(np.zeros((4, 3), np.uint8))
    vec.reset(seed=1)
    with pytest.raises(floe.BadInput, match="action 7"):
        vec.step(np.full((4, 3), 7, np.uint8))
    with pytest.raises(floe.BadInput, match="actions"):
        vec.step(np.zeros((4, 2), np.uint8))
    with pytest.raises(floe.ConfigError, match="backend"):
        floe.VectorEnv(small, 4, backend="tpu")
    with pytest.raises(floe.ConfigError, match="num_envs"):
        floe.VectorEnv(small, 0)
    # The GPU's limits are the configuration's, found before any adapter is looked for: the
    # same error on a machine with a GPU and on one without.
    with pytest.raises(floe.ConfigError, match="obs_radius 8"):
        floe.VectorEnv(small, 4, backend="gpu", obs_radius=8)
    vec.reset(seed=2, options={"instances": [0, 1, 2, 3]})
    assert vec.current_instances().tolist() == [0, 1, 2, 3]


def test_pettingzoo_parallel_api(small):
    parallel_api_test(floe.ParallelEnv(small, mode="soft", episode_limit=10), num_cycles=200)
    parallel_api_test(floe.ParallelEnv(small, mode="strict", episode_limit=10), num_cycles=200)


def test_solver_plan_succeeds_in_the_env(small):
    """Stepping an optimal plan through the single env ends in success after makespan steps."""
    env = floe.Env(small, mode="strict", episode_limit=40)
    codes = {"W": 0, "U": 1, "D": 2, "L": 3, "R": 4}
    _, info = env.reset(seed=0, options=None)
    inst = small[info["instance"]]
    sol = floe.solve(inst)
    for t in range(sol["makespan"]):
        a = [codes[m[t]] if t < len(m) else 0 for m in sol["moves"]]
        _, _, term, trunc, step_info = env.step(np.array(a, np.uint8))
    assert term and not trunc and step_info["outcome"] == "success"
    assert step_info["episode_steps"] == sol["makespan"]


def test_gpu_backend_gives_the_cpu_bytes(small):
    """The wgpu backend (any adapter, Mesa's lavapipe included) against the CPU reference: every
    output identical. Skipped without an adapter unless FLOE_REQUIRE_GPU=1."""
    import os

    try:
        gpu = floe.VectorEnv(small, 8, mode="soft", episode_limit=9, backend="gpu")
    except floe.EngineFailed as e:
        if os.environ.get("FLOE_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"no GPU adapter: {e}")
    cpu = floe.VectorEnv(small, 8, mode="soft", episode_limit=9)
    assert np.array_equal(cpu.reset(seed=1)[0], gpu.reset(seed=1)[0])
    cpu.action_space.seed(0)
    for _ in range(50):
        a = cpu.action_space.sample()
        c, g = cpu.step(a), gpu.step(a)
        for x, y in zip(c[:4], g[:4]):
            assert np.array_equal(x, y)
        assert np.array_equal(c[4]["final_obs"], g[4]["final_obs"])
        assert np.array_equal(c[4]["agent_rewards"], g[4]["agent_rewards"])


def test_bits_unpack_to_the_bytes_and_none_has_no_observation(small):
    """The low-level Engine in every observation format: bits unpack to exactly the bytes, and
    none steps the same with empty observation arrays."""
    engines = {f: floe.Engine(small, {"num_envs": 8, "mode": "soft", "obs_radius": 5, "obs_format": f})
               for f in ("bytes", "bits", "none")}
    assert [engines[f].obs_stride for f in ("bytes", "bits", "none")] == [364, 48, 0]
    assert engines["bits"].obs_format == "bits" and engines["none"].obs.size == 0
    for e in engines.values():
        e.reset(3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        actions = rng.integers(0, 5, size=(8, engines["bytes"].max_agents), dtype=np.uint8)
        for e in engines.values():
            e.step(actions)
        np.testing.assert_array_equal(floe.unpack_bits(engines["bits"].obs, 5), engines["bytes"].obs)
        np.testing.assert_array_equal(engines["none"].events, engines["bytes"].events)
    with pytest.raises(floe.BadInput, match="last axis"):
        floe.unpack_bits(engines["bytes"].obs, 5)
    with pytest.raises(floe.ConfigError):
        floe.Engine(small, {"obs_format": "nibbles"})


THREE_BY_THREE = floe.Instance.from_json(
    '{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [2, 2]}, {"start": [2, 0], "goal": [0, 2]}]}'
)


def test_a_step_reward_plugin_scores_each_step():
    """The built-in ``shaped`` reward named as the engine's step reward replaces its weights:
    0.1 a cell of progress, 0.01 a step, +1 on arrival, -1 into a hole (by hand, 3x3 instance)."""
    plain = floe.VectorEnv([THREE_BY_THREE], 1)
    shaped = floe.VectorEnv([THREE_BY_THREE], 1, step_reward={"name": "shaped"})
    assert '"step_reward"' in shaped.engine.config_json
    plain.reset(seed=1)
    shaped.reset(seed=1)
    for t, actions in enumerate([[4, 1], [4, 1], [2, 4], [2, 4]]):  # RRDD, UURR: optimal
        _, _, _, _, own = plain.step(np.array([actions], np.uint8))
        own = own["agent_rewards"].copy()
        _, rew, term, _, info = shaped.step(np.array([actions], np.uint8))
        want = 1.09 if t == 3 else 0.09
        assert np.allclose(info["agent_rewards"], [[want, want]], atol=1e-6)
        assert not np.allclose(own, info["agent_rewards"])
    assert term[0]
    env = floe.Env([THREE_BY_THREE], step_reward={"name": "shaped", "params": {"hole": 2.0}})
    env.reset(seed=2)
    env.step(np.array([4, 0], np.uint8))
    _, reward, terminated, _, _ = env.step(np.array([2, 0], np.uint8))  # into the hole; the other waits
    assert terminated and reward == pytest.approx(-2.01 - 0.01)


def test_step_reward_refusals():
    with pytest.raises(floe.ConfigError, match="not steps"):
        floe.Engine([THREE_BY_THREE], {"step_reward": {"name": "tiered"}})
    with pytest.raises(floe.UnknownPlugin, match="golden"):
        floe.Engine([THREE_BY_THREE], {"step_reward": {"name": "golden"}})
    with pytest.raises(floe.ConfigError, match="gamma"):
        floe.Engine([THREE_BY_THREE], {"step_reward": {"name": "shaped", "params": {"gamma": 2}}})
    with pytest.raises(floe.PluginFailed, match="libnothing"):
        floe.Engine([THREE_BY_THREE], {"step_reward": {"name": "x", "library": "/nonexistent/libnothing.so"}})


def test_active_marks_the_agent_slots_in_play_and_final_info_is_a_copy():
    """info["active"]: per environment, the agent slots of the level it plays now (padding slots
    of a smaller level false), with reset and with every step; final_info survives the next step."""
    levels = floe.generate(2, 5, count=4, seed=3) + floe.generate(3, 5, count=4, seed=3)
    vec = floe.VectorEnv(levels, 16, episode_limit=6)
    agents = np.array([lv.num_agents for lv in levels])

    def expected():
        k = np.arange(3)[None, :]
        return k < agents[vec.current_instances()][:, None]

    _, info = vec.reset(seed=1)
    assert info["active"].shape == (16, 3) and (info["active"] == expected()).all()
    assert {2, 3} == set(info["active"].sum(axis=1))
    kept = None
    rng = np.random.default_rng(0)
    for _ in range(12):
        _, _, term, trunc, info = vec.step(rng.integers(0, 5, (16, 3)))
        assert (info["active"] == expected()).all()
        if kept is None and (term | trunc).any():
            kept = (info["final_info"], {k: v.copy() for k, v in info["final_info"].items()})
    assert kept is not None, "an episode ended within 12 steps of a limit of 6"
    for name, values in kept[1].items():
        assert (kept[0][name] == values).all(), name
