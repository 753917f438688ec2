"""floe.rounds: GRPO rounds with TRL on the CPU with a tiny model, the trainee as its own
environment engineer, the run folder that `floe engineer --run` reads, resuming after a kill,
and the pieces (the engineer's handling of bad replies, the validation count)."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import floe

from floe.rounds import ModelEngineer, RunSettings, read_state, run_rounds

# The loop needs TRL, torch and xgrammar (scripts/python.sh installs them unless FLOE_SKIP_TRL=1).
needs_trl = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("trl", "torch", "xgrammar")),
    reason="TRL, torch or xgrammar is not installed",
)

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "trl_grpo.py")
CLI = os.environ.get("FLOE_CLI")

LIMITS = {"min_size": 3, "max_size": 4, "agents": [2], "max_sizes": 2}
TRL = {
    "max_steps": 2,
    "per_device_train_batch_size": 4,
    "num_generations": 2,
    "max_completion_length": 24,
    "learning_rate": 1e-3,
    "use_cpu": True,
    "bf16": False,
    "dataloader_num_workers": 0,
}
SEED = 1
SETTINGS = {
    "seed": SEED,
    "rounds": 2,
    "epochs": 1,
    "samples": 8,
    "design_limits": LIMITS,
    "validation": {"sizes": [3, 4], "agents": [2], "per_cell": 2},
    "eval_batch": 4,
    # floe's grammar bounds a reply to about 450 characters (one token each here), so one
    # attempt always ends; the schema is tried on its own below.
    "engineer_constraint": "grammar",
    "engineer_max_tokens": 560,
    "engineer_retries": 0,
    "trl": TRL,
}


def _example():
    spec = importlib.util.spec_from_file_location("trl_grpo", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """The TRL example's tiny random Llama and character tokenizer, saved as a model folder, with
    room for an engineer's context (one token a character)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    ex = _example()
    tok = ex.char_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    d = str(tmp_path_factory.mktemp("tiny-model"))
    LlamaForCausalLM(config).save_pretrained(d)
    tok.save_pretrained(d)
    return d


def _history():
    config, _ = floe.round0_config(limits=LIMITS)
    results = [
        {"size": 3, "valid_rate": 0.5, "optimal_rate": 0.25, "instances": 4, "failures": {"vertex_conflict": 2}},
        {"size": 4, "valid_rate": 0.0, "optimal_rate": 0.0, "instances": 4, "failures": {"hole": 4}},
    ]
    return {"rounds": [{"round": 0, "config": config, "results": results}]}


def _within_limits(config):
    assert config["agents"] == [2]
    assert 1 <= len(config["sizes"]) <= LIMITS["max_sizes"]
    assert abs(sum(s["data_ratio"] for s in config["sizes"]) - 1) < 1e-6
    for s in config["sizes"]:
        assert LIMITS["min_size"] <= s["size"] <= LIMITS["max_size"]
        assert 0 <= s["hole_ratio"] <= 0.4 and 0 <= s["wait_ratio"] <= 1


# The whole loop, through the command line: killed while the trainee designs round 1, resumed.


