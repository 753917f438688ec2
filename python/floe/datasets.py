"""Datasets of the paper's prompts with their instances: as plain records, as a Hugging Face
``datasets.Dataset`` (what TRL's ``GRPOTrainer`` takes), and as verl's parquet layout
(``data_source``, ``prompt``, ``ability``, ``reward_model.ground_truth``, ``extra_info``)."""

from __future__ import annotations

from typing import Iterable, Optional

from ._floe import Instance, prompt

DATA_SOURCE = "floe/mapf-frozenlake"


def build_records(instances: Iterable[Instance], system: Optional[str] = None) -> list:
    """One record per instance: ``prompt`` (chat messages: an optional system message and the
    paper's prompt as the user's), ``instance`` (the instance's JSON, read by the rewards),
    ``num_agents``, ``size`` and ``optimal_soc``."""
    records = []
    for inst in instances:
        messages = []
        if system is not None:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt(inst)})
        records.append(
            {
                "prompt": messages,
                "instance": inst.to_json(),
                "num_agents": inst.num_agents,
                "size": inst.width,
                "optimal_soc": inst.optimal_soc,
            }
        )
    return records


def to_hf_dataset(instances: Iterable[Instance], system: Optional[str] = None):
    """The records of :func:`build_records` as a ``datasets.Dataset``."""
    import datasets

    return datasets.Dataset.from_list(build_records(instances, system))


def verl_rows(
    instances: Iterable[Instance], system: Optional[str] = None, split: str = "train", first_index: int = 0
) -> list:
    """verl's row layout, one per instance; ``extra_info.index`` counts from ``first_index`` (a
    shard's offset in the whole set)."""
    rows = []
    for index, rec in enumerate(build_records(instances, system), start=first_index):
        rows.append(
            {
                "data_source": DATA_SOURCE,
                "prompt": rec["prompt"],
                "ability": "planning",
                "reward_model": {"style": "rule", "ground_truth": rec["instance"]},
                "extra_info": {
                    "split": split,
                    "index": index,
                    "num_agents": rec["num_agents"],
                    "size": rec["size"],
                },
            }
        )
    return rows


def write_verl_parquet(path: str, instances: Iterable[Instance], system: Optional[str] = None, split: str = "train") -> int:
    """Writes verl's parquet layout to ``path``; returns the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = verl_rows(instances, system, split)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return len(rows)
