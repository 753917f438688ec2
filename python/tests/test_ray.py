"""floe.ray on a local Ray cluster: a sharded run writes byte for byte the files of a
single-process run."""

import json
import os

import pytest

import floe

ray = pytest.importorskip("ray")
import floe.ray as fray  # noqa: E402

SUITE = dict(agents=[2, 3], min_size=3, max_size=4, wait_ratios=[0.5], per_cell=7, hole_ratio=0.1, seed=5)
ROUND = {
    "sizes": [
        {"size": 3, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5},
        {"size": 4, "data_ratio": 0.5, "hole_ratio": 0.1, "wait_ratio": 0.25},
    ],
    "agents": [2, 3],
}


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _files(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def test_shards_concatenate_to_the_whole():
    cells, manifest = floe.suite_cells(**SUITE)
    _, cfg = cells[1]
    whole = floe.generate_slots(cfg)
    parts = [i for a, b in fray.shard_ranges(cfg["count"], 3) for i in floe.generate_slots(cfg, a, b)]
    assert parts == whole
    assert json.loads(manifest)["cells"][1]["file"] == cells[1][0]
    configs = floe.round_configs(ROUND, 20, seed=3)
    assert [i for c in configs for i in floe.generate_slots(c)] == floe.round_instances(ROUND, 20, seed=3)
    with pytest.raises(floe.BadInput, match="slots"):
        floe.generate_slots(cfg, 5, 9)


def test_suite_is_the_single_process_suite(cluster, tmp_path):
    floe.suite(out=str(tmp_path / "one"), **SUITE)
    got = fray.build_suite(str(tmp_path / "sharded"), shard_size=3, **SUITE)
    assert sorted(n for n, _ in got) == sorted(n for n in _files(tmp_path / "one") if n != "suite.json")
    assert all(c == SUITE["per_cell"] for _, c in got)
    assert _files(tmp_path / "sharded") == _files(tmp_path / "one")


def test_training_set_is_the_single_process_set(cluster, tmp_path):
    import pyarrow.parquet as pq

    single = floe.round_instances(ROUND, 20, seed=3)
    floe.write_instances(str(tmp_path / "one.jsonl"), single)
    n = fray.build_training_set(str(tmp_path / "sharded.jsonl"), ROUND, 20, seed=3, shard_size=4, parquet=str(tmp_path / "pq"))
    assert n == 20
    assert (tmp_path / "sharded.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    floe.write_verl_parquet(str(tmp_path / "one.parquet"), single)
    want = pq.read_table(tmp_path / "one.parquet").to_pylist()
    got = sorted(pq.read_table(tmp_path / "pq").to_pylist(), key=lambda r: r["extra_info"]["index"])
    assert got == want


def test_verify_file_is_the_single_process_verdicts(cluster, tmp_path):
    insts = floe.generate(3, 5, count=30, seed=2)
    floe.write_instances(str(tmp_path / "inst.jsonl"), insts)
    letters = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    answers = []
    for n, inst in enumerate(insts):
        moves = floe.solve(inst)["moves"]
        if n % 3 == 1:
            moves = moves[::-1]  # agents swapped: mostly invalid
        text = "\n".join(f"Agent {a}: " + " ".join(letters[c] for c in m) for a, m in enumerate(moves))
        answers.append("no idea" if n % 3 == 2 else text)
    with open(tmp_path / "answers.jsonl", "w") as f:
        for n, a in enumerate(answers):
            f.write(json.dumps(a if n % 2 else {"answer": a}) + "\n")
    counts = fray.verify_file(str(tmp_path / "inst.jsonl"), str(tmp_path / "answers.jsonl"), str(tmp_path / "v.jsonl"), shard_size=7)
    single = "".join(line + "\n" for line in floe.verdict_lines(insts, answers))
    assert (tmp_path / "v.jsonl").read_text() == single
    assert counts["answers"] == 30 and counts["optimal"] >= 10 and counts["valid"] < 30
    first = json.loads(single.splitlines()[0])
    assert first == floe.verify(insts[0], answers[0])
