"""Gymnasium environments over floe's batched engine.

:class:`VectorEnv` is a ``gymnasium.vector.VectorEnv`` of ``num_envs`` MAPF-FrozenLake
environments stepped together in Rust. Its arrays are the engine's own output buffers: the
engine writes observations, rewards and flags straight into them, so a step copies nothing, and
each step overwrites what the previous one returned (copy what you keep). Episodes end with the
**same-step** auto-reset (``metadata["autoreset_mode"]``): where ``terminated | truncated``, the
returned observation is the next episode's first and ``info["final_obs"]`` (masked by
``info["_final_obs"]``) holds the observation that ended the episode.

Each environment's observation is ``(K, 3, 2r+1, 2r+1)`` uint8 (K agent slots; channels holes and
off-grid cells, other agents, the agent's own goal); its action is ``K`` codes (0 wait, 1 up,
2 down, 3 left, 4 right); its reward is the sum of its agents' rewards (each agent's is in
``info["agent_rewards"]``). With ``single_agent=True`` (every instance has one agent) the
observation is ``(3, 2r+1, 2r+1)`` and the action one code, ``Discrete(5)``, as DQN and other
single-agent algorithms expect. Instances of one agent are drawn with ``wait_ratio=0``
(``floe.generate(1, 5, wait_ratio=0.0)``): one agent never needs to wait.

Rewards (per agent and step; the engine's defaults, changed with ``rewards={...}``, any subset):

================  ========  ========================================================================
weight            default   paid when
================  ========  ========================================================================
``reach_goal``    +1.0      the agent arrives on its goal **for the first time in the episode** (event
                            ``REACHED``; stepping off the goal and back earns nothing more)
``step``          -0.0625   every step the agent ends away from its goal (while it is in the episode)
``blocked``       -0.125    soft mode: its move was blocked by another agent
``off_grid``      -1.0      its move would leave the grid (strict: the episode fails; soft: a wait)
``hole``          -1.0      its move leads into a hole (strict: the episode fails; soft: it drops out,
                            or with ``holes="block"`` stays)
``conflict``      -1.0      strict mode: it takes part in a vertex or swap conflict (the episode fails)
================  ========  ========================================================================

An agent's reward is the sum of the weights of its events. Per-agent event bits are in
``info["events"]`` (``int32``: 1 moved, 2 blocked, 4 off grid, 8 hole, 16 conflict, 32 reached,
64 at goal, 128 inactive). When an episode ends, ``info["final_info"]["failure_kind"]`` is 0
unless it failed, else ``floe.FAILURE_KINDS.index(name) + 1``: 4 ``out_of_bounds``, 5 ``hole``,
6 ``vertex_conflict``, 7 ``edge_conflict`` (the engine's failures; 1–3 and 8 are the verifier's
others); ``outcome`` is an index into :data:`OUTCOMES` (0 running, 1 success, 2 failure,
3 truncated); ``episode_return`` (float32) is the episode's return, every agent's rewards
summed; ``slot`` the pool slot it played, ``generation`` that slot's refills when it played it,
``agents_on_goal`` the agents on their goals at its end (the engine's ``info`` row,
:data:`floe.INFO_FIELDS`). A ``step_reward`` plugin replaces the table: ``shaped`` (parameters
``progress`` 0.1, ``gamma`` 1, ``step_cost`` 0.01, ``collision`` 0.5, ``hole`` 1,
``out_of_bounds`` 0.5, ``goal`` 1, the goal paid once per episode as above), see
docs/plugins.md.

Level sampling: ``levels=floe.Levels("plr", ...)`` lets a sampler steer which levels of the
pool the environments play (PLR, learnability, domain randomisation, the environment engineer
between phases, or a Rust or C plugin's). ``instances`` may then be a count: that many levels
drawn from the sampler's space. The engine gets room for every level of the space; each reset
calls the sampler's ``start`` and each step its ``after_step``, so an episode that a refill cuts
short ends in that step: ``truncated``, with its ``final_obs`` and ``final_info``, as Gymnasium
expects. ``env.levels`` is the sampler (``update(episodes, scores)`` for a host's own scores).
Any object with ``room``, ``draw(count)``, ``attach(engine)``, ``start()`` and ``after_step()``
serves: :class:`floe.ray.LevelShard` is one, for shards of one pool.

:class:`Env` is the single-environment ``gymnasium.Env`` over the same engine.
"""

