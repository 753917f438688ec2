"""floe.ray with 1 and with N Ray workers against a single process: the seconds to build one
round's training set (generation with the optimal solver: the costly part of a suite or a
training set), each worker's floe calls on one thread (RAYON_NUM_THREADS=1), and a check that
every run wrote the same bytes.

    .venv/python-test/bin/python python/bench/ray_workers.py --samples 12000 --workers 1,2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

CONFIG = {
    "sizes": [
        {"size": 5, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5},
        {"size": 6, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5},
    ],
    "agents": [3],
}


def child(workers: int, samples: int, shard: int, out: str) -> None:
    import floe

    t0 = time.perf_counter()
    if workers == 0:
        floe.write_instances(out, floe.round_instances(CONFIG, samples, seed=1))
    else:
        import ray
        import floe.ray

        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}})
        # Ray's start-up is left out: a cluster is started once and used for many sets.
        ray.data.range(workers, override_num_blocks=workers).materialize()
        t0 = time.perf_counter()
        floe.ray.build_training_set(out, CONFIG, samples, seed=1, shard_size=shard)
        ray.shutdown()
    print(json.dumps({"workers": workers, "seconds": time.perf_counter() - t0}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=12000)
    p.add_argument("--shard", type=int, default=500)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        child(a.child, a.samples, a.shard, a.out)
        return
    digests = set()
    with tempfile.TemporaryDirectory() as d:
        for w in [0] + [int(x) for x in a.workers.split(",")]:
            out = os.path.join(d, f"w{w}.jsonl")
            env = dict(os.environ, RAYON_NUM_THREADS="1")  # the single process on one thread too
            res = subprocess.run([sys.executable, __file__, "--child", str(w), "--samples", str(a.samples),
                                  "--shard", str(a.shard), "--out", out], env=env, check=True,
                                 capture_output=True, text=True)
            line = json.loads(res.stdout.strip().splitlines()[-1])
            line["sha256"] = hashlib.sha256(open(out, "rb").read()).hexdigest()[:16]
            digests.add(line["sha256"])
            print(json.dumps(line), flush=True)
    print("same bytes in every run" if len(digests) == 1 else "RUNS DIFFER")


if __name__ == "__main__":
    main()
