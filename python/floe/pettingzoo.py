"""A PettingZoo ``ParallelEnv``: one MAPF-FrozenLake environment, one PettingZoo agent per floe
agent (``agent_0`` … of the instance being played), over floe's engine."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv as _ParallelEnv

from ._floe import Instance
from .gym import _config, _engine, _episode_info, _next_slot, _obs_view, _pool, _step


class ParallelEnv(_ParallelEnv):
    """Arguments as for :class:`floe.VectorEnv` (without ``num_envs``), ``levels`` included: a
    level sampler then steers which levels are played and refills the pool (an episode a refill
    cuts short is truncated in that step). Every agent ends with the episode: all terminate
    together (success, or a failure in strict mode) or are truncated at ``episode_limit`` (or by a
    refill); each agent's reward is its own. The infos of the step that ends an episode have its
    ``info`` row's fields (``outcome`` by name)."""

    metadata = {"name": "floe_mapf_frozenlake_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, instances: Union[Sequence[Instance], int], *, mode: str = "strict",
                 holes: Optional[str] = None, episode_limit: int = 64, obs_radius: int = 2,
                 rewards: Optional[dict] = None, backend: str = "cpu", step_reward: Optional[dict] = None,
                 levels=None):
        instances, room = _pool(instances, levels)
        self.engine = _engine(instances, _config(1, mode, holes, episode_limit, obs_radius, rewards, backend,
                                                 step_reward), room, levels)
        #: The level sampler (None without one).
        self.levels = levels
        if levels is not None:
            levels.attach(self.engine)
        k, w = self.engine.max_agents, 2 * self.engine.obs_radius + 1
        self.possible_agents = [f"agent_{a}" for a in range(k)]
        self._obs_space = spaces.Box(0, 1, (3, w, w), np.uint8)
        self._act_space = spaces.Discrete(5)
        side = self.engine.global_state().shape[-1]
        self.state_space = spaces.Box(0, 255, (3, side, side), np.uint8)
        self._obs = _obs_view(self.engine.obs, self.engine.obs_radius)
        self._final_obs = _obs_view(self.engine.final_obs, self.engine.obs_radius)
        self._rng = np.random.default_rng()
        self._ended = None  # None: never reset; True: the last step ended the episode
        self.agents: list = []
        self.render_mode = None

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def _agents_now(self) -> list:
        # The level in the slot now: a refill may have changed its agents.
        return self.possible_agents[: self.engine.level(self.engine.current_instances()[0]).num_agents]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        # `options` are accepted and unused: PettingZoo's API passes arbitrary ones.
        if seed is not None:
            if seed < 0:
                raise ValueError(f"seed must be non-negative, not {seed}")
            self._rng = np.random.default_rng(seed)
            self.engine.reset(seed)
            if self.levels is not None:
                self.levels.start()
        elif self._ended is None:
            self.engine.reset(int(self._rng.integers(0, 2**63)))
            if self.levels is not None:
                self.levels.start()
        elif not self._ended:
            self.engine.reset_to(0, _next_slot(self.engine, self._rng))
        self._ended = False
        self.agents = self._agents_now()
        obs = {a: self._obs[0, i].copy() for i, a in enumerate(self.agents)}
        return obs, {a: {} for a in self.agents}

    def step(self, actions: dict):
        if not self.agents:
            raise RuntimeError("the episode has ended: call reset")
        codes = np.zeros(self.engine.max_agents, np.uint8)
        for i, a in enumerate(self.agents):
            if a in actions:
                codes[i] = actions[a]
        _step(self.engine, self.levels, codes.reshape(1, -1))
        terminated = bool(self.engine.terminated[0])
        truncated = bool(self.engine.truncated[0])
        source = self._final_obs if (terminated or truncated) else self._obs
        obs = {a: source[0, i].copy() for i, a in enumerate(self.agents)}
        rewards = {a: float(self.engine.rewards[0, i]) for i, a in enumerate(self.agents)}
        terms = {a: terminated for a in self.agents}
        truncs = {a: truncated for a in self.agents}
        infos = {a: {"events": int(self.engine.events[0, i])} for i, a in enumerate(self.agents)}
        if terminated or truncated:
            ended = _episode_info(self.engine.info[0])
            for a in self.agents:
                infos[a].update(ended)
            self._ended = True
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """The global state of the environment: ``(3, S, S)`` uint8."""
        return self.engine.global_state()[0]