from __future__ import annotations

import warnings

from typing import Any, Optional, Sequence, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ._floe import Engine, Instance, Levels
from .records import info_columns

OUTCOMES = ("running", "success", "failure", "truncated")


def _config(num_envs: int, mode: str, holes: Optional[str], episode_limit: int, obs_radius: int,
            rewards: Optional[dict], backend: str, step_reward: Optional[dict] = None) -> dict:
    cfg: dict[str, Any] = {
        "backend": backend,
        "num_envs": num_envs,
        "mode": mode,
        "episode_limit": episode_limit,
        "obs_radius": obs_radius,
    }
    if holes is not None:
        cfg["holes"] = holes
    if rewards is not None:
        cfg["rewards"] = rewards
    if step_reward is not None:
        cfg["step_reward"] = step_reward
    return cfg


def _spaces(engine: Engine, single_agent: bool):
    k, w = engine.max_agents, 2 * engine.obs_radius + 1
    if single_agent:
        return spaces.Box(0, 1, (3, w, w), np.uint8), spaces.Discrete(5)
    obs = spaces.Box(0, 1, (k, 3, w, w), np.uint8)
    act = spaces.MultiDiscrete(np.full(k, 5), dtype=np.uint8)
    return obs, act


def _check_single_agent(instances: Sequence[Instance], single_agent: bool, levels=None) -> None:
    if single_agent:
        if levels is not None and levels.room[0] != 1:
            raise ValueError(f"single_agent=True needs a level space of one agent, and the sampler's has room "
                             f"for {levels.room[0]} (space={{'agents': [1, 1], 'wait_ratio': [0, 0]}})")
        many = sorted({i.num_agents for i in instances} - {1})
        if many:
            raise ValueError(f"single_agent=True needs instances of one agent, and some have {many[0]} "
                             "(draw them with floe.generate(1, size, wait_ratio=0.0))")


def _pool(instances, levels) -> tuple:
    """The pool's instances and room: ``instances`` a count draws that many from ``levels``'
    space; with ``levels``, the room is its space's. A sampler holding a loaded state
    (``load_state_dict``) draws nothing: its saved pool is the engine's (``_engine``), and
    ``instances`` must be its slot count."""
    loaded = getattr(levels, "loaded_slots", None)
    if loaded is not None:
        if isinstance(instances, bool) or not isinstance(instances, (int, np.integer)) or int(instances) != loaded:
            raise ValueError(f"the level sampler holds a loaded state of {loaded} slots: the engine is made with its "
                             f"saved pool, so pass instances={loaded}")
        return [], tuple(levels.room)
    if isinstance(instances, (int, np.integer)) and not isinstance(instances, bool):
        if levels is None:
            raise ValueError(f"instances={instances} is a count: give levels= (a floe.Levels) to draw "
                             "them from, or the instances themselves")
        return list(_draw(levels, int(instances))), tuple(levels.room)
    return list(instances), (tuple(levels.room) if levels is not None else None)


def _step(engine: Engine, levels, actions) -> None:
    """The engine's step, then the level sampler's ``after_step``: one call into Rust for a
    :class:`floe.Levels`, two for another ``levels=`` object."""
    if isinstance(levels, Levels):
        levels.step_engine(actions)
        return
    engine.step(actions)
    if levels is not None:
        levels.after_step()


def _draw(levels, count: int):
    """``count`` new levels of a ``levels=`` object: its ``draw(count)``, or ``levels(count)``, the
    protocol's earlier name (with a ``DeprecationWarning``)."""
    if hasattr(levels, "draw"):
        return levels.draw(count)
    warnings.warn("a levels= object's levels(count) is now draw(count)", DeprecationWarning, stacklevel=3)
    return levels.levels(count)


