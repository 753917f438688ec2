"""Suites, training sets and verification over a Ray cluster, through Ray Data.

Work is cut into shards by instance index: every instance slot of a generator configuration
draws from its own random stream, so a shard made on any worker is exactly that slice of the
single-process output, and the files written here are byte for byte those of
:func:`floe.suite` (``out=``), :func:`floe.write_instances` of :func:`floe.round_instances`,
and :func:`floe.verdict_lines` over a whole file.

The same code runs on one machine and on a multi-node cluster: connect first with
``ray.init(address="auto")`` (or ``address="ray://head:10001"``); without a connection,
:func:`ray.init` starts a local cluster. Every worker needs the ``floe`` package installed.
Shards travel through Ray's object store, so the workers need no shared file system; the
driver reads the inputs and writes the JSONL files, in order, as the shards arrive
(``preserve_order``). Parquet is written by Ray Data itself, one file per block, into a folder.

Each worker's floe call runs on all the cores of its machine (rayon); to give each Ray CPU one
thread, start the cluster with ``runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}}``.

``floe levels`` over a cluster (:func:`levels`): one Ray task a run, a contender and a seed, each
calling the ``floe`` binary (built with the ``train`` feature) on its worker; the runs' results
come back through the object store into one experiment folder, where ``floe levels`` writes the
table, as one process would have.

Level sampling over shards of one pool (:class:`LevelHub`, :class:`LevelShard`,
:func:`sync_levels`), as Syllabus keeps one curriculum for many processes: each shard's
``VectorEnv`` plays the hub's pool with a ``LevelShard`` as its ``levels=``, which keeps the
episodes that end; each round, every shard reports them (with the host's scores, if any) and
its pool, the hub's one sampler decides once, and every shard applies that decision, so every
shard's pool stays the same, slot for slot. The hub and the shards are plain objects or Ray
actors; Ray is needed only for actors.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np

from . import _floe

__all__ = ["build_suite", "build_training_set", "verify_file", "shard_ranges", "LevelHub", "LevelShard",
           "sync_levels", "levels"]


def _ray():
    import ray

    if not ray.is_initialized():
        ray.init()
    return ray


def shard_ranges(count: int, shard_size: int) -> list:
    """``(start, stop)`` index ranges of at most ``shard_size``, covering ``0..count`` in order."""
    if shard_size < 1:
        raise ValueError("shard_size must be at least 1")
    return [(s, min(s + shard_size, count)) for s in range(0, count, shard_size)]


def _generate_shard(row: dict) -> dict:
    insts = _floe.generate_slots(json.loads(row["config"]), row["start"], row["stop"])
    return {"task": row["task"], "text": "".join(i.to_json() + "\n" for i in insts)}


def _verify_shard(batch: dict) -> dict:
    lines = _floe.verdict_lines(list(batch["instance"]), list(batch["answer"]))
    return {"task": batch["task"], "text": [line + "\n" for line in lines]}


def _in_order(ds, count: int) -> Iterator[str]:
    """The ``text`` of each row of ``ds``, checked to come in task order 0, 1, …"""
    expected = 0
    for row in ds.iter_rows():
        if int(row["task"]) != expected:
            raise RuntimeError(f"shard {row['task']} arrived where {expected} was due")
        expected += 1
        yield row["text"]
    if expected != count:
        raise RuntimeError(f"{expected} of {count} shards arrived")


class _Ordered:
    """Ray Data's ``preserve_order`` for the span of a ``with``."""

    def __enter__(self):
        import ray.data

        self.opts = ray.data.DataContext.get_current().execution_options
        self.before = self.opts.preserve_order
        self.opts.preserve_order = True
        return self

    def __exit__(self, *exc):
        self.opts.preserve_order = self.before


def _generate(configs: Sequence[dict], shard_size: int) -> Iterator[tuple]:
    """``(config index, JSONL text)`` per shard of each configuration, in order."""
    ray = _ray()
    tasks = []
    for n, cfg in enumerate(configs):
        for start, stop in shard_ranges(cfg["count"], shard_size):
            tasks.append({"task": len(tasks), "cfg": n, "config": json.dumps(cfg), "start": start, "stop": stop})
    if not tasks:
        return
    with _Ordered():
        ds = ray.data.from_items(tasks, override_num_blocks=len(tasks)).map(_generate_shard)
        for task, text in zip(tasks, _in_order(ds, len(tasks))):
            yield task["cfg"], text


