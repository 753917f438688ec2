"""floe.reasoning_gym: MAPF-FrozenLake as a Reasoning Gym dataset, scored with floe's rewards."""

import json
import pickle
import subprocess
import sys

import pytest

import floe

if sys.version_info < (3, 10):
    pytest.skip("Reasoning Gym needs Python 3.10 or later", allow_module_level=True)

# Installed by scripts/python.sh (requirements-test.txt): a missing one fails, it does not skip.
import reasoning_gym  # noqa: E402

import floe.reasoning_gym as frg  # noqa: E402


def _entries(**config):
    config.setdefault("size", 12)
    config.setdefault("seed", 5)
    return list(reasoning_gym.create_dataset("floe_mapf", **config))


def _conflict_plan(entry):
    """The optimal plan with every wait taken out: the same cells in fewer steps, so (on an
    instance that needs a wait) two agents meet."""
    inst = floe.Instance.from_json(entry["metadata"]["instance"])
    moves = [m.replace("W", "") for m in json.loads(entry["metadata"]["instance"])["optimal"]["moves"]]
    text = floe.write_answer(inst, moves)
    verdict = floe.verify(inst, text)
    if not verdict["valid"] and "conflict" in verdict["failure"]["kind"]:
        return text
    return None


def test_registered_with_a_curriculum():
    assert "floe_mapf" in reasoning_gym.factory.DATASETS
    assert isinstance(reasoning_gym.create_dataset("floe_mapf", size=3, seed=1), frg.FloeMapfDataset)
    assert isinstance(reasoning_gym.factory.create_curriculum("floe_mapf"), frg.FloeMapfCurriculum)
    assert reasoning_gym.get_score_answer_fn("floe_mapf").__func__ is frg.FloeMapfDataset.score_answer


def test_pickles_for_workers():
    data = reasoning_gym.create_dataset("floe_mapf", size=3, seed=4)
    entry = data[1]
    copy = pickle.loads(pickle.dumps(data))
    assert copy[1] == entry
    assert copy.score_answer(entry["answer"], entry) == data.score_answer(entry["answer"], entry) == 1.0


def test_deterministic_for_a_seed():
    a = _entries(seed=11, size=8)
    b = _entries(seed=11, size=8)
    assert a == b
    c = _entries(seed=12, size=8)
    assert [e["metadata"]["instance"] for e in a] != [e["metadata"]["instance"] for e in c]
    data = reasoning_gym.create_dataset("floe_mapf", seed=11, size=8)
    assert data[5] == a[5]  # random access gives the item iteration gives


def test_items_have_reasoning_gym_fields():
    data = reasoning_gym.create_dataset("floe_mapf", seed=3, size=10, min_size=4, max_size=7, max_agents=4)
    assert len(data) == 10
    for idx, entry in enumerate(data):
        assert isinstance(entry["question"], str) and isinstance(entry["answer"], str)
        meta = entry["metadata"]
        assert meta["source_dataset"] == "floe_mapf" and meta["source_index"] == idx
        inst = floe.Instance.from_json(meta["instance"])
        # The question is the paper's prompt, as the TRL/verl datasets ask it.
        assert entry["question"] == floe.prompt(inst)
        assert entry["question"] == floe.build_records([inst])[0]["prompt"][-1]["content"]
        assert 4 <= meta["size"] == inst.width <= 7 and 3 <= meta["num_agents"] <= 4
        assert meta["optimal_soc"] == inst.optimal_soc
        # The oracle answer is an optimal plan that floe's verifier accepts, scoring the most.
        verdict = floe.verify(inst, entry["answer"])
        assert verdict["valid"] and verdict["optimal"]
        assert data.score_answer(entry["answer"], entry) == 1.0
        assert set(meta["difficulty"]) == {"size", "agents", "hole_ratio", "wait_ratio"}
    with pytest.raises(IndexError):
        data[10]


