"""`floe.verify` reads plans with floe-core's one plan reader, as `floe verify` and the C API's
`floe_verify_plan` do: every documented form is accepted, JSON given as a string is read as
JSON, and a plan that does not read is a verdict that says why."""

import json
import os
import subprocess

import pytest

import floe


def _answer(moves):
    words = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    return "\n".join(f"Agent {i}: " + (" ".join(words[c] for c in m) or "WAIT") for i, m in enumerate(moves))


def _paths(inst, moves):
    steps = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1), "W": (0, 0)}
    out = []
    for agent, m in zip(json.loads(inst.to_json())["agents"], moves):
        path = [list(agent["start"])]
        for c in m:
            r, col = path[-1]
            path.append([r + steps[c][0], col + steps[c][1]])
        out.append(path)
    return out


def test_every_form_of_the_same_plan_gives_the_same_verdict(small):
    for inst in small[:4]:
        sol = floe.solve(inst)
        moves = sol["moves"]
        forms = [
            moves,  # the list floe.solve gives, as the stub types it
            sol,  # floe.solve's whole answer: the solver's soc and makespan are allowed
            {"moves": moves},
            {"paths": _paths(inst, moves)},
            _paths(inst, moves),
            json.dumps(moves),  # JSON in a string is read as JSON
            "  " + json.dumps({"moves": moves}),
            _answer(moves),
        ]
        verdicts = [floe.verify(inst, f) for f in forms]
        for form, v in zip(forms, verdicts):
            assert v["valid"] and v["optimal"] and v["failure"] is None, (form, v)
            assert v["soc"] == sol["soc"]


def test_json_in_a_string_is_never_read_as_prose(small):
    inst = small[0]
    moves = floe.solve(inst)["moves"]
    bad = list(moves)
    bad[0] = bad[0] + "X"
    v = floe.verify(inst, json.dumps(bad))
    assert v["failure"]["kind"] == "parse_error"
    detail = v["failure"]["detail"]
    assert detail.startswith("read as JSON: ") and "unknown move letter 'X'" in detail, detail
    v = floe.verify(inst, json.dumps(moves)[:-1])  # cut short
    assert v["failure"]["kind"] == "parse_error"
    assert v["failure"]["detail"].startswith("read as JSON: malformed plan JSON"), v


def test_a_plan_that_does_not_read_is_a_verdict_that_says_why(small):
    inst = small[0]
    for plan, kind, needle in [
        ({"moves": 3}, "parse_error", "expected a sequence"),
        ({"moves": ["R"], "colour": 1}, "parse_error", "unknown field `colour`"),
        (["R", [[0, 0]]], "parse_error", "one move string (or one path) per agent"),
        ("I am not sure.", "parse_error", "read as a text answer: no plan line found"),
        ("Agent 0: RIGHT", "wrong_agent_count", "the answer has plans for 1 agent"),
        (["R"], "wrong_agent_count", "1"),
        # Every line that begins "Agent <n>:" is read: none is skipped as prose.
        ("Agent 0: RIGHT\nAgent 1: I am not sure", "parse_error", "line 2: 'I' (move 1 of agent 1)"),
        ("Agent 0: SIDEWAYS\nAgent 0: RIGHT", "parse_error", "line 1: 'SIDEWAYS'"),
        ("Agent 0: RIGHT\nAgent 0: RIGHT", "parse_error", "line 2: a second line for agent 0"),
        ("Agent 0: RIGHT\nAgent 1: UP\nAgent 7: UP", "parse_error", "line 3: the instance has no agent 7"),
        ('{"moves": ["R", "U", "L"], "moves": ["R", "U", "L"]}', "parse_error", 'duplicate key "moves"'),
    ]:
        v = floe.verify(inst, plan)
        assert not v["valid"] and v["failure"]["kind"] == kind, (plan, v)
        assert needle in v["failure"]["detail"], (plan, v["failure"]["detail"])


def test_a_value_that_is_not_json_is_bad_input(small):
    with pytest.raises(floe.BadInput, match="not a JSON value"):
        floe.verify(small[0], {"R", "D"})


@pytest.mark.skipif(not os.environ.get("FLOE_CLI"), reason="FLOE_CLI is not set")
def test_the_cli_reads_the_same_forms(small, tmp_path):
    inst = small[1]
    one = tmp_path / "one.json"
    one.write_text(inst.to_json())
    sol = floe.solve(inst)
    for n, plan in enumerate([sol["moves"], sol, _paths(inst, sol["moves"])]):
        path = tmp_path / f"plan{n}.json"
        path.write_text(json.dumps(plan))
        out = subprocess.run([os.environ["FLOE_CLI"], "verify", "-i", str(one), "-p", str(path)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == floe.verify(inst, plan)