def build_suite(
    out: str,
    *,
    agents: Sequence[int] = (3, 4, 5),
    min_size: int = 0,
    max_size: int = 10,
    wait_ratios: Sequence[float] = (0.25, 0.5, 0.75),
    per_cell: int = 50,
    hole_ratio: float = 0.1,
    seed: int = 0,
    shard_size: int = 16,
) -> list:
    """The benchmark suite of :func:`floe.suite` (same arguments), generated on the cluster in
    shards of ``shard_size`` instances and written to the folder ``out`` as ``floe suite``
    writes it: one JSONL file per cell and ``suite.json``. Returns ``(file_name, count)`` per
    cell."""
    cells, manifest = _floe.suite_cells(
        agents=list(agents),
        min_size=min_size,
        max_size=max_size,
        wait_ratios=list(wait_ratios),
        per_cell=per_cell,
        hole_ratio=hole_ratio,
        seed=seed,
    )
    os.makedirs(out, exist_ok=True)
    files = [open(os.path.join(out, name), "w", encoding="utf-8", newline="") for name, _ in cells]
    try:
        for n, text in _generate([cfg for _, cfg in cells], shard_size):
            files[n].write(text)
    finally:
        for f in files:
            f.close()
    with open(os.path.join(out, "suite.json"), "w", encoding="utf-8", newline="") as f:
        f.write(manifest)
    return [(name, cfg["count"]) for name, cfg in cells]


def build_training_set(
    path: str,
    config: Union[dict, str],
    samples: int,
    seed: int = 0,
    *,
    shard_size: int = 64,
    parquet: Optional[str] = None,
    system: Optional[str] = None,
    split: str = "train",
) -> int:
    """One round's training set (the instances of :func:`floe.round_instances` for the round
    configuration ``config``), generated on the cluster in shards and written as JSONL to
    ``path``. With ``parquet``, Ray Data also writes the rows in verl's layout
    (:func:`floe.write_verl_parquet`, with ``system`` and ``split``) into that folder, one
    parquet file per shard. Returns the number of instances."""
    configs = _floe.round_configs(config, samples, seed)
    written = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        for _, text in _generate(configs, shard_size):
            f.write(text)
            written += text.count("\n")
    if parquet is not None:
        ray = _ray()
        offsets, tasks = 0, []
        for cfg in configs:
            for start, stop in shard_ranges(cfg["count"], shard_size):
                tasks.append(
                    {"config": json.dumps(cfg), "start": start, "stop": stop, "index": offsets,
                     "system": system, "split": split}
                )
                offsets += stop - start
        ds = ray.data.from_items(tasks, override_num_blocks=max(1, len(tasks))).flat_map(_verl_shard)
        ds.write_parquet(parquet)
    return written


def _verl_shard(row: dict) -> list:
    from .datasets import verl_rows

    insts = _floe.generate_slots(json.loads(row["config"]), row["start"], row["stop"])
    return verl_rows(insts, row["system"], row["split"], first_index=row["index"])


def _answer_text(line: str, n: int, path: str) -> str:
    value = json.loads(line)
    if isinstance(value, dict):
        value = value.get("answer")
    if not isinstance(value, str):
        raise ValueError(f"{path}: line {n}: expected a JSON string or an object with an 'answer' string")
    return value


def _lines(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line.strip()]


def verify_file(instances: str, answers: str, out: str, *, shard_size: int = 1024) -> dict:
    """Verifies a file of answers on the cluster: ``answers`` is JSON Lines, one answer per line
    (a JSON string, or an object with an ``answer`` string) for the instance on the same line of
    ``instances`` (JSONL). Writes to ``out`` the verdict of each, one line of JSON as ``floe
    verify`` prints it, in order. Returns ``{"answers", "valid", "optimal"}`` counts."""
    inst_lines = _lines(instances)
    texts = [_answer_text(line, n + 1, answers) for n, line in enumerate(_lines(answers))]
    if len(texts) != len(inst_lines):
        raise ValueError(f"{answers} has {len(texts)} answers but {instances} has {len(inst_lines)} instances")
    ray = _ray()
    ranges = shard_ranges(len(texts), shard_size)
    rows = [{"task": t, "instance": inst_lines[n], "answer": texts[n]} for t, (a, b) in enumerate(ranges) for n in range(a, b)]
    counts = {"answers": 0, "valid": 0, "optimal": 0}
    with _Ordered(), open(out, "w", encoding="utf-8", newline="") as f:
        if rows:
            ds = ray.data.from_items(rows, override_num_blocks=len(ranges))
            ds = ds.map_batches(_verify_shard, batch_size=shard_size, batch_format="numpy")
            expected = 0
            for row in ds.iter_rows():
                if int(row["task"]) < expected:
                    raise RuntimeError("verdicts arrived out of order")
                expected = int(row["task"])
                line = row["text"]
                verdict = json.loads(line)
                counts["answers"] += 1
                counts["valid"] += bool(verdict["valid"])
                counts["optimal"] += bool(verdict["optimal"])
                f.write(line)
    return counts


