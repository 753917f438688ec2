"""PPO on floe's Gymnasium VectorEnv with the engine's default rewards, CleanRL style.

One file, no framework: the PPO of CleanRL's ``ppo.py`` (clipped objective, GAE(λ), a value
head, an entropy bonus, advantage normalisation, gradient clipping, a learning rate annealed to
zero; CleanRL's defaults unless said) with one categorical head per agent, as CleanRL's
``ppo_multidiscrete.py`` does for a ``MultiDiscrete`` action space. The environment is
``floe.VectorEnv`` exactly as a user opens it: strict mode (the paper's rules), the default
reward weights (no ``rewards=``), the team reward (the sum of the agents' rewards). The one
choice made for the task is the observation radius: 4, so that a 9×9 window around each agent
covers a whole 5×5 board and its goal is always in sight (at radius 2 it often is not, and an
observation-only policy cannot know where to go).

Boards: ``--agents`` (2) agents on ``--size`` (5) square boards, hole ratio ``--holes`` (0.2),
wait ratio ``--wait-ratio`` (0.5 with 2 agents; one agent needs 0: it never has to wait),
``--train-pool`` instances to train on and ``--eval-pool`` held-out ones (other seeds).
After ``--steps`` environment steps (or ``--max-seconds``), the greedy policy (argmax) and
uniform random actions each play ``--episodes`` held-out episodes; one JSON line reports the
success rates, the budget and the wall time.

    python python/examples/ppo_vector_env.py --steps 500000
    python python/examples/ppo_vector_env.py --agents 1 --wait-ratio 0 --steps 100000

Needs torch (CPU is enough) and floe; ``OMP_NUM_THREADS``/``--threads`` set torch's threads.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from torch import nn

import floe


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=2)
    p.add_argument("--size", type=int, default=5)
    p.add_argument("--holes", type=float, default=0.2)
    p.add_argument("--wait-ratio", type=float, default=None, help="default 0.5, or 0 for one agent")
    p.add_argument("--train-pool", type=int, default=2000)
    p.add_argument("--eval-pool", type=int, default=500)
    p.add_argument("--radius", type=int, default=4)
    p.add_argument("--episode-limit", type=int, default=32)
    p.add_argument("--steps", type=int, default=500_000, help="environment steps of training")
    p.add_argument("--max-seconds", type=float, default=float("inf"), help="stop training after this")
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--rollout", type=int, default=64, help="steps per environment per update")
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--episodes", type=int, default=2000, help="held-out episodes per evaluation")
    p.add_argument("--eval-envs", type=int, default=500)
    p.add_argument("--rewards", type=json.loads, default=None,
                   help='reward weights as JSON, e.g. \'{"reach_goal": 0}\' (default: the engine\'s own)')
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.wait_ratio is None:
        args.wait_ratio = 0.0 if args.agents == 1 else 0.5
    return args


def layer(i: int, o: int, std: float = 2**0.5) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """CleanRL's actor-critic MLP: the flattened observation of every agent slot in, one
    5-way categorical per agent and a value out."""

    def __init__(self, obs_size: int, agents: int, hidden: int):
        super().__init__()
        self.agents = agents
        self.critic = nn.Sequential(layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                    layer(hidden, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, 5 * agents, 0.01))

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.actor(x).view(-1, self.agents, 5)

    def act(self, x: torch.Tensor, action: torch.Tensor | None = None):
        dist = torch.distributions.Categorical(logits=self.logits(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), self.value(x)


def features(obs: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(obs.reshape(obs.shape[0], -1).astype(np.float32))


def evaluate(policy, insts, args) -> float:
    """Success rate over the first ``args.episodes`` held-out episodes (each environment plays
    ``episodes / eval_envs`` of them); ``policy`` maps observations to actions."""
    n = min(args.eval_envs, args.episodes)
    per_env = max(1, args.episodes // n)
    vec = floe.VectorEnv(insts, n, episode_limit=args.episode_limit, obs_radius=args.radius)
    obs, _ = vec.reset(seed=10_000 + args.seed)
    done_count = np.zeros(n, np.int64)
    successes = 0
    while (done_count < per_env).any():
        obs, _, term, trunc, info = vec.step(policy(obs))
        ended = (term | trunc) & (done_count < per_env)
        successes += int(np.sum(ended & (info["final_info"]["outcome"] == 1)))
        done_count += term | trunc
    return successes / (n * per_env)


def main(argv=None) -> dict:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    gen = dict(hole_ratio=args.holes, wait_ratio=args.wait_ratio)
    train = floe.generate(args.agents, args.size, count=args.train_pool, seed=args.seed, **gen)
    held_out = floe.generate(args.agents, args.size, count=args.eval_pool, seed=args.seed + 1_000_003, **gen)
    gen_s = time.perf_counter() - t0

    vec = floe.VectorEnv(train, args.envs, episode_limit=args.episode_limit, obs_radius=args.radius,
                         rewards=args.rewards)
    k = vec.single_action_space.shape[0]
    obs_size = int(np.prod(vec.single_observation_space.shape))
    agent = Agent(obs_size, k, args.hidden)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)

    T, B = args.rollout, args.envs
    batch = T * B
    updates = max(1, args.steps // batch)
    obs_buf = torch.zeros(T, B, obs_size)
    act_buf = torch.zeros(T, B, k, dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(T, B) for _ in range(4))
    # The value of an episode's last observation, where it was truncated (bootstrapped).
    trunc_val = torch.zeros(T, B)

    obs, _ = vec.reset(seed=args.seed)
    next_obs = features(obs)
    train_t0 = time.perf_counter()
    steps = 0
    successes = episodes = 0
    for update in range(updates):
        if time.perf_counter() - train_t0 > args.max_seconds:
            break
        for g in opt.param_groups:
            g["lr"] = args.lr * (1.0 - update / updates)
        for t in range(T):
            obs_buf[t] = next_obs
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs)
            obs, rew, term, trunc, info = vec.step(action.numpy().astype(np.uint8))
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            rew_buf[t] = torch.from_numpy(rew.astype(np.float32))
            done_buf[t] = torch.from_numpy((term | trunc).astype(np.float32))
            trunc_val[t] = 0.0
            if trunc.any():
                with torch.no_grad():
                    last = agent.value(features(info["final_obs"][trunc]))
                trunc_val[t, torch.from_numpy(trunc)] = last
            ended = term | trunc
            episodes += int(ended.sum())
            successes += int(np.sum(ended & (info["final_info"]["outcome"] == 1)))
            next_obs = features(obs)
        steps += batch
        with torch.no_grad():
            next_value = agent.value(next_obs)
            adv = torch.zeros(T, B)
            last_gae = torch.zeros(B)
            for t in reversed(range(T)):
                nv = next_value if t == T - 1 else val_buf[t + 1]
                # The next state's value counts unless the episode ended; a truncated one
                # bootstraps from its own last observation.
                target_next = (1.0 - done_buf[t]) * nv + trunc_val[t]
                delta = rew_buf[t] + args.gamma * target_next - val_buf[t]
                last_gae = delta + args.gamma * args.gae_lambda * (1.0 - done_buf[t]) * last_gae
                adv[t] = last_gae
            ret = adv + val_buf
        b_obs, b_act = obs_buf.reshape(batch, -1), act_buf.reshape(batch, k)
        b_logp, b_adv, b_ret = logp_buf.reshape(-1), adv.reshape(-1), ret.reshape(-1)
        mb = batch // args.minibatches
        for _ in range(args.epochs):
            order = torch.from_numpy(rng.permutation(batch))
            for s in range(0, batch, mb):
                i = order[s:s + mb]
                _, logp, ent, v = agent.act(b_obs[i], b_act[i])
                ratio = (logp - b_logp[i]).exp()
                a = b_adv[i]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                loss = pg - args.ent_coef * ent.mean() + args.vf_coef * 0.5 * ((v - b_ret[i]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                opt.step()
    train_s = time.perf_counter() - train_t0

    def greedy(o):
        with torch.no_grad():
            return agent.logits(features(o)).argmax(-1).numpy().astype(np.uint8)

    def uniform(o):
        return rng.integers(0, 5, (o.shape[0], k), dtype=np.uint8)

    report = {
        "agents": args.agents,
        "size": args.size,
        "hole_ratio": args.holes,
        "wait_ratio": args.wait_ratio,
        "obs_radius": args.radius,
        "episode_limit": args.episode_limit,
        "rewards": json.loads(vec.engine.config_json)["rewards"],
        "train_steps": steps,
        "train_seconds": round(train_s, 1),
        "generate_seconds": round(gen_s, 1),
        "train_success": round(successes / max(episodes, 1), 4),
        "held_out_episodes": min(args.eval_envs, args.episodes) * max(1, args.episodes // min(args.eval_envs,
                                                                                             args.episodes)),
        "greedy_success": evaluate(greedy, held_out, args),
        "random_success": evaluate(uniform, held_out, args),
        "seed": args.seed,
        "threads": args.threads,
    }
    print(json.dumps(report), flush=True)
    return report


if __name__ == "__main__":
    main()