def _engine(instances, config, room, levels) -> Engine:
    """The engine over ``instances`` (``_pool``'s), or over the saved pool of the state a sampler
    holds loaded."""
    if getattr(levels, "loaded_slots", None) is not None:
        return levels.restored_engine(config)
    return Engine(instances, config, room=room)


def _episode_info(row: np.ndarray) -> dict:
    """An ended episode's ``info`` row as the keys of a single environment's info."""
    c = info_columns(row)
    return {
        "episode_steps": int(c["episode_steps"]),
        "outcome": OUTCOMES[int(c["outcome"])],
        "failure_kind": int(c["failure_kind"]),
        "failure_agent": int(c["failure_agent"]),
        "episode_return": float(c["episode_return"]),
        "slot": int(c["slot"]),
        "generation": int(c["generation"]),
        "agents_on_goal": int(c["agents_on_goal"]),
    }


def _next_slot(engine: Engine, rng: np.random.Generator) -> int:
    """A pool slot drawn by the engine's sampling weights (every slot alike without them)."""
    w = engine.weights
    if w is None:
        return int(rng.integers(0, engine.num_instances))
    return int(rng.choice(len(w), p=w / w.sum()))


def _obs_view(flat: np.ndarray, radius: int) -> np.ndarray:
    """The ``(B, K, 3, w, w)`` view of an engine's ``(B, K, obs_stride)`` buffer (no copy)."""
    b, k, _ = flat.shape
    w = 2 * radius + 1
    view = flat[..., : 3 * w * w].reshape(b, k, 3, w, w)
    assert np.shares_memory(view, flat)
    return view


