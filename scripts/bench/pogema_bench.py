"""POGEMA's agent-steps per second on floe's benchmark settings (random actions, soft collisions).

Prints one JSON line per setting, in the same shape as `floe bench`.
"""
import argparse
import json
import time

import numpy as np
from pogema import GridConfig, pogema_v0


def measure(size, density, agents, radius, limit, seconds, seed):
    cfg = GridConfig(size=size, density=density, num_agents=agents, obs_radius=radius,
                     collision_system="soft", on_target="nothing", max_episode_steps=limit, seed=seed)
    env = pogema_v0(grid_config=cfg)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(rng.integers(0, 5, size=agents).tolist())
        steps += 1
        if all(terminated) or all(truncated):
            env.reset()
    secs, cpu_secs = time.perf_counter() - start, time.process_time() - cpu
    return {"bench": "step", "backend": "pogema", "threads": 1, "mode": "soft", "size": size,
            "density": density, "agents": agents, "radius": radius, "envs": 1, "steps": steps,
            "seconds": secs, "cpu_seconds": cpu_secs, "agent_steps_per_sec": steps * agents / secs,
            "agent_steps_per_cpu_sec": steps * agents / cpu_secs}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="16,32")
    p.add_argument("--densities", default="0.2,0.3")
    p.add_argument("--agents", default="4,64")
    p.add_argument("--radius", type=int, default=2)
    p.add_argument("--episode-limit", type=int, default=64)
    p.add_argument("--seconds", type=float, default=3.0)
    a = p.parse_args()
    for size in map(int, a.sizes.split(",")):
        for density in map(float, a.densities.split(",")):
            for agents in map(int, a.agents.split(",")):
                print(json.dumps(measure(size, density, agents, a.radius, a.episode_limit, a.seconds, 1)), flush=True)


if __name__ == "__main__":
    main()
