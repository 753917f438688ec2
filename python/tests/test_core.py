import json
import subprocess

import numpy as np
import pytest

import floe


def test_generate_matches_itself_and_round_trips(small, tmp_path):
    again = floe.generate(3, 5, count=12, seed=7, wait_ratio=0.5)
    assert [i.to_json() for i in small] == [i.to_json() for i in again]
    assert all(i.num_agents == 3 and i.width == 5 and i.optimal_soc is not None for i in small)
    path = tmp_path / "x.jsonl"
    floe.write_instances(str(path), small)
    back = floe.read_instances(str(path))
    assert back == small
    assert floe.Instance.from_json(small[0].to_json()) == small[0]


def test_errors_are_floe_exceptions_with_rust_messages(small):
    with pytest.raises(floe.BadInput, match="count must be at least 1"):
        floe.generate(3, 5, count=0)
    with pytest.raises(floe.BadInput):
        floe.Instance.from_json('{"grid": ["FF"], "agents": [{"start": [0, 0], "goal": [0, 5]}]}')
    with pytest.raises(floe.BadInput, match="time_limit"):
        floe.solve(small[0], time_limit=-1.0)
    with pytest.raises(floe.BadInput):
        floe.parse_answer(small[0], "no plan here")
    assert issubclass(floe.BadInput, floe.FloeError) and issubclass(floe.FloeError, Exception)
    with pytest.raises(floe.BadInput, match="/no/such.jsonl: No such file"):
        floe.read_instances("/no/such.jsonl")


def test_solve_is_optimal_and_verifies(small):
    for inst in small:
        sol = floe.solve(inst)
        assert sol["soc"] == inst.optimal_soc
        v = floe.verify(inst, {"moves": sol["moves"]})
        assert v["valid"] and v["optimal"] and v["failure"] is None
        assert v["soc"] == sol["soc"]


def _answer(moves):
    letters = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    return "\n".join(f"Agent {a}: " + " ".join(letters[c] for c in m) for a, m in enumerate(moves))


def test_prompt_and_parse_answer(small):
    inst = small[0]
    text = floe.prompt(inst)
    assert "Agent" in text and len(text) > 100
    moves = floe.solve(inst)["moves"]
    plan = floe.parse_answer(inst, _answer(moves))
    assert floe.verify(inst, plan)["valid"]
    bad = floe.verify(inst, "Agent 0: UP\n")
    assert not bad["valid"] and bad["failure"]["kind"] in ("wrong_agent_count", "parse_error")


def test_verify_batch_agrees_with_verify(small):
    answers, expected = [], []
    for n, inst in enumerate(small):
        moves = floe.solve(inst)["moves"]
        if n % 3 == 1:
            moves = [m[:-1] for m in moves]  # stops short: goal not reached
        if n % 3 == 2:
            moves = ["W" + m for m in moves]  # one wait too many: valid, not optimal
        text = _answer(moves)
        answers.append(text)
        expected.append(floe.verify(inst, text))
    got = floe.verify_batch(small, answers)
    assert got["valid"].tolist() == [e["valid"] for e in expected]
    assert got["optimal"].tolist() == [e["optimal"] for e in expected]
    assert got["valid"].sum() >= 4 and (~got["valid"]).sum() >= 1
    # Instances as JSON text give the same records.
    as_json = floe.verify_batch([i.to_json() for i in small], answers)
    for k in got:
        assert np.array_equal(got[k], as_json[k])
    with pytest.raises(floe.BadInput, match="instances but"):
        floe.verify_batch(small, answers[:-1])


def test_suite_writes_the_cli_layout(tmp_path):
    cells = floe.suite(agents=[2], max_size=3, wait_ratios=[0.0], per_cell=2, out=str(tmp_path))
    assert [name for name, _ in cells] == ["2ag_2x2_wr0.00.jsonl", "2ag_3x3_wr0.00.jsonl"]
    for name, instances in cells:
        assert floe.read_instances(str(tmp_path / name)) == instances
    assert (tmp_path / "suite.json").exists()


def test_mutate_edits_a_level_keeps_it_solvable_and_repeats_for_a_seed(small):
    base = small[0]
    edited, edits = floe.mutate(base, edits=3, seed=4)
    again, again_edits = floe.mutate(base, edits=3, seed=4)
    assert (edited.to_json(), edits) == (again.to_json(), again_edits), "the same seed, the same level"
    assert edited.to_json() != base.to_json()
    assert len(edits) == 3
    for e in edits:
        (kind, what), = e.items()
        assert kind in ("flip", "move_start", "move_goal"), e
    # Solved again: its stored plan is valid and optimal by the verifier and the solver.
    optimal = json.loads(edited.to_json())["optimal"]
    verdict = floe.verify(edited, optimal["moves"])
    assert verdict["valid"] and verdict["optimal"]
    assert optimal["soc"] == edited.optimal_soc == floe.solve(edited)["soc"]
    # Two agents that must swap in a corridor: no edit keeps it solvable.
    corridor = floe.Instance.from_json(
        '{"grid": ["FFFFF"], "agents": [{"start": [0, 0], "goal": [0, 4]}, {"start": [0, 4], "goal": [0, 0]}]}')
    with pytest.raises(floe.Failed, match="no 1 edits of the level kept it solvable .* 8 attempts with seed 0"):
        floe.mutate(corridor, edits=1, max_attempts=8)
    with pytest.raises(ValueError, match="edits is 0"):
        floe.mutate(base, edits=0)
