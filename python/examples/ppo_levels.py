"""PPO that learns MAPF-FrozenLake from scratch in Python: one network every agent shares, a level
sampler choosing the levels, and held-out success measured with ``floe.evaluate``.

The algorithm is the PPO of floe's libtorch trainer (``train/src/ppo``), written over
``floe.VectorEnv`` as a Python researcher would: independent PPO with shared parameters. Each
agent acts on its own window (three planes of ``(2r+1)²`` cells: holes and off-grid cells, other
agents, its goal, shown on the border when outside), through one actor-critic (two tanh layers, 5
action logits, a value); so the network does not depend on the board's size or the agent count.
Per agent: its own reward (``info["agent_rewards"]``: strict mode, the engine's default reward
weights), GAE(λ), and the clipped objective; agent slots not in play (padding, agents of smaller
levels: their goal plane is empty) are left out. A truncated episode's last reward gets the
discounted value of its final observation. The learning rate is annealed linearly to 2% of its
start and held there.

The levels come from a ``floe.Levels`` over ``--agents``/``--size``/``--holes``
(``--sampler``: ``plr``, robust PLR scored by this script, the default; ``uniform``, a fixed
pool; ``dr``, a new level after each episode; ``learnability``). The sampler is called once per
rollout with the script's score of each episode that ended in it, PLR's positive value loss (the
mean of max(Â, 0) over the episode's agent-steps), lined up by the library's ``(env, end step)``
key; under robust PLR, the agent-steps of a level's first play take no gradient.

After ``--steps`` environment steps, ``floe.evaluate`` plays ``--eval-levels`` held-out levels
(2 agents on 10×10 at hole ratio 0.2 unless ``--eval-*`` say otherwise; drawn as the libtorch
PPO's ``ppo`` example draws them, so both are measured on the same levels) ``--eval-plays`` times
each, with actions sampled from the policy and with uniform random actions; one JSON line
reports the success rates, the budget and the wall time.

    python python/examples/ppo_levels.py --steps 2000000 --threads 2

Needs torch (CPU is enough) and floe.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch import nn

import floe


def span(text: str, kind=int) -> list:
    """``"2"`` or ``"2-4"`` (``"0-0.2"``) as ``[least, most]``."""
    lo, _, hi = text.partition("-")
    return [kind(lo), kind(hi or lo)]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", default="2", help="agents per training level, N or LEAST-MOST")
    p.add_argument("--size", default="10", help="map side of training levels, N or LEAST-MOST")
    p.add_argument("--holes", default="0-0.2", help="hole ratio of training levels, X or LEAST-MOST")
    p.add_argument("--sampler", default="plr", choices=["plr", "uniform", "dr", "learnability"])
    p.add_argument("--pool", type=int, default=2048, help="levels in the pool")
    p.add_argument("--radius", type=int, default=3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--envs", type=int, default=256)
    p.add_argument("--rollout", type=int, default=32, help="steps per environment per update")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--episode-limit", type=int, default=96)
    p.add_argument("--steps", type=int, default=2_000_000, help="environment steps of training")
    p.add_argument("--max-seconds", type=float, default=float("inf"), help="stop training after this")
    p.add_argument("--eval-agents", type=int, default=2)
    p.add_argument("--eval-size", type=int, default=10)
    p.add_argument("--eval-holes", type=float, default=0.2)
    p.add_argument("--eval-levels", type=int, default=500)
    p.add_argument("--eval-plays", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    args.agents, args.size, args.holes = span(args.agents), span(args.size), span(args.holes, float)
    return args


def layer(i: int, o: int, gain: float = 2**0.5) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, gain)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class ActorCritic(nn.Module):
    """The actor-critic every agent shares: one agent's window in, 5 logits and a value out."""

    def __init__(self, inputs: int, hidden: int):
        super().__init__()
        self.body = nn.Sequential(layer(inputs, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh())
        self.pi = layer(hidden, 5, 0.01)
        self.v = layer(hidden, 1, 1.0)

    def forward(self, x: torch.Tensor):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)