class LevelHub:
    """The one level sampler of several shards of a pool (a :class:`floe.Levels` of these
    arguments, attached to no engine), in this process or as a Ray actor
    (``ray.remote(LevelHub).remote("plr", ...)``: its methods are all it offers, so no
    attributes). :meth:`pool` gives every shard the same first levels, :meth:`decide` one
    decision for all of them."""

    def __init__(self, name: str = "uniform", params: Any = None, *, space: Optional[dict] = None, seed: int = 0,
                 library: Optional[str] = None):
        self.sampler = _floe.Levels(name, params, space=space, seed=seed, library=library)
        self._pool: Optional[list] = None
        self._totals = {"decisions": 0, "episodes": 0, "refilled": 0}

    def room(self) -> tuple:
        """``(agents, side)``: the room every shard's engine needs (``VectorEnv`` gives it to a
        ``LevelShard``'s engine)."""
        return self.sampler.room

    def pool(self, count: int) -> list:
        """The shards' first levels: ``count`` levels drawn from the space on the first call, the
        same list on every later one (every shard must start from the same pool)."""
        if self._pool is None:
            self._pool = self.sampler.draw(count)
        elif len(self._pool) != count:
            raise ValueError(f"the shards' pool has {len(self._pool)} levels, not {count}: every shard plays one pool")
        return self._pool

    def decide(self, reports: Sequence[dict]) -> "_floe.LevelDecision":
        """One decision from every shard's :meth:`LevelShard.report`, in shard order: the pools
        must be the same but for the environments in play, which are added up; the episodes (and
        the scores, given by every shard or by none) are joined in shard order. Raises
        ``ValueError`` naming the shard and slot where a pool differs (a shard that missed a
        decision), or the shard whose scores are missing, and the sampler's errors as
        :meth:`floe.Levels.decide` raises them; the sampler is then as it was."""
        if not reports:
            raise ValueError("no shard reported")
        levels = np.array(reports[0]["levels"], dtype=np.uint32)
        for n, r in enumerate(reports[1:], 1):
            other = np.asarray(r["levels"], dtype=np.uint32)
            if other.shape != levels.shape:
                raise ValueError(f"shard {n}'s pool has {len(other)} slots and shard 0's {len(levels)}")
            differ = np.argwhere(other[:, :7] != levels[:, :7])
            if len(differ):
                slot, col = (int(x) for x in differ[0])
                field = _floe.LEVEL_FIELDS[col]
                raise ValueError(f"shard {n}'s pool differs from shard 0's at slot {slot} ({field} {other[slot, col]} "
                                 f"against {levels[slot, col]}): every shard must apply every decision")
            levels[:, 7] += other[:, 7]
        episodes = np.concatenate([np.asarray(r["episodes"], dtype=np.uint32).reshape(-1, len(_floe.INFO_FIELDS))
                                   for r in reports])
        given = [r.get("scores") is not None for r in reports]
        if any(given) and not all(given):
            odd = next(n for n, g in enumerate(given) if g != given[0])
            raise ValueError(f"shard {odd} gave {'' if given[odd] else 'no '}scores and shard 0 "
                             f"{'did' if given[0] else 'did not'}: scores come from every shard or from none")
        scores = np.concatenate([np.asarray(r["scores"], np.float32) for r in reports]) if all(given) else None
        decision = self.sampler.decide(levels, episodes, scores)
        t = self._totals
        t["decisions"] += 1
        t["episodes"] += decision.episodes
        t["refilled"] += len(decision.refill)
        return decision

    def totals(self) -> dict:
        """``{"decisions", "episodes", "refilled"}`` over every decision so far."""
        return dict(self._totals)


