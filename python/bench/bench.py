"""floe from Python against floe in Rust and against POGEMA, in one run.

(a) Stepping: ``floe.VectorEnv`` (random actions drawn beforehand, soft collisions with holes as
    walls, observation radius 2, episodes of 64 steps) against ``floe bench`` on the same
    setting (the Rust engine drawing its random actions itself), and POGEMA on the same grid
    (``scripts/bench/pogema_bench.py``; one environment, as POGEMA steps one at a time), in
    agent-steps per second.
(b) Rewards: ``floe.trl_reward`` on N completions (free-text answers, a quarter of them
    perturbed, instances as the dataset's JSON column) against, on the same answers,
    ``floe.verify_batch`` with ``floe.Instance`` objects; the C API's ``floe_verify_answers``
    (the same parse-verify-record path in Rust, called once with the answers already in C
    strings; ``--libfloe``, default ``target/release/libfloe.so``); and ``floe bench``'s batched
    verifier (plans already parsed into its batch; 3 agents on 8x8 maps, as here), in answers
    per second.

Prints one JSON line per measurement and a table of ratios. Runs in an environment with floe and
gymnasium installed (e.g. scripts/python.sh's .venv/python-test), with a ``floe`` binary
(``--floe``, default ``target/release/floe``) and, for the POGEMA line, a Python with pogema
(``--pogema-python``, default ``.venv/pogema/bin/python``; pogema pins its own gymnasium and
numpy). ``scripts/bench/python.sh`` sets all of it up and runs it.

    .venv/python-test/bin/python python/bench/bench.py --floe target/release/floe --seconds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

import numpy as np

import floe

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def timed(seconds, f):
    """Calls ``f`` for a tenth of ``seconds`` to warm up, then for ``seconds``: (calls, seconds)."""
    start = time.perf_counter()
    while time.perf_counter() - start < seconds / 10:
        f()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        f()
        n += 1
    return n, time.perf_counter() - start


def step_python(a):
    levels = floe.random_instances(a.agents, a.size, hole_ratio=a.density, count=64, seed=1)
    env = floe.VectorEnv(levels, num_envs=a.envs, mode="soft", holes="block", episode_limit=64, obs_radius=2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 5, size=(a.envs, a.agents), dtype=np.uint8) for _ in range(8)]
    it = [0]

    def one():
        env.step(actions[it[0] & 7])
        it[0] += 1

    steps, secs = timed(a.seconds, one)
    return {"bench": "step", "backend": "python-vectorenv", "size": a.size, "density": a.density,
            "agents": a.agents, "envs": a.envs, "steps": steps, "seconds": secs,
            "agent_steps_per_sec": steps * a.envs * a.agents / secs}


def run_floe(a, *args):
    out = subprocess.run([a.floe, "bench", "--seconds", str(a.seconds), *args], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def step_rust(a):
    (line,) = run_floe(a, "--plans", "0", "--sizes", str(a.size), "--densities", str(a.density),
                       "--agents", str(a.agents), "--envs", str(a.envs), "--holes", "block",
                       "--radius", "2", "--episode-limit", "64")
    line["backend"] = "rust-cpu"
    return line


def step_pogema(a):
    script = os.path.join(ROOT, "scripts", "bench", "pogema_bench.py")
    out = subprocess.run([a.pogema_python, script, "--seconds", str(a.seconds), "--sizes", str(a.size),
                          "--densities", str(a.density), "--agents", str(a.agents)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def answer_text(moves):
    letters = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    return "\n".join(f"Agent {i}: " + " ".join(letters[c] for c in m) for i, m in enumerate(moves))


def c_api_answers(a, insts, texts):
    """``floe_verify_answers`` through ctypes: one call for all answers, inputs prepared outside
    the timing."""
    import ctypes

    lib = ctypes.CDLL(a.libfloe)
    pool = ctypes.c_void_p()
    text = "\n".join(i.to_json() for i in insts).encode()
    status = lib.floe_pool_from_json(ctypes.c_char_p(text), ctypes.c_int32(0), ctypes.byref(pool))
    if status != 0:
        raise RuntimeError(f"floe_pool_from_json: status {status}")
    n = len(texts)
    index = (ctypes.c_uint32 * n)(*[i % len(insts) for i in range(n)])
    answers = (ctypes.c_char_p * n)(*[t.encode() for t in texts])
    out = ctypes.create_string_buffer(28 * n)  # floe_verdict_record: 28 bytes

    def one():
        status = lib.floe_verify_answers(pool, index, answers, ctypes.c_size_t(n), out, ctypes.c_size_t(n))
        if status != 0:
            raise RuntimeError(f"floe_verify_answers: status {status}")

    calls, secs = timed(a.seconds, one)
    lib.floe_pool_free(pool)
    return {"bench": "reward", "backend": "rust-c-api-verify_answers", "answers": n, "seconds": secs,
            "answers_per_sec": calls * n / secs}


def rewards(a):
    insts = floe.generate(3, 8, count=64, seed=1)
    # Solve each instance once; every fourth answer has one agent's moves reversed.
    base = [floe.solve(inst)["moves"] for inst in insts]
    texts = []
    for n in range(a.completions):
        moves = list(base[n % 64])
        if n % 4 == 3:
            moves[n % 3] = moves[n % 3][::-1]
        texts.append(answer_text(moves))
    column = [insts[n % 64].to_json() for n in range(a.completions)]
    objects = [insts[n % 64] for n in range(a.completions)]
    prompts = [""] * a.completions
    reward = floe.trl_reward("tiered")
    calls, secs = timed(a.seconds, lambda: reward(prompts, texts, instance=column))
    out = [{"bench": "reward", "backend": "python-trl_reward", "answers": a.completions, "seconds": secs,
            "answers_per_sec": calls * a.completions / secs}]
    calls, secs = timed(a.seconds, lambda: floe.verify_batch(objects, texts))
    out.append({"bench": "reward", "backend": "python-verify_batch", "answers": a.completions, "seconds": secs,
                "answers_per_sec": calls * a.completions / secs})
    if os.path.exists(a.libfloe):
        out.append(c_api_answers(a, insts, texts))
    for line in run_floe(a, "--plans", str(a.completions), "--sizes", "8", "--agents", "3", "--envs", "1",
                         "--densities", "0.1", "--pool", "64"):
        if line["bench"] == "verify":
            out.append({"bench": "reward", "backend": "rust-verify_batch_cpu", "answers": line["plans"],
                        "seconds": line["seconds"], "answers_per_sec": line["plans_per_sec"]})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--floe", default=os.path.join(ROOT, "target", "release", "floe"))
    p.add_argument("--libfloe", default=os.path.join(ROOT, "target", "release", "libfloe.so"))
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--agents", type=int, default=64)
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--density", type=float, default=0.2)
    p.add_argument("--completions", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3, help="stepping runs of Rust and Python, alternated")
    p.add_argument("--pogema-python", default=os.path.join(ROOT, ".venv", "pogema", "bin", "python"),
                   help="a Python with pogema (it pins gymnasium and numpy versions of its own, so it "
                   "lives in a virtual environment apart; scripts/bench/pogema.sh makes one)")
    p.add_argument("--no-pogema", action="store_true")
    a = p.parse_args()
    # Rust and Python alternate, `--repeat` times each; the best of each is kept (on a shared
    # machine the best run is the one least disturbed).
    runs = []
    for _ in range(a.repeat):
        runs += [step_rust(a), step_python(a)]
    lines = [max((r for r in runs if r["backend"] == b), key=lambda r: r["agent_steps_per_sec"])
             for b in ("rust-cpu", "python-vectorenv")]
    for b in ("rust-cpu", "python-vectorenv"):
        lines[[l["backend"] for l in lines].index(b)]["runs"] = [
            round(r["agent_steps_per_sec"]) for r in runs if r["backend"] == b]
    if not a.no_pogema:
        lines.append(step_pogema(a))
    reward_runs = [line for _ in range(a.repeat) for line in rewards(a)]
    for b in dict.fromkeys(r["backend"] for r in reward_runs):
        best = max((r for r in reward_runs if r["backend"] == b), key=lambda r: r["answers_per_sec"])
        best["runs"] = [round(r["answers_per_sec"]) for r in reward_runs if r["backend"] == b]
        lines.append(best)
    for line in lines:
        print(json.dumps(line), flush=True)
    by = {line["backend"]: line for line in lines}
    rust = by["rust-cpu"]["agent_steps_per_sec"]
    print(f"\nstepping, {a.agents} agents x {a.envs} environments, {a.size}x{a.size}, density {a.density}:")
    for name in ("rust-cpu", "python-vectorenv", "pogema"):
        if name in by:
            v = by[name]["agent_steps_per_sec"]
            print(f"  {name:20s} {v:14.3e} agent-steps/s   {v / rust:8.3f} x Rust")
    ref = by.get("rust-c-api-verify_answers", by.get("rust-verify_batch_cpu", {})).get("answers_per_sec")
    print(f"\nrewards, {a.completions} completions (3 agents, 8x8):")
    for name in ("rust-c-api-verify_answers", "python-verify_batch", "python-trl_reward", "rust-verify_batch_cpu"):
        if name in by:
            v = by[name]["answers_per_sec"]
            print(f"  {name:26s} {v:12.3e} answers/s   " + (f"{v / ref:8.3f} x Rust (text)" if ref else ""))


if __name__ == "__main__":
    main()
