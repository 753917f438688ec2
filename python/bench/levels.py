"""What a level sampler costs ``floe.VectorEnv`` from Python, side by side in one run.

``floe.VectorEnv`` with ``--envs`` environments of ``--agents`` agents (random actions drawn
beforehand, soft collisions, episodes of ``--episode-limit`` steps) over a pool of ``--pool``
levels of the level space (``--size`` maps, hole ratio up to 0.2, ``solve`` false), stepped:

- ``none``: with no sampler (the engine's uniform draw over the pool);
- ``plr``: with ``floe.Levels("plr")`` called every ``--update-every`` steps (its proxy
  scores; refills of new levels);
- ``fixed``: with ``uniform`` over the fixed pool (called every ``--update-every`` steps, no
  refill);
- ``dr``: domain randomisation, ``uniform`` with ``max_plays`` 1: a new level in place of each
  level once its episode ends.

Each setting runs ``--steps`` steps ``--repeat`` times, the settings in turn (so that a change
of the machine's speed falls on all of them alike); the best run of each is kept. Prints one
JSON line per setting and the ratios the toolkit's targets name: ``plr`` and ``fixed`` over
``none`` (a sampler's cost), ``dr`` over ``fixed`` (a refill after every episode).

    .venv/python-test/bin/python python/bench/levels.py --repeat 5
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import floe

SETTINGS = {
    "none": None,
    "plr": ("plr", None),
    "fixed": ("uniform", None),
    "dr": ("uniform", {"max_plays": 1}),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--agents", type=int, default=3)
    p.add_argument("--size", default="8-12", help="map sides, LEAST-MOST")
    p.add_argument("--pool", type=int, default=4096)
    p.add_argument("--episode-limit", type=int, default=32)
    p.add_argument("--update-every", type=int, default=32)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--settings", default=",".join(SETTINGS))
    return p.parse_args(argv)


def make_env(a, setting):
    lo, _, hi = a.size.partition("-")
    space = {"agents": [a.agents, a.agents], "size": [int(lo), int(hi or lo)], "hole_ratio": [0.0, 0.2],
             "wait_ratio": [0.0, 1.0], "solve": False}
    maker = floe.Levels("uniform", space=space, seed=1)
    which = SETTINGS[setting]
    levels = None if which is None else floe.Levels(which[0], which[1], space=space, seed=1,
                                                          update_every=a.update_every)
    # Every setting starts from the same pool.
    env = floe.VectorEnv(maker.draw(a.pool), a.envs, mode="soft", episode_limit=a.episode_limit, obs_radius=2,
                         levels=levels)
    env.reset(seed=0)
    return env, levels


def run(a, setting, actions):
    env, levels = make_env(a, setting)
    start = time.perf_counter()
    for i in range(a.steps):
        env.step(actions[i % len(actions)])
    secs = time.perf_counter() - start
    out = {"setting": setting, "envs": a.envs, "agents": a.agents, "steps": a.steps, "seconds": secs,
           "env_steps_per_sec": a.steps * a.envs / secs}
    if levels is not None:
        out["refilled"] = int(levels.totals["refilled"])
    return out


def main(argv=None):
    a = parse_args(argv)
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 5, size=(a.envs, a.agents), dtype=np.uint8) for _ in range(16)]
    settings = a.settings.split(",")
    best = {}
    for _ in range(a.repeat):
        for s in settings:
            r = run(a, s, actions)
            if s not in best or r["env_steps_per_sec"] > best[s]["env_steps_per_sec"]:
                best[s] = r
    for s in settings:
        print(json.dumps(best[s]))
    rate = {s: best[s]["env_steps_per_sec"] for s in settings}
    ratios = {}
    for num, den in [("plr", "none"), ("fixed", "none"), ("dr", "fixed")]:
        if num in rate and den in rate:
            ratios[f"{num}/{den}"] = round(rate[num] / rate[den], 3)
    print(json.dumps({"ratios": ratios}))
    return best, ratios


if __name__ == "__main__":
    main()