def test_wait_ratio_and_hole_ratio_reach_the_instances():
    none = _entries(size=16, wait_ratio=0.0)
    every = _entries(size=16, wait_ratio=1.0)
    assert not any(e["metadata"]["needs_wait"] for e in none)
    assert all(e["metadata"]["needs_wait"] for e in every)
    flat = _entries(size=6, hole_ratio=0.0)
    holey = _entries(size=6, hole_ratio=0.3, min_size=6, max_size=6)
    assert all("H" not in "".join(floe.Instance.from_json(e["metadata"]["instance"]).grid) for e in flat)
    assert all(
        "".join(floe.Instance.from_json(e["metadata"]["instance"]).grid).count("H") == round(0.3 * 36) for e in holey
    )


def test_curriculum_changes_size_holes_and_waits():
    curriculum = reasoning_gym.factory.create_curriculum("floe_mapf")
    seen = []
    for level in range(4):
        curriculum.set_global_level(level)
        config = curriculum.generate_configuration({"seed": 2, "size": 6})
        seen.append((config.min_size, config.max_size, config.hole_ratio, config.wait_ratio))
        data = frg.FloeMapfDataset(config)
        for entry in data:
            meta = entry["metadata"]
            assert config.min_size <= meta["size"] <= config.max_size
            assert meta["hole_ratio"] == config.hole_ratio
            assert meta["difficulty"]["wait_ratio"] == config.wait_ratio
    assert seen == [(4, 4, 0.0, 0.0), (4, 5, 0.1, 0.25), (4, 6, 0.2, 0.5), (4, 8, 0.3, 0.75)]
    # One attribute at a time.
    curriculum = frg.FloeMapfCurriculum()
    base = curriculum.generate_configuration()
    assert curriculum.increment_attr_level("size")
    assert curriculum.generate_configuration().max_size > base.max_size
    assert curriculum.increment_attr_level("hole_ratio")
    assert curriculum.generate_configuration().hole_ratio > base.hole_ratio
    assert curriculum.increment_attr_level("wait_ratio")
    assert curriculum.generate_configuration().wait_ratio > base.wait_ratio


@pytest.mark.parametrize("params", [None, {"unparseable": -1.0, "invalid": -0.5, "prefix_credit": 0.0}])
def test_scores_equal_floes_rewards(params):
    reward = "tiered"
    data = reasoning_gym.create_dataset("floe_mapf", seed=9, size=12, wait_ratio=1.0, reward_params=params)
    entries = list(data)
    conflicts = [(e, t) for e in entries for t in [_conflict_plan(e)] if t is not None]
    assert conflicts, "no instance whose wait-free plan has a conflict"
    cases = []
    for entry in entries[:4]:
        cases += [(entry, entry["answer"]), (entry, "Agent 0: FLY AWAY\nno plan here"), (entry, "")]
    cases += conflicts[:3]
    trl = floe.trl_reward(reward, params)
    verl = floe.make_compute_score(reward, params)
    instances = [e["metadata"]["instance"] for e, _ in cases]
    answers = [a for _, a in cases]
    prompts = [[{"role": "user", "content": e["question"]}] for e, _ in cases]
    completions = [[{"role": "assistant", "content": a}] for a in answers]
    expected = trl(prompts, completions, instance=instances)
    got = [data.score_answer(a, e) for e, a in cases]
    assert got == expected
    assert got == [verl(floe.datasets.DATA_SOURCE, a, i) for a, i in zip(answers, instances)]
    assert data.score_answers(answers, [e for e, _ in cases]) == expected
    # The cases score differently: the test would see a score taken from the wrong answer.
    optimal, garbage, empty = got[0], got[1], got[2]
    conflict = got[-1]
    assert optimal > conflict and optimal > garbage
    assert data.score_answer(None, entries[0]) == empty
    assert optimal == 1.0
    if params is None:
        assert conflict > garbage
        assert got == [floe.compute_score(floe.datasets.DATA_SOURCE, a, i) for a, i in zip(answers, instances)]


def test_import_without_reasoning_gym():
    code = (
        "import sys; sys.modules['reasoning_gym'] = None\n"
        "import floe\n"
        "assert floe.generate(3, 4, count=1, seed=1)\n"
        "try:\n"
        "    import floe.reasoning_gym\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('imported without reasoning_gym')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install" in out.stdout and "reasoning-gym" in out.stdout