class VectorEnv(gym.vector.VectorEnv):
    """``num_envs`` environments playing ``instances`` (a list of :class:`floe.Instance`), on
    ``backend`` "cpu" or "gpu" (wgpu; bit-identical results). ``mode`` "strict" (the paper's
    rules: a failure ends the episode) or "soft"; ``holes`` (soft mode) "drop" or "block";
    ``episode_limit`` steps before truncation; ``obs_radius`` r of the local window; ``rewards``
    the engine's reward weights (``reach_goal``, ``step``, ``blocked``, ``off_grid``, ``hole``,
    ``conflict``); ``step_reward`` a reward plugin that scores every step in their place
    (``{"name": "shaped", "params": {...}, "library": "path/to/lib.so"}``, ``params`` and
    ``library`` optional; see the plugins guide). ``single_agent`` (instances of one agent only):
    observations ``(num_envs, 3, 2r+1, 2r+1)`` and actions ``(num_envs,)`` of ``Discrete(5)``.
    Environment ``e`` reset with ``seed`` plays as a single :class:`Env` reset with ``seed + e``
    does. The reward table, event bits and failure codes are in the module docs. ``levels``: a
    :class:`floe.Levels` that steers which levels are played and refills the pool
    (``instances`` may then be a count of levels drawn from its space; module docs), attached to
    this environment's engine; ``env.levels``.

    ``reset`` and ``step`` return infos with the same keys (``agent_rewards``, ``events``,
    ``active``, ``final_obs``, ``_final_obs``, ``final_info``, ``_final_info``; after a reset
    nothing has ended, so the masks are all false); :meth:`current_instances` says which pool
    instance each environment plays. ``active`` is a new ``(num_envs, K)`` bool array (``(num_envs,)``
    with ``single_agent``): the agent slots in play in the episode each returned observation
    belongs to (padding slots of smaller levels, and agents a soft-mode hole removed, are false).
    ``final_info`` holds copies, safe to keep; ``agent_rewards``, ``events`` and ``final_obs`` are
    the engine's arrays, which the next step overwrites: copy what you keep."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    #: Gymnasium's same-step auto-reset, also as the attribute that wrappers (TorchRL's) read.
    autoreset_mode = AutoresetMode.SAME_STEP

    def __init__(self, instances: Union[Sequence[Instance], int], num_envs: int = 16, *, mode: str = "strict",
                 holes: Optional[str] = None, episode_limit: int = 64, obs_radius: int = 2,
                 rewards: Optional[dict] = None, backend: str = "cpu", step_reward: Optional[dict] = None,
                 single_agent: bool = False, levels=None):
        instances, room = _pool(instances, levels)
        _check_single_agent(instances, single_agent, levels)
        self.engine = _engine(instances, _config(num_envs, mode, holes, episode_limit, obs_radius, rewards, backend,
                                                 step_reward), room, levels)
        #: The level sampler (None without one).
        self.levels = levels
        if levels is not None:
            levels.attach(self.engine)
        self.num_envs = num_envs
        self.single_agent = single_agent
        self.single_observation_space, self.single_action_space = _spaces(self.engine, single_agent)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self._obs = _obs_view(self.engine.obs, self.engine.obs_radius)
        self._final_obs = _obs_view(self.engine.final_obs, self.engine.obs_radius)
        if single_agent:
            self._obs, self._final_obs = self._obs[:, 0], self._final_obs[:, 0]
        # Event bits fit in 8 bits: the engine's uint32 buffer viewed as int32 (no copy), which
        # torch indexes and writes (it has no general uint32 support).
        self._events = self.engine.events.view(np.int32)
        self._agent_rewards = self.engine.rewards
        self._terminated = self.engine.terminated.view(np.bool_)
        self._truncated = self.engine.truncated.view(np.bool_)
        self._final_info = info_columns(self.engine.info)
        self._rewards = np.zeros(num_envs, np.float64)
        self._seed_rng = np.random.default_rng()
        self._was_reset = False
        self._goals = _obs_view(self.engine.obs, self.engine.obs_radius)[:, :, 2]

    def _active(self) -> np.ndarray:
        """The agent slots in play: every agent in play sees its goal, in its window or on the
        window's border; padding slots and agents out of play see none."""
        b, k = self._goals.shape[:2]
        active = self._goals.reshape(b, k, -1).any(axis=-1)
        return active[:, 0] if self.single_agent else active

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Starts every environment. ``seed``: environment ``e`` uses ``seed + e`` (None: a fresh
        seed). ``options={"instances": [i_0, …]}`` puts environment ``e`` on pool instance
        ``i_e`` instead (after seeding). Then the level sampler's ``start``: its first weights,
        and the refills it asks for (an environment on a refilled slot starts on its new level);
        the sampler keeps what it learned over resets."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self._seed_rng.integers(0, 2**63))
        elif seed < 0:
            raise ValueError(f"seed must be non-negative, not {seed}")
        self.engine.reset(seed)
        options = options or {}
        unknown = set(options) - {"instances"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}: only 'instances'")
        if "instances" in options:
            chosen = list(options["instances"])
            if len(chosen) != self.num_envs:
                raise ValueError(f"options['instances'] has {len(chosen)} entries for {self.num_envs} environments")
            for e, i in enumerate(chosen):
                self.engine.reset_to(e, int(i))
        if self.levels is not None:
            self.levels.start()
        self._was_reset = True
        # Nothing has ended: the step's keys, zeroed (the engine's buffers keep the last step's).
        done = np.zeros(self.num_envs, np.bool_)
        info = {
            "agent_rewards": np.zeros_like(self._agent_rewards),
            "events": np.zeros_like(self._events),
            "active": self._active(),
            "final_obs": np.zeros_like(self._final_obs),
            "_final_obs": done,
            "final_info": {k: np.zeros_like(v) for k, v in self._final_info.items()},
            "_final_info": done,
        }
        return self._obs, info

    def step(self, actions):
        """One step of every environment; ``actions`` has shape ``(num_envs, K)`` (``(num_envs,)``
        with ``single_agent``), codes 0..4. Then the level sampler's ``after_step``: the episodes
        its refills cut short end in this step (``truncated``, ``final_obs``, ``final_info``)."""
        a = np.ascontiguousarray(actions, dtype=np.uint8)
        if self.single_agent:
            a = a.reshape(self.num_envs, 1)
        _step(self.engine, self.levels, a)
        np.sum(self._agent_rewards, axis=1, dtype=np.float64, out=self._rewards)
        done = self._terminated | self._truncated
        info = {
            "agent_rewards": self._agent_rewards,
            "events": self._events,
            "active": self._active(),
            "final_obs": self._final_obs,
            "_final_obs": done,
            "final_info": {k: v.copy() for k, v in self._final_info.items()},
            "_final_info": done,
        }
        return self._obs, self._rewards, self._terminated, self._truncated, info

    def current_instances(self) -> np.ndarray:
        """``(num_envs,)`` int64: the pool slot each environment plays now (a new array;
        ``self.engine.level(slot)`` is the level there now)."""
        return np.asarray(self.engine.current_instances(), np.int64)

    def global_state(self) -> np.ndarray:
        """``(num_envs, 3, S, S)`` uint8: holes and off-grid cells, agents, goals (a new array)."""
        return self.engine.global_state()


