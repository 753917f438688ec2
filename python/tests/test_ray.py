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


def _untimed(table):
    """A `floe levels` table without its timings (wall time, steps a second): the rest of it is
    the runs' seeded results."""
    lines = []
    for line in table.splitlines():
        cells = line.split(" | ")
        if "wall time per run" in line or (cells and line.startswith("| ") and len(cells) == 15):
            cells = cells[:-1]
        elif "training environment steps / s" in line or (len(cells) == 5 and line.startswith("| ")):
            cells = cells[:-1]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


@pytest.mark.skipif(not os.environ.get("FLOE_CLI"), reason="FLOE_CLI is not set")
def test_floe_levels_over_ray_tasks_is_the_single_process_table(cluster, tmp_path):
    """One Ray task a run (contender and seed) on a local cluster of two workers, merged: the
    table and every run's per-level results are those of one `floe levels` process."""
    cli = os.environ["FLOE_CLI"]
    args = ["--budget", "tiny", "--contenders", "uniform,fixed,plr", "--seeds", "2", "--threads", "1", "--quiet"]
    one = tmp_path / "one"
    done = __import__("subprocess").run([cli, "levels", *args, "--out", str(one)], capture_output=True, text=True)
    if "is not in this build" in done.stderr:
        pytest.skip("FLOE_CLI was built without the train feature")
    assert done.returncode == 0, done.stderr
    many = tmp_path / "many"
    table = fray.levels(str(many), budget="tiny", contenders=["uniform", "fixed", "plr"], seeds=2, floe=cli)
    assert _untimed(table) == _untimed(done.stdout)
    assert table.count("| plr | 2 |") == 1, table
    for c in ["uniform", "fixed", "plr"]:
        for s in [0, 1]:
            run = lambda d: json.loads((d / c / f"seed-{s}" / "suite-outcomes.json").read_text())  # noqa: E731
            a, b = run(one), run(many)
            for key in ["hard", "paper", "ten", "curve", "played", "designs", "env_steps", "robust"]:
                assert a[key] == b[key], (c, s, key)
    # Again: every run is in the folder, so no task is sent, and the table is the same.
    assert _untimed(fray.levels(str(many), budget="tiny", contenders=["uniform", "fixed", "plr"], seeds=2,
                                floe=cli)) == _untimed(table)
    # Another budget's runs in the same folder are refused before any task is sent.
    with pytest.raises(RuntimeError, match="holds another experiment"):
        fray.levels(str(many), budget="small", contenders=["learnability"], seeds=1, floe=cli)
    assert not (many / "learnability").exists()
