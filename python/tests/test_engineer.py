"""The engineer between rounds from Python: the trainer's context, its limits, its fallback."""

import json

import pytest

import floe

ROUND0 = {
    "sizes": [
        {"size": 3, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5},
        {"size": 4, "data_ratio": 0.5, "hole_ratio": 0.2, "wait_ratio": 0.5},
    ],
    "agents": [2],
}


def _history():
    results = [
        {"size": 3, "valid_rate": 0.9, "optimal_rate": 0.6, "instances": 20, "failures": {"vertex_conflict": 2}},
        {"size": 4, "valid_rate": 0.3, "optimal_rate": 0.1, "instances": 20,
         "failures": {"hole": 9, "vertex_conflict": 5}},
    ]
    return {"rounds": [{"round": 0, "config": ROUND0, "results": results}]}


def test_context_is_the_trainers():
    ctx = floe.engineer_context(_history(), rounds=4, epochs=1, samples=64)
    # F: the last round's failures; H: earlier configurations (none but round 0 in V6); T; limits.
    assert "## F: failures on the validation set after round 0" in ctx
    assert "| 4x4 | 20 | 30.0 | 10.0 | hole 9, vertex_conflict 5 |" in ctx
    assert "Round 1 of 4" in ctx and "64 prompts" in ctx
    limits = json.loads(ctx.split("```json limits\n", 1)[1].split("```", 1)[0])
    assert limits["max_replay_fraction"] == 0.0 and limits["max_size"] == 6
    assert "```json history" not in ctx
    with_json = floe.engineer_context(_history(), context={"history_json": True, "preset": "V3"})
    assert "Round 0: " in with_json
    carried = json.loads(with_json.split("```json history\n", 1)[1].split("```", 1)[0])
    assert carried["rounds"][0]["config"]["sizes"] == ROUND0["sizes"]
    assert carried["rounds"][0]["results"][1]["failures"] == {"hole": 9, "vertex_conflict": 5}
    with pytest.raises(floe.ConfigError, match="limits"):
        floe.engineer_context(_history(), limits={"max_size": 1})
    with pytest.raises(floe.ConfigError):
        floe.engineer_context(_history(), context={"preset": "V9"})


def test_rules_designs_the_next_round_from_the_history():
    eng = floe.Engineer("rules")
    got = eng.next_config(_history(), rounds=4, epochs=1, samples=64, limits={"max_size": 5})
    assert got["source"] == "engineer", got["notes"]
    assert "```json history" in got["context"]
    # The rules engineer alone, on the same history, before the run's limits.
    raw = floe.Engineer("rules").design(got["context"])
    assert got["rationale"] == raw["rationale"] and "size 3" in got["rationale"]
    sizes = [s["size"] for s in got["config"]["sizes"]]
    assert max(sizes) <= 5 and got["config"]["agents"] and got["config"]["replay_fraction"] == 0.0
    assert floe.round_instances(got["config"], 8, seed=1)
    # An empty history is round 0, not the engineer's; `rules` without the history JSON is refused.
    with pytest.raises(floe.BadInput, match="no finished round"):
        eng.next_config({"rounds": []})
    with pytest.raises(floe.ConfigError, match="history_json"):
        eng.next_config(_history(), context={"preset": "V6"})


def test_the_engineer_is_given_the_limits_as_a_value():
    asked = []
    reply = ('{"rationale": "r", "config": {"sizes": [{"size": 4, "data_ratio": 1, "hole_ratio": 0.2,'
             ' "wait_ratio": 0.5}], "agents": [2]}}')

    def model(request):
        asked.append(request)
        return reply

    eng = floe.Engineer.from_model(model, retries=0)
    eng.design("Design the next round.", limits={"min_size": 4, "max_size": 9, "agents": [2]})

    def size(request):
        return request["schema"]["properties"]["config"]["properties"]["sizes"]["items"]["properties"]["size"]

    assert size(asked[0]) == {"type": "integer", "minimum": 4, "maximum": 9}
    # Without limits, floe's defaults; bad limits are refused before the model is asked.
    eng.design("Design the next round.")
    assert size(asked[1])["maximum"] == 6
    with pytest.raises(floe.ConfigError, match="agents"):
        eng.design("x", limits={"agents": []})
    assert len(asked) == 2
    # next_config says which limits it gave: the run's, with no replay unless asked for.
    got = eng.next_config(_history(), limits={"max_size": 5})
    assert got["limits"]["max_size"] == 5 and got["limits"]["max_replay_fraction"] == 0.0


def test_the_reply_is_clamped_into_the_limits_with_notes():
    got = floe.Engineer("rules").next_config(_history(), limits={"min_size": 3, "max_size": 3, "agents": [2]})
    assert got["source"] == "engineer"
    assert [s["size"] for s in got["config"]["sizes"]] == [3]
    assert any(n.startswith("clamped to the run's limits: size ") for n in got["notes"]), got["notes"]