class Env(gym.Env):
    """One MAPF-FrozenLake environment (the engine with one environment); arguments as for
    :class:`VectorEnv`, ``levels`` included. When an episode ends, the returned observation is
    the one that ended it; the next :meth:`reset` without a seed starts the next episode of the
    seeded sequence (a reset in the middle of an episode starts one on a slot drawn by the
    sampling weights). The info of the step that ends an episode has its ``info`` row's fields
    (``outcome`` by name: ``"success"``, ...)."""

    metadata = {"render_modes": []}

    def __init__(self, instances: Union[Sequence[Instance], int], *, mode: str = "strict",
                 holes: Optional[str] = None, episode_limit: int = 64, obs_radius: int = 2,
                 rewards: Optional[dict] = None, backend: str = "cpu", step_reward: Optional[dict] = None,
                 single_agent: bool = False, levels=None):
        instances, room = _pool(instances, levels)
        _check_single_agent(instances, single_agent, levels)
        self.engine = _engine(instances, _config(1, mode, holes, episode_limit, obs_radius, rewards, backend,
                                                 step_reward), room, levels)
        #: The level sampler (None without one).
        self.levels = levels
        if levels is not None:
            levels.attach(self.engine)
        self.single_agent = single_agent
        self.observation_space, self.action_space = _spaces(self.engine, single_agent)
        self._obs = _obs_view(self.engine.obs, self.engine.obs_radius)
        self._final_obs = _obs_view(self.engine.final_obs, self.engine.obs_radius)
        if single_agent:
            self._obs, self._final_obs = self._obs[:, 0], self._final_obs[:, 0]
        self._state = "new"  # "new", "running" or "ended"

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}")
        if seed is not None:
            if seed < 0:
                raise ValueError(f"seed must be non-negative, not {seed}")
            self.engine.reset(seed)
            if self.levels is not None:
                self.levels.start()
        elif self._state == "new":
            self.engine.reset(int(self.np_random.integers(0, 2**63)))
            if self.levels is not None:
                self.levels.start()
        elif self._state == "running":
            # A new episode on a slot drawn from the seeded generator, by the sampling weights.
            self.engine.reset_to(0, _next_slot(self.engine, self.np_random))
        # "ended": the engine already started the next episode in the step that ended this one.
        self._state = "running"
        return self._obs[0].copy(), {"instance": int(self.engine.current_instances()[0])}

    def step(self, action):
        if self._state != "running":
            raise RuntimeError("call reset before step (and after an episode ends)")
        _step(self.engine, self.levels, np.ascontiguousarray(action, dtype=np.uint8).reshape(1, -1))
        terminated = bool(self.engine.terminated[0])
        truncated = bool(self.engine.truncated[0])
        reward = float(np.sum(self.engine.rewards[0], dtype=np.float64))
        info: dict[str, Any] = {"agent_rewards": self.engine.rewards[0].copy(),
                                "events": self.engine.events[0].view(np.int32).copy()}
        if terminated or truncated:
            self._state = "ended"
            info.update(_episode_info(self.engine.info[0]))
            return self._final_obs[0].copy(), reward, terminated, truncated, info
        return self._obs[0].copy(), reward, terminated, truncated, info