@pytest.fixture(scope="module")
def killed_and_resumed(tiny_model_dir, tmp_path_factory):
    """`python -m floe.rounds` on the tiny model: round 0 (2 GRPO steps), killed once the trainee
    is asked for round 1's configuration, then resumed to the end of round 1."""
    base = tmp_path_factory.mktemp("rounds")
    out = str(base / "run")
    cfg_path = base / "run.json"
    cfg_path.write_text(json.dumps(SETTINGS))
    cmd = [sys.executable, "-m", "floe.rounds", "--model", tiny_model_dir, "--out", out, "--config", str(cfg_path)]
    context = os.path.join(out, "engineer", "round-1", "context.md")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while not os.path.exists(context) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    first, _ = proc.communicate()
    assert os.path.exists(context), first
    with open(os.path.join(out, "state.json")) as f:
        killed = json.load(f)
    round0 = open(os.path.join(out, "round-0", "model.safetensors"), "rb").read()
    steps_then = open(os.path.join(out, "steps.jsonl")).read()
    resumed = subprocess.run(
        [sys.executable, "-m", "floe.rounds", "--out", out, "--resume"], capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    return {"out": out, "killed": killed, "round0": round0, "steps_then": steps_then, "log": resumed.stderr}


@needs_trl
def test_one_round_then_the_trainee_designs_round_1(killed_and_resumed):
    out = killed_and_resumed["out"]
    with open(os.path.join(out, "state.json")) as f:
        state = json.load(f)
    assert state["rounds_done"] == 2 and state["grpo_steps"] == 4
    # Round 0: floe's default clamped into the limits; round 1: the trainee's reply, adopted.
    r0, r1 = state["designs"]
    assert r0["source"] == "default" and r1["round"] == 1
    assert r1["source"] == "engineer", r1["notes"]
    rounds = state["history"]["rounds"]
    _within_limits(rounds[0]["config"])
    _within_limits(rounds[1]["config"])
    eng = os.path.join(out, "engineer", "round-1")
    applied = json.load(open(os.path.join(eng, "config.json")))
    assert applied == rounds[1]["config"]
    # The reply was written under floe's grammar: the first one parses as the reply object.
    reply = json.loads(open(os.path.join(eng, "reply-1.txt")).read())
    assert set(reply) == {"rationale", "config"}
    assert open(os.path.join(eng, "rationale.txt")).read().strip() == r1["rationale"]
    context = open(os.path.join(eng, "context.md")).read()
    assert "failures on the validation set after round 0" in context and "```json limits" in context
    assert "engineer answered in" in open(os.path.join(eng, "log.txt")).read()
    # The validation: failures by kind per size on the fixed set (2 instances of each size),
    # before training (the base model) and after each round.
    lines = [json.loads(l) for l in open(os.path.join(out, "rounds.jsonl"))]
    assert [l["stage"] for l in lines] == ["untrained", "round 0", "round 1"]
    for line in lines:
        assert [s["size"] for s in line["per_size"]] == [3, 4]
        assert all(s["instances"] == 2 for s in line["per_size"])
        for s in line["per_size"]:
            assert sum(s["failures"].values()) == round(2 * (1 - s["valid_rate"]))
    for line in lines[1:]:
        assert line["grpo_steps"] == 2 and line["generated_tokens"] > 0
        assert line["data_seed"] == floe.round_seed(SEED, line["round"])
    for name in ("round-0", "round-1", "validation/round-1.md", "eval.md", "eval.json", "config.json"):
        assert os.path.exists(os.path.join(out, name)), name
    assert "| agents | 3x3 | 4x4 | mean |" in open(os.path.join(out, "eval.md")).read()


@needs_trl
def test_a_killed_run_resumes_after_its_last_finished_round(killed_and_resumed):
    out, killed = killed_and_resumed["out"], killed_and_resumed["killed"]
    # Killed while round 1 was being designed: round 0 was done, and is not done again.
    assert killed["rounds_done"] == 1
    assert "(resumed)" in killed_and_resumed["log"]
    assert open(os.path.join(out, "round-0", "model.safetensors"), "rb").read() == killed_and_resumed["round0"]
    steps = [json.loads(l) for l in open(os.path.join(out, "steps.jsonl"))]
    assert open(os.path.join(out, "steps.jsonl")).read().startswith(killed_and_resumed["steps_then"])
    assert [(s["round"], s["step"]) for s in steps if "loss" in s] == [(0, 0), (0, 1), (1, 2), (1, 3)]
    assert [json.loads(l).get("round") for l in open(os.path.join(out, "rounds.jsonl"))] == [None, 0, 1]
    # Given again, the settings must be the run's; without --resume the folder is refused.
    model = json.load(open(os.path.join(out, "config.json")))["model"]
    with pytest.raises(floe.ConfigError, match="settings differ"):
        run_rounds(model, out, RunSettings.from_dict({**SETTINGS, "samples": 16}), resume=True)
    with pytest.raises(floe.ConfigError, match="holds a run"):
        run_rounds(model, out, RunSettings.from_dict(SETTINGS), say=lambda _: None)


@needs_trl
@pytest.mark.skipif(not CLI, reason="FLOE_CLI is not set")
def test_floe_engineer_reads_the_run_folder(killed_and_resumed):
    got = subprocess.run([CLI, "engineer", "--run", killed_and_resumed["out"]], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    text = got.stdout
    assert "# Round 1" in text
    for f in ("context.md", "reply.txt", "reply-1.txt", "config.json", "rationale.txt", "log.txt"):
        assert f"## {f}" in text, f
    # What --ask gives an engineer again: the limits the run's engineer was given.
    limits = json.load(open(os.path.join(killed_and_resumed["out"], "engineer", "round-1", "limits.json")))
    assert limits["max_replay_fraction"] == 0.0 and limits["agents"]
    assert "failures on the validation set after round 0" in text


@needs_trl
def test_python_m_floe_rounds_with_sec_runs_on_the_cpu(tiny_model_dir, tmp_path):
    """A curriculum instead of an engineer: `sec` designs every round of a language model."""
    base = floe.round0_config(limits=LIMITS)[0]
    cfg = {**SETTINGS, "engineer": "fixed", "curriculum_params": {"base": base}, "trl": {**TRL, "max_steps": 1}}
    path = tmp_path / "sec.json"
    path.write_text(json.dumps(cfg))
    out = str(tmp_path / "run")
    cmd = [sys.executable, "-m", "floe.rounds", "--model", tiny_model_dir, "--out", out, "--config", str(path)]
    got = subprocess.run(cmd + ["--curriculum", "sec"], capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    state = read_state(out)
    assert state.rounds_done == 2 and [d["source"] for d in state.designs] == ["curriculum", "curriculum"]
    assert json.load(open(os.path.join(out, "config.json")))["settings"]["curriculum"] == "sec"
    assert not os.path.exists(os.path.join(out, "engineer"))
    for r in state.history["rounds"]:
        assert {s["size"] for s in r["config"]["sizes"]} <= {3, 4}


@needs_trl
def test_a_warm_start_lowers_the_answer_loss_and_is_a_stage(tiny_model_dir, tmp_path):
    """Supervised fine-tuning on optimal plans before round 0, the loss on the answer's tokens
    only: its loss falls, and the driver validates it as the stage `warm start`."""
    warm = {"steps": 8, "samples": 16, "learning_rate": 1e-2, "batch_size": 4}
    cfg = {**SETTINGS, "rounds": 1, "engineer": "fixed", "warm_start": warm, "trl": {**TRL, "max_steps": 1}}
    out = str(tmp_path / "run")
    state = run_rounds(tiny_model_dir, out, RunSettings.from_dict(cfg), say=lambda _: None)
    assert [e["stage"] for e in state.evals] == ["untrained", "warm start", "round 0"]
    steps = [json.loads(l) for l in open(os.path.join(out, "steps.jsonl"))]
    sft = [s for s in steps if s["phase"] == "warm_start"]
    assert [s["step"] for s in sft] == list(range(8))
    assert sft[-1]["loss"] < 0.8 * sft[0]["loss"], [s["loss"] for s in sft]
    assert os.path.exists(os.path.join(out, "warm-start", "model.safetensors"))
    answers = [json.loads(l) for l in open(os.path.join(out, "validation", "warm-start.jsonl"))]
    assert len(answers) == 4 and all({"answer", "valid", "failure"} <= set(a) for a in answers)
    lines = [json.loads(l) for l in open(os.path.join(out, "rounds.jsonl"))]
    assert [l["stage"] for l in lines] == ["untrained", "warm start", "round 0"]
    with pytest.raises(floe.ConfigError, match="warm_start"):
        RunSettings.from_dict({**SETTINGS, "warm_start": {"steps": 0, "samples": 4}})


def test_every_written_form_of_a_warm_start_plan_is_read_as_the_optimal_plan():
    """The warm start's plans in each answer form (words, letters, coordinates from the start
    cell, a wait repeating a cell) are read back by floe's verifier as valid and optimal; an
    unknown form is refused."""

    def written_plan(inst, form):
        return floe.write_answer(inst, floe.solve(inst)["moves"], form)

    config = {"sizes": [{"size": s, "data_ratio": 0.5, "hole_ratio": 0.3, "wait_ratio": 0.7} for s in (3, 5)], "agents": [2, 3]}
    instances = floe.round_instances(config, 40, seed=3)
    for form in ("words", "letters", "coordinates"):
        texts = [written_plan(inst, form) for inst in instances]
        v = floe.verify_batch(instances, texts)
        assert v["valid"].all() and v["optimal"].all(), (form, texts[:2])
    text = written_plan(instances[0], "coordinates")
    start = json.loads(instances[0].to_json())["agents"][0]["start"]
    assert text.startswith(f"Agent 0: ({start[0]}, {start[1]})"), text
    assert any(" -> (" in t and "WAIT" not in t for t in texts)
    with pytest.raises(floe.ConfigError, match="coordinates"):
        RunSettings.from_dict({**SETTINGS, "warm_start": {"steps": 1, "samples": 4, "answer": "cells"}})
    # The warm start's data: its configuration's instances from the warm start's seed (floe
    # train's), each with its optimal plan in the form asked; the seed returned is its trainer's.
    warm = {"steps": 1, "samples": 12, "config": config, "answer": "coordinates"}
    seed, data = RunSettings(seed=7, warm_start=warm).warm_start_data()
    assert seed == floe.trainer_seed(floe.warm_start_seed(7)) < 2**31
    assert floe.warm_start_seed(7) not in (floe.round_seed(7, 0), floe.warm_start_seed(8))
    assert [i for i, _ in data] == floe.round_instances(config, 12, seed=floe.warm_start_seed(7))
    assert [p for _, p in data] == [written_plan(i, "coordinates") for i, _ in data]
    # Without a configuration of its own: round 0's, else the default within the limits.
    seed, data = RunSettings(seed=7, design_limits=LIMITS, warm_start={"steps": 1, "samples": 4}).warm_start_data()
    assert [i for i, _ in data] == floe.round_instances(floe.round0_config(limits=LIMITS)[0], 4, seed=floe.warm_start_seed(7))
    assert RunSettings().warm_start_data()[1] == []
    # floe.write_answer, which writes them, refuses what is not a plan of the instance.
    moves = floe.solve(instances[0])["moves"]
    with pytest.raises(floe.BadInput, match="not an answer form"):
        floe.write_answer(instances[0], moves, "cells")
    with pytest.raises(floe.BadInput, match="is not a move"):
        floe.write_answer(instances[0], ["RX"] + moves[1:])
    with pytest.raises(floe.BadInput, match="move lists for"):
        floe.write_answer(instances[0], moves[:1])


@needs_trl
def test_verls_warm_start_is_trls_and_round_0_starts_from_it(tiny_model_dir, tmp_path):
    """floe.verl's warm start is the same supervised step, in process before verl's first round:
    its loss falls, its model is saved in `warm-start/`, and round 0's verl command trains that
    model; a resumed run before round 0 answers with it."""
    from floe.verl import VerlTrainee

    warm = {"steps": 6, "samples": 12, "learning_rate": 1e-2, "batch_size": 4}
    base = {k: v for k, v in SETTINGS.items() if k != "trl"}  # TRL's arguments are not verl's
    cfg = RunSettings.from_dict({**base, "samples": 8, "engineer": "fixed", "warm_start": warm})
    out = str(tmp_path / "run")
    t = VerlTrainee(tiny_model_dir, out, cfg, {"data.train_batch_size": 4, "trainer.save_freq": 1}, say=lambda _: None)
    figures = t.warm_start()
    losses = [s["loss"] for s in figures["steps"]]
    assert len(losses) == 6 and losses[-1] < 0.8 * losses[0], losses
    warm_dir = os.path.join(out, "warm-start")
    assert os.path.exists(os.path.join(warm_dir, "model.safetensors")) and t.current == warm_dir
    assert f"actor_rollout_ref.model.path={warm_dir}" in t.trainer_command(0, 1)
    again = VerlTrainee(tiny_model_dir, out, cfg, {"data.train_batch_size": 4, "trainer.save_freq": 1}, say=lambda _: None)
    again.restore(out, {"rounds_done": 0, "warm_start_done": True})
    assert again.current == warm_dir
    # Without a warm start, round 0 trains the given model.
    plain = RunSettings.from_dict({**base, "samples": 8, "engineer": "fixed"})
    bare = VerlTrainee(tiny_model_dir, str(tmp_path / "bare"), plain, {"data.train_batch_size": 4, "trainer.save_freq": 1})
    assert bare.warm_start() is None and bare.model_before(0) == os.path.abspath(tiny_model_dir)


# The engineer's handling of replies, with real models.


@needs_trl
def test_a_garbage_answering_engineer_leaves_the_previous_configuration(tiny_model_dir, tmp_path):
    asked = []

    def garbage(request):
        asked.append(request)
        return "the best plan is: bigger maps!!"

    eng = floe.Engineer.from_model(garbage, retries=2)
    cfg = RunSettings.from_dict({**SETTINGS, "trl": {**TRL, "max_steps": 1}})
    state = run_rounds(tiny_model_dir, str(tmp_path / "run"), cfg, engineer=eng, say=lambda _: None)
    r1 = state.designs[1]
    assert r1["source"] == "previous"
    assert any("no usable configuration in 3 attempt(s)" in n for n in r1["notes"]), r1["notes"]
    rounds = state.history["rounds"]
    assert rounds[1]["config"] == rounds[0]["config"]
    eng_dir = tmp_path / "run" / "engineer" / "round-1"
    assert [(eng_dir / f"reply-{i}.txt").read_text() for i in (1, 2, 3)] == ["the best plan is: bigger maps!!"] * 3
    assert (eng_dir / "rationale.txt").read_text() == ""
    assert json.loads((eng_dir / "config.json").read_text()) == rounds[0]["config"]
    # Each attempt carried the reply's schema, derived from the run's limits.
    schema = asked[0]["schema"]["properties"]["config"]["properties"]["sizes"]
    assert schema["maxItems"] == 2 and schema["items"]["properties"]["size"]["maximum"] == 4
    assert len({r["seed"] for r in asked}) == 3


def test_replies_are_clamped_retried_or_refused():
    replies = iter(
        [
            "not json",
            json.dumps(
                {
                    "rationale": "larger maps",
                    "config": {
                        "sizes": [{"size": 9, "data_ratio": 2, "hole_ratio": 0.9, "wait_ratio": 0.5}],
                        "agents": [2, 7],
                    },
                }
            ),
        ]
    )
    got = floe.Engineer.from_model(lambda req: next(replies)).next_config(_history(), limits=LIMITS)
    assert got["source"] == "engineer" and got["rationale"] == "larger maps"
    assert got["replies"][0] == "not json" and len(got["replies"]) == 2
    assert got["config"]["sizes"] == [{"size": 4, "data_ratio": 1.0, "hole_ratio": 0.4, "wait_ratio": 0.5}]
    assert got["config"]["agents"] == [2]
    assert any("reply 1 refused" in n for n in got["notes"]), got["notes"]
    assert any("size 9 is outside 3..=4" in n for n in got["notes"]), got["notes"]

    # A model that raises is the caller's error, not an unusable reply.
    def broken(request):
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        floe.Engineer.from_model(broken).next_config(_history(), limits=LIMITS)
    with pytest.raises(floe.BadInput, match="callable"):
        floe.Engineer.from_model("not a model")


@needs_trl
@pytest.mark.parametrize("constraint", ["schema", "grammar"])
def test_a_random_model_under_the_constraint_writes_a_reply_that_parses(tiny_model_dir, constraint):
    from floe.rounds import load_model

    model, tok = load_model(tiny_model_dir)
    writer = ModelEngineer(lambda: (model, tok), max_tokens=700, constraint=constraint)
    got = floe.Engineer.from_model(writer, retries=0, seed=3).next_config(_history(), limits=LIMITS)
    assert got["source"] == "engineer", got["notes"]
    reply = json.loads(got["replies"][0])
    assert set(reply) == {"rationale", "config"}
    _within_limits(got["config"])
    assert writer.calls and writer.calls[0]["tokens"] > 0


@needs_trl
def test_bounded_strings_keep_replies_json():
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string as accepts

    from floe.rounds.engineers import bounded_strings

    # The schema floe asks a model engineer for, as the model receives it.
    echo = floe.Engineer.from_model(lambda request: json.dumps(request["schema"]), retries=0)
    reply_schema = json.loads(echo.next_config(_history(), limits=LIMITS)["replies"][0])
    assert reply_schema["properties"]["rationale"] == {"type": "string", "maxLength": 240}
    # xgrammar's own rule for a bounded string lets a tab in; the pattern does not.
    tab = '{"rationale": "a\tb", "config": {"sizes": [{"size": 3, "data_ratio": 1, "hole_ratio": 0, "wait_ratio": 0}], "agents": [2]}}'
    plain = tab.replace("\t", " ")
    loose = xgr.Grammar.from_json_schema(json.dumps(reply_schema), any_whitespace=False)
    tight = xgr.Grammar.from_json_schema(json.dumps(bounded_strings(reply_schema)), any_whitespace=False)
    assert accepts(loose, tab) and not accepts(tight, tab)
    assert accepts(tight, plain) and not accepts(tight, plain.replace("a b", "a" * 241))


# The validation count.


def test_the_validation_count_is_floe_verifys_per_size(small):
    insts = floe.generate(2, 3, count=3, seed=5) + list(small[:4])
    solved = ["\n".join(f"Agent {i}: {m or 'none'}" for i, m in enumerate(floe.solve(x)["moves"])) for x in insts]
    answers = [solved[0], "nothing", solved[2], solved[3], "Agent 0: UUUU", solved[5], "garbage"]
    got = floe.validation_counts(insts, answers)
    # By hand from floe.verify: cells per (agents, size), failures by kind pooled per size.
    expect = {}
    for inst, a in zip(insts, answers):
        v = floe.verify(inst, a)
        c = expect.setdefault((inst.num_agents, inst.width), {"n": 0, "valid": 0, "optimal": 0, "failures": {}})
        c["n"] += 1
        c["valid"] += bool(v["valid"])
        c["optimal"] += bool(v["valid"] and v["optimal"])
        if not v["valid"]:
            kind = v["failure"]["kind"]
            c["failures"][kind] = c["failures"].get(kind, 0) + 1
    assert [(c["agents"], c["size"]) for c in got["cells"]] == sorted(expect)
    for c in got["cells"]:
        e = expect[(c["agents"], c["size"])]
        assert (c["instances"], c["valid"], c["optimal"], c["failures"]) == (e["n"], e["valid"], e["optimal"], e["failures"])
    assert [s["size"] for s in got["per_size"]] == [3, 5]
    s5 = got["per_size"][1]
    assert s5["instances"] == 4 and s5["valid_rate"] == expect[(3, 5)]["valid"] / 4
    assert set(floe.FAILURE_KINDS) >= set(s5["failures"])
    with pytest.raises(floe.BadInput):
        floe.validation_counts(insts, answers[:-1])


def test_the_validation_set_is_fixed():
    a = floe.validation_set(sizes=[3, 4], agents=[2, 3], per_cell=2, seed=1)
    assert [(i.num_agents, i.width) for i in a] == [(2, 3), (2, 3), (2, 4), (2, 4), (3, 3), (3, 3), (3, 4), (3, 4)]
    assert a == floe.validation_set(sizes=[3, 4], agents=[2, 3], per_cell=2, seed=1)
    assert a != floe.validation_set(sizes=[3, 4], agents=[2, 3], per_cell=2, seed=2)
    with pytest.raises(floe.BadInput):
        floe.validation_set(sizes=[], per_cell=2)


def test_the_default_reward_is_floe_trains():
    """A run that names no reward gets floe-rounds' default, the one ``floe train`` gets: ``tiered``
    without the partial credit a weak policy farms; parameters alone keep its name."""
    default = floe.default_reward()
    assert default["name"] == "tiered" and default["params"] == {"prefix_credit": 0.0, "goal_credit": 0.0}
    assert RunSettings().reward_spec() == default
    assert RunSettings(reward_params={"invalid": 0.3}).reward_spec()["params"] == {"invalid": 0.3}
    assert RunSettings(reward_params={"invalid": 0.3}).reward_spec()["name"] == "tiered"
    assert RunSettings(reward="tiered").reward_spec() == {"name": "tiered", "params": None, "library": None}
    # What it pays: 0.1 for a plan that stays legal and stops short, as for any other failure.
    inst = floe.generate(2, 4, count=1, seed=3)[0]
    moves = floe.solve(inst)["moves"]
    short = "\n".join(f"Agent {a}: " + " ".join(m[:-1] if a == 0 else m) for a, m in enumerate(moves))
    assert floe.verify_batch([inst], [short])["valid"].tolist() == [False]
    assert floe.Reward(default["name"], default["params"]).score([inst], [short]).tolist() == pytest.approx([0.1])
    assert floe.Reward("tiered").score([inst], [short]).tolist()[0] > 0.1


def test_settings_are_checked():
    with pytest.raises(floe.ConfigError, match="unknown settings: round"):
        RunSettings.from_dict({"round": 3})
    with pytest.raises(floe.ConfigError, match="set by floe"):
        RunSettings(trl={"seed": 3})
    with pytest.raises(floe.ConfigError, match="engineer_constraint"):
        RunSettings(engineer_constraint="regex")
    with pytest.raises(floe.ConfigError, match="samples"):
        RunSettings(samples="many")
    with pytest.raises(floe.ConfigError, match="rounds: at least 1"):
        RunSettings().replace(rounds=0)
    config, notes = floe.round0_config(limits=LIMITS)
    assert [s["size"] for s in config["sizes"]] == [3, 4] and notes
    # Defaults, attributes, a checked copy, and the settings as data.
    c = RunSettings(samples=8)
    assert (c.rounds, c.epochs, c.samples, c.seed, c.engineer, c.trl) == (3, 2, 8, 0, "self", {})
    d = c.replace(seed=5, engineer="fixed")
    assert (d.seed, d.engineer, d.samples, c.seed) == (5, "fixed", 8, 0)
    assert RunSettings.from_dict(d.to_dict()) == d != c
    with pytest.raises(AttributeError):
        c.sample


def test_the_shipped_settings_load():
    """``configs/rounds/*.json``, which the docs and scripts/gpu/llm-rounds.sh name, are settings
    ``--config`` takes: every key known, every value in range."""
    folder = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "rounds")
    names = sorted(os.listdir(folder))
    assert names == ["cpu-learn-credit.json", "cpu-learn.json", "cpu.json", "paper.json", "smollm2-h200.json"]
    for name in names:
        config = RunSettings.from_file(os.path.join(folder, name))
        assert config.rounds >= 2 and config.trl, name
    assert RunSettings.from_file(os.path.join(folder, "cpu.json")).trl["use_cpu"] is True


def test_the_command_lines_read_flags_files_and_the_run_folder(tmp_path, capsys, monkeypatch):
    """floe runs both drivers' command lines whole: help, usage errors and floe's errors as
    exit statuses, the flags over ``--config`` and ``--trl-config``, ``--resume`` alone reading
    the run folder's own model and settings, and the trainee ``make`` returns driven."""
    from floe._floe import command_line

    class Made(Exception):
        pass

    got = []

    def make(a):
        got.append(a)
        raise Made()

    monkeypatch.chdir(tmp_path)
    assert command_line("trl", ["--help"], make) == 0
    assert "python -m floe.rounds" in capsys.readouterr().out and not got
    assert command_line("verl", ["--out", "x", "--bogus"], make) == 2
    assert "--bogus" in capsys.readouterr().err
    assert command_line("trl", ["--out", str(tmp_path)], make) == 2
    assert "error: --model: required" in capsys.readouterr().err
    config, trl = tmp_path / "run.json", tmp_path / "trl.json"
    config.write_text(json.dumps({"rounds": 4, "samples": 9, "trl": {"max_steps": 2, "bf16": False}}))
    trl.write_text(json.dumps({"max_steps": 3}))
    argv = ["--model", "m", "--out", "o", "--config", str(config), "--trl-config", str(trl)]
    flags = ["--rounds", "2", "--engineer", "http://127.0.0.1:9/v1", "--engineer-model", "q", "--resume"]
    with pytest.raises(Made):
        command_line("trl", argv + flags, make)
    a = got.pop()
    assert (a["model"], a["out"], a["resume"], "verl" in a) == ("m", "o", True, False)
    c = a["config"]
    assert (c.rounds, c.samples, c.trl, c.engineer_params) == (2, 9, {"max_steps": 3, "bf16": False}, {"model": "q"})
    # A setting the settings refuse: exit status 2 before any trainee is made.
    config.write_text(json.dumps({"rounds": 4, "sampels": 9}))
    assert command_line("trl", argv, make) == 2 and not got
    assert "unknown settings: sampels" in capsys.readouterr().err
    # verl: the file's overrides, then the given ones as YAML values; a bad one is refused; a dry
    # run's folder is the run folder's dry-run/.
    yaml_file = tmp_path / "verl.yaml"
    yaml_file.write_text("floe: {samples: 1024}\nverl: {trainer.save_freq: 1, trainer.n_gpus_per_node: 1}\n")
    verl = ["--model", "m", "--out", "o", "--verl-config", str(yaml_file), "--dry-run"]
    with pytest.raises(Made):
        command_line("verl", verl + ["trainer.n_gpus_per_node=2", "x.y=[1, a]"], make)
    a = got.pop()
    assert a["verl"] == {"trainer.save_freq": 1, "trainer.n_gpus_per_node": 2, "x.y": [1, "a"]}
    assert (a["config"].samples, a["dry_run"], a["python"], a["out"]) == (1024, True, None, os.path.join("o", "dry-run"))
    assert command_line("verl", verl + ["novalue"], make) == 2
    assert "novalue: a verl override is key=value" in capsys.readouterr().err
    assert command_line("verl", verl + ["data.train_batch_size=2048"], make) == 2 and not got
    assert "fewer than verl's data.train_batch_size 2048" in capsys.readouterr().err
    # --resume alone: the run folder's config.json, the record floe-rounds wrote.
    out = tmp_path / "folder"
    out.mkdir()
    saved = {"model": "/m", "trainer": "verl", "settings": RunSettings(rounds=5, samples=1024).to_dict(), "verl": {"trainer.save_freq": 1}}
    (out / "config.json").write_text(json.dumps(saved))
    with pytest.raises(Made):
        command_line("verl", ["--out", str(out), "--resume"], make)
    a = got.pop()
    assert (a["model"], a["config"].rounds, a["verl"]) == ("/m", 5, {"trainer.save_freq": 1})
    (out / "config.json").write_text(json.dumps({**saved, "settings": {"round": 5}}))
    assert command_line("verl", ["--out", str(out), "--resume"], make) == 2
    assert "unknown settings: round" in capsys.readouterr().err


def test_verls_overrides_are_written_as_hydra_reads_them():
    from floe._floe import hydra_overrides

    values = {"a": [1, 2.5, True, None], "b": "x y", "c": "it's", "d": "true", "e": "m/p-1.5", "f": {"g": 1e-6}}
    assert hydra_overrides(values) == [
        "a=[1,2.5,true,null]", "b='x y'", "c='it\\'s'", "d='true'", "e=m/p-1.5", "f={g:1e-6}",
    ]  # fmt: skip
    assert hydra_overrides({"s": ""}) == ["s=''"]
