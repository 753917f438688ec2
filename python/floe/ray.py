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
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

from . import _floe

__all__ = ["build_suite", "build_training_set", "verify_file", "shard_ranges"]


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