class LevelShard:
    """The levels of one shard of a pool that a :class:`LevelHub` steers: the ``levels=`` of the
    shard's ``VectorEnv`` (or ``Env``, ``ParallelEnv``), whose instances are the hub's
    ``pool(count)``; ``room`` is the hub's ``room()``. After each step it keeps the episodes that
    ended; :meth:`report` hands them over, :meth:`apply` takes the hub's decision, which lands
    in the shard's next step (so that the episodes its refills cut short end in a step, as
    Gymnasium expects) or at once when no step has been taken since the last reset."""

    def __init__(self, room: Sequence[int]):
        self.room = tuple(int(x) for x in room)
        self.engine = None
        self._episodes: list = []
        self._waiting: list = []
        self._stepped = False

    def draw(self, count: int) -> list:
        raise ValueError("a shard's levels are its hub's: make the environment with instances=hub.pool(count)")

    def attach(self, engine) -> None:
        """Steers ``engine`` (a ``floe.Engine`` with room for the hub's space)."""
        if self.engine is not None and self.engine is not engine:
            raise ValueError("this shard steers another engine already: one LevelShard per environment")
        have, need = tuple(engine.room), self.room
        if have[0] < need[0] or have[1] < need[1]:
            raise ValueError(f"the engine's pool has room for {have[0]} agents on a side of {have[1]}, and the hub's "
                             f"space needs {need[0]} on {need[1]}: make the engine with room=hub.room()")
        self.engine = engine

    def start(self) -> Optional[dict]:
        """After the engine's reset: drops the kept episodes (as a sampler's ``start`` does) and
        applies the decisions waiting; returns what the last of them did, or None."""
        self._episodes.clear()
        self._stepped = False
        return self._apply_waiting()

    def after_step(self) -> Optional[dict]:
        """After each step of the engine: keeps the episodes that ended in it, then applies the
        decisions waiting (in the step's outputs); returns what the last of them did, or None."""
        e = self.engine
        done = (e.terminated | e.truncated).astype(np.bool_)
        if done.any():
            self._episodes.append(e.info[done])
        self._stepped = True
        return self._apply_waiting()

    def _apply_waiting(self) -> Optional[dict]:
        applied = None
        while self._waiting:
            applied = self.engine.apply(self._waiting.pop(0))
        return applied

    @property
    def pending(self) -> np.ndarray:
        """The episodes kept since the last report: ``(n, 8)`` uint32 ``info`` rows
        (:data:`floe.INFO_FIELDS`), the order of the scores :meth:`report` takes."""
        if not self._episodes:
            return np.zeros((0, len(_floe.INFO_FIELDS)), np.uint32)
        return np.concatenate(self._episodes)

    def report(self, scores=None) -> dict:
        """What the hub needs of this shard: ``{"levels": engine.levels(), "episodes": pending,
        "scores"}``, ``scores`` the host's, one per pending episode, or None. Drops the kept
        episodes. Raises ``ValueError`` for scores of another count, ``RuntimeError`` while a
        decision waits for the next step (the pool would be reported as it was before it)."""
        if self._waiting:
            raise RuntimeError("a decision waits for this shard's next step: step before the next report")
        episodes = self.pending
        if scores is not None:
            scores = np.asarray(scores, np.float32)
            if scores.shape != (len(episodes),):
                raise ValueError(f"{scores.size} scores for {len(episodes)} episodes: give one score per pending episode")
        self._episodes = []
        return {"levels": self.engine.levels(), "episodes": episodes, "scores": scores}

    def apply(self, decision) -> Optional[dict]:
        """Takes the hub's decision: applied at once when no step was taken since the last reset
        (returns what it did), else at the next step (returns None)."""
        self._waiting.append(decision)
        return None if self._stepped else self._apply_waiting()


def _each(calls: list) -> list:
    """``f(*args)`` for each ``(f, args)``; a Ray actor's method (one with ``remote``) through
    Ray, every call started before any is waited for."""
    out = [f.remote(*args) if hasattr(f, "remote") else f(*args) for f, args in calls]
    remote = [i for i, (f, _) in enumerate(calls) if hasattr(f, "remote")]
    if remote:
        import ray

        for i, value in zip(remote, ray.get([out[i] for i in remote])):
            out[i] = value
    return out


