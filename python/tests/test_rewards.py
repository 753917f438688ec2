import json

import numpy as np
import pytest

import floe


def _answer(moves):
    letters = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    return "\n".join(f"Agent {a}: " + " ".join(letters[c] for c in m) for a, m in enumerate(moves))


def _completions(instances):
    out = []
    for n, inst in enumerate(instances):
        moves = floe.solve(inst)["moves"]
        out.append(_answer(moves) if n % 2 == 0 else "I cannot solve this.")
    return out


def test_trl_reward_scores_like_the_plugin(small):
    records = floe.build_records(small)
    reward = floe.trl_reward("tiered")
    texts = _completions(small)
    conversational = [[{"role": "assistant", "content": t}] for t in texts]
    got = reward([r["prompt"] for r in records], conversational, instance=[r["instance"] for r in records])
    assert got == floe.Reward("tiered").score(small, texts).tolist()
    verdicts = floe.verify_batch(small, texts)
    # tiered: an optimal plan scores 1.0, an unreadable answer the lowest tier.
    assert all(g == 1.0 for g, o in zip(got, verdicts["optimal"]) if o)
    assert max(g for g, v in zip(got, verdicts["valid"]) if not v) < 1.0
    with pytest.raises(KeyError, match="instance"):
        reward(["p"], ["c"])


def test_verl_compute_score(small):
    texts = _completions(small)
    rows = floe.datasets.verl_rows(small)
    for row, text in zip(rows, texts):
        s = floe.compute_score(row["data_source"], text, row["reward_model"]["ground_truth"], row["extra_info"])
        assert s == floe.Reward("tiered").score([row["reward_model"]["ground_truth"]], [text])[0]


def test_reward_plugins_resolve_through_the_registry():
    with pytest.raises(floe.ConfigError, match="rewards only steps"):
        floe.Reward("shaped")
    with pytest.raises(floe.PluginFailed, match="/no/such/lib.so"):
        floe.Reward("x", library="/no/such/lib.so")
    with pytest.raises(floe.FloeError):
        floe.Reward("no-such-reward")


def test_datasets(small, tmp_path):
    import pyarrow.parquet as pq

    ds = floe.to_hf_dataset(small, system="You plan paths.")
    assert len(ds) == len(small)
    assert ds[0]["prompt"][0]["role"] == "system" and ds[0]["prompt"][1]["content"] == floe.prompt(small[0])
    assert floe.Instance.from_json(ds[3]["instance"]) == small[3]
    path = tmp_path / "train.parquet"
    assert floe.write_verl_parquet(str(path), small) == len(small)
    table = pq.read_table(path).to_pylist()
    assert set(table[0]) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert floe.Instance.from_json(table[5]["reward_model"]["ground_truth"]) == small[5]


def test_between_rounds_curriculum_and_engineer():
    history = {"rounds": []}
    cur = floe.Curriculum("fixed")
    config = cur.next_config(history)
    assert config["sizes"]
    instances = floe.round_instances(config, 8, seed=1)
    assert len(instances) == 8 and all(i.optimal_soc is not None for i in instances)
    eng = floe.Engineer("rules")
    reply = eng.design("Round 0. ```json\n" + json.dumps(history) + "\n```")
    assert reply["config"]["sizes"] and isinstance(reply["rationale"], str)
    assert floe.round_instances(reply["config"], 4, seed=2)
    with pytest.raises(floe.ConfigError):
        cur.next_config({"rounds": "nope"})


def test_instances_as_repeated_json_score_as_objects(small):
    texts = _completions(small) * 3
    objects = list(small) * 3
    as_json = [i.to_json() for i in objects]
    mixed = [o if n % 2 else j for n, (o, j) in enumerate(zip(objects, as_json))]
    want = floe.Reward("tiered").score(objects, texts).tolist()
    assert floe.Reward("tiered").score(as_json, texts).tolist() == want
    assert floe.Reward("tiered").score(mixed, texts).tolist() == want
    assert floe.verdict_lines(as_json, texts) == floe.verdict_lines(objects, texts)
    bad = as_json[:]
    bad[3] = bad[15] = "{}"
    with pytest.raises(floe.BadInput, match=r"instances\[3\]"):
        floe.verify_batch(bad, texts)