class Windows:
    """An engine's observations as one row of ``3·(2r+1)²`` bytes per agent slot, and which rows
    are in play (their goal plane has its mark)."""

    def __init__(self, radius: int):
        self.plane = (2 * radius + 1) ** 2

    def rows(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat = obs.reshape(obs.shape[0] * obs.shape[1], -1)[:, : 3 * self.plane]
        return flat, np.flatnonzero(flat[:, 2 * self.plane:].any(1))


def sample(net: ActorCritic, x: np.ndarray):
    """Actions sampled from the policy for windows ``x`` (uint8 rows), their log-probabilities and
    values."""
    with torch.no_grad():
        logits, value = net(torch.from_numpy(x).float())
        action = torch.multinomial(logits.softmax(-1), 1).squeeze(-1)
        logp = logits.log_softmax(-1).gather(1, action[:, None]).squeeze(-1)
    return action, logp, value


def make_sampler(args) -> floe.Levels:
    space = {"agents": args.agents, "size": args.size, "hole_ratio": args.holes, "wait_ratio": [0, 1],
             "solve": False}
    name, params = {"plr": ("plr", None), "uniform": ("uniform", None), "dr": ("uniform", {"max_plays": 1}),
                    "learnability": ("learnability", None)}[args.sampler]
    return floe.Levels(name, params, space=space, seed=args.seed, update_every=0)


def main(argv=None) -> dict:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    levels = make_sampler(args)
    vec = floe.VectorEnv(args.pool, args.envs, episode_limit=args.episode_limit, obs_radius=args.radius,
                         levels=levels)
    B, K = args.envs, vec.engine.max_agents
    N, T = B * K, args.rollout
    win = Windows(args.radius)
    net = ActorCritic(3 * win.plane, args.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    obs, _ = vec.reset(seed=args.seed)

    t0 = time.perf_counter()
    steps = episodes = successes = updates = 0
    while steps < args.steps and time.perf_counter() - t0 < args.max_seconds:
        for g in opt.param_groups:
            g["lr"] = args.lr * max(1.0 - steps / args.steps, 0.02)
        # The rollout: T steps of every environment, one row per agent slot in play.
        values = torch.zeros(T + 1, N)
        rewards, dones, in_play = torch.zeros(T, N), torch.zeros(T, N), torch.zeros(T, N)
        rows, xs, acts, logps, learns = [], [], [], [], []
        ended_at, first = [], np.zeros(B, np.int64)
        for t in range(T):
            flat, idx = win.rows(obs)
            x = flat[idx].copy()
            action, logp, value = sample(net, x)
            a = np.zeros(N, np.uint8)
            a[idx] = action.numpy()
            ti = torch.from_numpy(idx)
            values[t, ti], in_play[t, ti] = value, 1.0
            key = levels.steps_recorded  # this step's index, as the sampler records it
            obs, _, term, trunc, info = vec.step(a.reshape(B, K))
            r = info["agent_rewards"].reshape(-1).astype(np.float32)
            ended = term | trunc
            cut = trunc & ~term
            if cut.any():
                # A truncated episode is cut, not over: its last reward gets the value of its end.
                fflat, fidx = win.rows(info["final_obs"])
                fidx = fidx[cut[fidx // K]]
                if fidx.size:
                    with torch.no_grad():
                        _, vf = net(torch.from_numpy(fflat[fidx].copy()).float())
                    r[fidx] += args.gamma * vf.numpy()
            rewards[t] = torch.from_numpy(r)
            dones[t] = torch.from_numpy(np.repeat(ended, K).astype(np.float32))
            for e in np.flatnonzero(ended):
                ended_at.append((e, first[e], t, key))
                first[e] = t + 1
            episodes += int(ended.sum())
            successes += int(np.sum(ended & (info["final_info"]["outcome"] == 1)))
            if levels.robust:
                learns.append(~levels.first_play[idx // K])
            rows.append(ti)
            xs.append(torch.from_numpy(x))
            acts.append(action)
            logps.append(logp)
        steps += B * T
        # GAE(λ) per agent row, from the values where the rollout stopped.
        flat, idx = win.rows(obs)
        with torch.no_grad():
            _, v_last = net(torch.from_numpy(flat[idx].copy()).float())
        values[T, torch.from_numpy(idx)] = v_last
        adv = torch.zeros(T, N)
        nxt = torch.zeros(N)
        for t in reversed(range(T)):
            live = 1.0 - dones[t]
            delta = rewards[t] + args.gamma * values[t + 1] * live - values[t]
            nxt = delta + args.gamma * args.gae_lambda * live * nxt
            adv[t] = nxt
        ret = adv + values[:T]
        # PLR's score of each episode that ended, in the order the sampler keeps them.
        positive = adv.clamp(min=0.0) * in_play
        by_key = {}
        for e, lo, hi, key in ended_at:
            part = slice(e * K, (e + 1) * K)
            count = float(in_play[lo:hi + 1, part].sum())
            by_key[(int(e), int(key))] = float(positive[lo:hi + 1, part].sum()) / max(count, 1.0)
        scores = np.array([by_key[k] for k in zip(levels.pending_env.tolist(), levels.pending_end_step.tolist())],
                          np.float32)
        # The batch: every row in play (under robust PLR, replays only).
        flat_rows = torch.cat([t * N + r_ for t, r_ in enumerate(rows)])
        b_x = torch.cat(xs)
        b_act, b_logp = torch.cat(acts), torch.cat(logps)
        b_adv, b_ret = adv.reshape(-1)[flat_rows], ret.reshape(-1)[flat_rows]
        if learns:
            keep = torch.from_numpy(np.concatenate(learns))
            b_x, b_act, b_logp, b_adv, b_ret = (v[keep] for v in (b_x, b_act, b_logp, b_adv, b_ret))
        n = b_x.shape[0]
        mb = max(n // args.minibatches, 1)
        for _ in range(args.epochs):
            order = torch.randperm(n)
            for s in range(0, n, mb):
                i = order[s:s + mb]
                logits, v = net(b_x[i].float())
                logp_all = logits.log_softmax(-1)
                logp = logp_all.gather(1, b_act[i][:, None]).squeeze(-1)
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                ratio = (logp - b_logp[i]).exp()
                a_mb = b_adv[i]
                if len(i) > 1:
                    a_mb = (a_mb - a_mb.mean()) / (a_mb.std() + 1e-8)
                pg = -torch.min(ratio * a_mb, ratio.clamp(1 - args.clip, 1 + args.clip) * a_mb).mean()
                loss = pg + args.vf_coef * 0.5 * ((v - b_ret[i]) ** 2).mean() - args.ent_coef * entropy
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                opt.step()
        # The sampler's call, with the scores; its refills are written into the last outputs.
        levels.update(scores=scores)
        updates += 1
    train_s = time.perf_counter() - t0

    held_space = {"agents": [args.eval_agents] * 2, "size": [args.eval_size] * 2,
                  "hole_ratio": [args.eval_holes] * 2, "wait_ratio": [0, 1], "solve": True}
    held = floe.Levels(space=held_space, seed=0xD00D1E).draw(args.eval_levels)
    config = {"num_envs": 1024, "mode": "strict", "episode_limit": args.episode_limit, "obs_radius": args.radius}
    rng = np.random.default_rng(args.seed)

    def policy(o):
        flat, idx = win.rows(o)
        a = np.zeros(flat.shape[0], np.uint8)
        a[idx] = sample(net, flat[idx].copy())[0].numpy()
        return a

    def uniform(o):
        return rng.integers(0, 5, o.shape[0] * o.shape[1], dtype=np.uint8)

    def success(p):
        return round(float(np.mean(floe.evaluate(p, held, args.eval_plays, config=config, seed=5)["success"])), 4)

    report = {
        "sampler": args.sampler,
        "agents": args.agents,
        "size": args.size,
        "hole_ratio": args.holes,
        "train_steps": steps,
        "train_seconds": round(train_s, 1),
        "steps_per_second": round(steps / max(train_s, 1e-9)),
        "updates": updates,
        "train_success": round(successes / max(episodes, 1), 4),
        "refilled": int(levels.totals["refilled"]),
        "held_out": {"agents": args.eval_agents, "size": args.eval_size, "hole_ratio": args.eval_holes,
                     "levels": args.eval_levels, "plays": args.eval_plays},
        "held_out_success": success(policy),
        "random_success": success(uniform),
        "seed": args.seed,
        "threads": args.threads,
    }
    print(json.dumps(report), flush=True)
    return report


if __name__ == "__main__":
    main()