def sync_levels(hub, shards: Sequence, scores: Optional[Sequence] = None):
    """One round of level sampling over shards of one pool: every shard's ``report`` (with
    ``scores[i]``, the host's scores of shard ``i``'s pending episodes, when given), the hub's
    one ``decide``, and every shard's ``apply`` of it. ``hub`` is a :class:`LevelHub` and
    ``shards`` :class:`LevelShard` objects, or Ray actor handles of objects with those methods
    (an actor that holds a shard's environment and passes ``report`` and ``apply`` on to its
    ``LevelShard``). Call it once after every shard's reset (the sampler's first weights), then
    every few steps. Returns the decision."""
    if scores is None:
        scores = [None] * len(shards)
    if len(scores) != len(shards):
        raise ValueError(f"{len(scores)} score lists for {len(shards)} shards")
    reports = _each([(s.report, (sc,)) for s, sc in zip(shards, scores)])
    (decision,) = _each([(hub.decide, (reports,))])
    _each([(s.apply, (decision,)) for s in shards])
    return decision


def _floe_levels(floe: str, args: Sequence[str], env: Optional[dict] = None) -> str:
    """``floe levels`` with ``args``: its standard output, or a RuntimeError with its error."""
    import subprocess

    done = subprocess.run([floe, "levels", *args], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})
    if done.returncode != 0:
        raise RuntimeError(f"floe levels {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def _levels_run(floe: str, budget: str, contender: str, seed: int, threads: int, env: Optional[dict]) -> tuple:
    """One run of ``floe levels`` in a folder of its own on this worker: ``(record, outcome)``,
    the texts of its ``experiment.json`` and of its run's ``suite-outcomes.json``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="floe-levels-") as d:
        _floe_levels(floe, ["--budget", budget, "--contenders", contender, "--seed", str(seed),
                            "--threads", str(threads), "--quiet", "--out", d], env)
        with open(os.path.join(d, "experiment.json"), encoding="utf-8") as f:
            record = f.read()
        with open(os.path.join(d, contender, f"seed-{seed}", "suite-outcomes.json"), encoding="utf-8") as f:
            return record, f.read()


def levels(
    out: str,
    *,
    budget: str = "small",
    contenders: Optional[Sequence[str]] = None,
    seeds: int = 5,
    threads: int = 1,
    floe: str = "floe",
    env: Optional[dict] = None,
) -> str:
    """``floe levels`` with its runs sent out as Ray tasks, one per contender and seed, merged
    into the experiment folder ``out``; returns the table ``floe levels`` then writes there.

    Runs already in ``out`` are not sent again. Each task runs ``floe`` (the path or name of
    the binary on the workers, built with the ``train`` feature) with ``threads`` libtorch
    threads and the environment variables ``env`` added (``LD_LIBRARY_PATH`` for libtorch, say);
    its run's results return through Ray's object store, so the workers need no shared file
    system. The per-level results are those of one process: every run is seeded. Raises
    RuntimeError with ``floe``'s message when a run fails, and ValueError when the workers'
    settings differ from the driver's or ``out`` holds another experiment's runs (nothing in
    ``out`` changes then)."""
    ray = _ray()
    common = ["--budget", budget, "--seeds", str(seeds)]
    if contenders is not None:
        common += ["--contenders", ",".join(contenders)]
    plan = [json.loads(line) for line in _floe_levels(floe, [*common, "--plan", "--out", out], env).splitlines()]
    todo = [(c, s) for c, s in plan
            if not os.path.isfile(os.path.join(out, c, f"seed-{s}", "suite-outcomes.json"))]
    task = ray.remote(num_cpus=threads)(_levels_run)
    got = ray.get([task.remote(floe, budget, c, s, threads, env) for c, s in todo])
    records = {json.dumps(json.loads(r), sort_keys=True) for r, _ in got}
    ours = os.path.join(out, "experiment.json")
    if os.path.isfile(ours):
        with open(ours, encoding="utf-8") as f:
            records.add(json.dumps(json.loads(f.read()), sort_keys=True))
    if len(records) > 1:
        raise ValueError(f"the runs' settings differ ({len(records)} records): every worker needs the same floe")
    os.makedirs(out, exist_ok=True)
    if got and not os.path.isfile(ours):
        _write_whole(ours, got[0][0])
    for (c, s), (_, outcome) in zip(todo, got):
        os.makedirs(os.path.join(out, c, f"seed-{s}"), exist_ok=True)
        _write_whole(os.path.join(out, c, f"seed-{s}", "suite-outcomes.json"), outcome)
    return _floe_levels(floe, [*common, "--threads", str(threads), "--quiet", "--out", out], env)


def _write_whole(path: str, text: str) -> None:
    """``text`` into ``path`` through a temporary file renamed over it, as floe writes its folders."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
