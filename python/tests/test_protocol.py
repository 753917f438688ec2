"""The round protocol over trainees written in Python: floe-rounds' driver (the one `floe train`
runs) with a stub whose skill is known, its curricula and replay, resuming, the same folder,
seeds and designs as `floe train`'s own policy, and the experiment's table."""

import json
import os
import subprocess

import pytest

import floe
from floe.rounds import Contender, RunSettings, drive, experiment, read_state

CLI = os.environ.get("FLOE_CLI")

ROUND0 = {
    "sizes": [{"size": s, "data_ratio": 0.25, "hole_ratio": 0.2, "wait_ratio": 0.5} for s in (3, 4, 5, 6)],
    "agents": [2],
    "replay_fraction": 0.0,
}
VALIDATION = {"sizes": [3, 4, 5, 6], "agents": [2], "per_cell": 4, "seed": 3}


def written(inst):
    """An optimal plan of the instance in the paper's answer format."""
    return "\n".join(f"Agent {a}: {m or 'none'}" for a, m in enumerate(floe.solve(inst)["moves"]))


class Skilled:
    """Answers correctly on maps up to its skill and not at all above it; a round of training
    raises the skill by one. Remembers what it was given."""

    def __init__(self, skill=3):
        self.skill = skill
        self.rounds = []

    def describe(self):
        return f"a stub of skill {self.skill}"

    def restore(self, folder, saved):
        if saved is not None:
            with open(os.path.join(folder, "skill.txt")) as f:
                self.skill = int(f.read())
        return saved

    def warm_start(self):
        return None

    def train(self, round):
        self.rounds.append(round)
        self.skill += 1
        n = len(round["instances"])
        return {
            "samples": [[i, 1.0, i % 2 == 0] for i in range(n)],
            "steps": [{"phase": "grpo", "round": round["round"], "step": round["grpo_steps"]}],
            "grpo_steps": 1,
            "figures": {"stub": True},
        }

    def answer(self, instances):
        return [written(i) if i.width <= self.skill else "" for i in instances]

    def save(self, stage, folder, state):
        with open(os.path.join(folder, "skill.txt"), "w") as f:
            f.write(str(self.skill))

    def details(self):
        return {"skill": self.skill}


def settings(**over):
    base = dict(rounds=3, epochs=1, samples=8, seed=5, engineer="fixed", round0=ROUND0, validation=VALIDATION)
    return RunSettings(**{**base, **over})


def test_a_python_trainee_gets_the_protocol(tmp_path):
    out = str(tmp_path / "run")
    stub = Skilled()
    cfg = settings(curriculum="sec", curriculum_params={"base": ROUND0})
    state = drive(stub, cfg, out, model="stub-1", say=lambda _: None)
    # Before training: sizes up to 3 of 3..6; each round one more.
    assert [e["valid"] for e in state.evals] == [0.25, 0.5, 0.75, 1.0]
    assert [d["source"] for d in state.designs] == ["round0", "curriculum", "curriculum"]
    # Round r's instances are floe train's: round_instances with round_seed(seed, r).
    for rnd, rec in zip(stub.rounds, state.history["rounds"]):
        again = floe.round_instances(rec["config"], 8, seed=floe.round_seed(5, rnd["round"]))
        assert rnd["instances"] == again and rnd["seed"] == floe.round_seed(5, rnd["round"])
    # The count per size that the next design read: round 1 left size 6 unanswered.
    per = state.history["rounds"][1]["results"]
    assert [s["valid_rate"] for s in per] == [1.0, 1.0, 1.0, 0.0] and per[3]["failures"] == {"parse_error": 4}
    for f in ("config.json", "state.json", "steps.jsonl", "rounds.jsonl", "eval.md", "eval.json", "validation/round-2.md"):
        assert os.path.exists(os.path.join(out, f)), f
    assert read_state(out) == state
    # config.json: the run's record, written and read by floe-rounds.
    record = floe.run_record(out)
    assert record["model"] == os.path.abspath("stub-1") and record["settings"] == cfg.to_dict()
    assert "| 2 | 100.00 / " in open(os.path.join(out, "eval.md")).read()
    lines = [json.loads(l) for l in open(os.path.join(out, "rounds.jsonl"))]
    assert [l["stage"] for l in lines] == ["untrained", "round 0", "round 1", "round 2"]
    assert lines[1]["stub"] is True and lines[1]["data_seed"] == floe.round_seed(5, 0)
    # A folder that holds a run is refused, and resumed only with the same settings.
    with pytest.raises(floe.ConfigError, match="holds a run"):
        drive(Skilled(), cfg, out, model="stub-1", say=lambda _: None)
    with pytest.raises(floe.ConfigError, match="model differ"):
        drive(Skilled(), cfg, out, model="stub-2", resume=True, say=lambda _: None)
    done = drive(Skilled(), cfg, out, model="stub-1", resume=True, say=lambda _: None)
    assert done.rounds_done == 3 and done.evals == state.evals


def test_replay_and_a_trainee_that_fails(tmp_path):
    # PLR replays half of each round after the first from the instances played before.
    stub = Skilled()
    cfg = settings(curriculum="plr", curriculum_params={"base": ROUND0, "replay_fraction": 0.5})
    state = drive(stub, cfg, str(tmp_path / "plr"), say=lambda _: None)
    assert [r["replayed"] for r in stub.rounds] == [0, 4, 4]
    assert len(state.replay["entries"]) == 8 + 4 + 4
    assert all(e["samples"] >= 1 for e in state.replay["entries"])

    class Broken(Skilled):
        def train(self, round):
            raise RuntimeError("the trainer ran out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        drive(Broken(), settings(), str(tmp_path / "broken"), say=lambda _: None)

    class Lying(Skilled):
        def answer(self, instances):
            return ["x"]

    with pytest.raises(floe.ConfigError, match="1 texts for 16 instances"):
        drive(Lying(), settings(), str(tmp_path / "lying"), say=lambda _: None)


@pytest.mark.skipif(not CLI, reason="FLOE_CLI is not set")
def test_floe_train_and_a_python_trainee_write_the_same_protocol(tmp_path):
    """One protocol through floe's own policy (`floe train`) and through the Python stub: the
    same files, round seeds, data and designs."""
    fixed = {"name": "fixed", "params": {"config": ROUND0}}
    train_cfg = {
        "seed": 5,
        "warm_start": {"samples": 64, "steps": 2, "batch_size": 16, "data": ROUND0},
        "rounds": {"rounds": 3, "epochs": 1, "samples": 8, "round0": ROUND0, "curriculum": fixed, "engineer": None},
        "validation": VALIDATION,
    }
    path = tmp_path / "train.json"
    path.write_text(json.dumps(train_cfg))
    rust = tmp_path / "rust"
    got = subprocess.run([CLI, "train", "--config", str(path), "--out", str(rust)], capture_output=True, text=True)
    if "is not in this build" in got.stderr:
        pytest.skip("FLOE_CLI was built without the train feature")
    assert got.returncode == 0, got.stderr
    py = tmp_path / "python"
    drive(Skilled(), settings(), str(py), model="stub-1", say=lambda _: None)
    protocol_files = lambda d: sorted(  # noqa: E731
        os.path.relpath(os.path.join(r, f), d)
        for r, _, fs in os.walk(d)
        for f in fs
        if not f.endswith((".safetensors", ".png", ".txt"))
    )
    # floe train warm-starts and validates that stage too; the stub has no warm start.
    rust_files = protocol_files(rust)
    rust_files.remove("validation/warm-start.jsonl")
    assert rust_files == protocol_files(py)
    a, b = read_state(str(rust)), read_state(str(py))
    assert a.designs == b.designs
    assert [r["config"] for r in a.history["rounds"]] == [r["config"] for r in b.history["rounds"]]
    seeds = lambda d: [(l.get("data_seed"), l.get("config")) for l in map(json.loads, open(d / "rounds.jsonl"))]  # noqa: E731
    assert [s for s in seeds(rust) if s[0] is not None] == [s for s in seeds(py) if s[0] is not None]
    assert len([s for s in seeds(py) if s[0] is not None]) == 3


def test_an_experiment_over_python_trainees_prints_the_table(tmp_path):
    class Learner(Skilled):
        """Learns one size a round under `sec`, none under `fixed` (a design that matters)."""

        def __init__(self, contender):
            super().__init__(skill=3)
            self.learns = contender is not None and contender.name != "fixed"

        def train(self, round):
            out = super().train(round)
            self.skill -= 0 if self.learns else 1
            return out

    both = (Contender("fixed"), Contender("sec", curriculum="sec", curriculum_params={"base": ROUND0}))

    def run(make, rounds=2, contenders=both, seeds=(0, 1)):
        return experiment(
            make,
            settings(rounds=rounds),
            out=str(tmp_path / "x"),
            contenders=list(contenders),
            seeds=list(seeds),
            suite={"agents": [2], "min_size": 3, "max_size": 5, "wait_ratios": [0.5], "per_cell": 3},
            say=lambda _: None,
        )

    table = run(lambda contender, seed, folder: Learner(contender))
    assert "| contender | 2 agents | all |" in table
    # 9 suite instances on 3x3..5x5: the start answers 3x3, sec after two rounds all of them.
    assert "| warm start | 33.33 ± " in table and "| sec | 100.00 ± 0.00" in table
    assert "| fixed − warm start | +0.00 ± 0.00" in table
    assert any(l.startswith("| sec | +66.67 ±") and l.endswith("yes, better |") for l in table.splitlines()), table
    assert open(tmp_path / "x" / "table.md").read() == table
    assert (tmp_path / "x" / "warm" / "suite-outcomes.json").is_file()
    # floe-rounds' loop resumes: the start resumes itself, the runs' outcomes are read back, and no
    # run is trained or answers again.
    made = []
    assert run(lambda contender, seed, folder: made.append(folder) or Skilled(skill=0)) == table
    assert made == [str(tmp_path / "x" / "warm")]
    with pytest.raises(floe.ConfigError, match="holds another experiment"):
        run(lambda contender, seed, folder: Skilled(), rounds=3, contenders=[Contender("fixed")], seeds=[0])


def test_fixed_random_and_best_of_n_run_for_a_python_trainee(tmp_path):
    """floe-rounds' designs that are no curriculum or engineer run for any trainee: a random
    configuration kept from round 0 on, and the hindsight search over 4 designs a round."""
    contenders = [
        Contender("fixed"),
        Contender("fixed-random", design="fixed-random"),
        Contender("best-of-n", design="best-of-n"),
    ]
    out = tmp_path / "x"
    table = experiment(
        lambda contender, seed, folder: Skilled(),
        settings(rounds=2),
        out=str(out),
        contenders=contenders,
        seeds=[0],
        suite={"agents": [2], "min_size": 3, "max_size": 5, "wait_ratios": [0.5], "per_cell": 3},
        say=lambda _: None,
    )
    assert "| fixed-random |" in table and "| best-of-n |" in table
    drawn = read_state(str(out / "fixed-random" / "seed-0"))
    configs = [r["config"] for r in drawn.history["rounds"]]
    assert configs[0] == configs[1] != ROUND0 and drawn.designs[0]["source"] == "round0"
    best = out / "best-of-n" / "seed-0"
    choices = json.load(open(best / "choices.json"))
    assert [c["round"] for c in choices] == [1] and len(choices[0]["valid"]) == 4
    assert all((best / "round-1" / f"candidate-{k}" / "state.json").is_file() for k in range(4))
    chosen = read_state(str(best / "round-1" / f"candidate-{choices[0]['chosen']}"))
    assert chosen.rounds_done == 2 and chosen.history["rounds"][1]["config"] == choices[0]["config"]
    with pytest.raises(floe.BadInput, match="designs its rounds itself"):
        Contender("x", curriculum="sec", design="best-of-n")
    with pytest.raises(floe.BadInput, match="own, fixed-random or best-of-n"):
        Contender("x", design="random")


def test_paired_difference_is_the_experiments():
    # Two seeds of a against one shared start b on three instances: every (seed, instance) pair.
    a, b = [[True, False, True], [True, True, False]], [[False, False, True]]
    mean, se = floe.paired_difference(a, b)
    assert abs(mean - 100 * (1 + 0 + 0 + 1 + 1 - 1) / 6) < 1e-9 and se > 0
    assert floe.paired_difference(b, a)[0] == -mean
    assert floe.paired_difference(a, a) == (0.0, 0.0)
    with pytest.raises(floe.BadInput):
        floe.paired_difference(a, [[True, False]])


def test_the_run_folder_names_a_language_models_folders(tmp_path):
    """Where a Hugging Face trainee keeps its model after each stage, and which one a resumed
    run continues from: the run folder's layout, floe-rounds'."""
    from floe._floe import model_folder, resume_model, trainer_folder

    out = str(tmp_path)
    # A trainer's own files: trl/round-<r>, verl/warm-start, its folder itself.
    assert trainer_folder(out, "trl", "round 2") == os.path.join(out, "trl", "round-2")
    assert trainer_folder(out, "verl", "warm start") == os.path.join(out, "verl", "warm-start")
    assert trainer_folder(out, "verl") == os.path.join(out, "verl")
    assert trainer_folder(out, "verl", "untrained") is None
    with pytest.raises(floe.BadInput, match="trl or verl"):
        trainer_folder(out, "deepspeed")
    assert model_folder(out, "round 2") == os.path.join(out, "round-2")
    assert model_folder(out, "warm start") == os.path.join(out, "warm-start")
    assert model_folder(out, "untrained") is None
    with pytest.raises(floe.BadInput, match="unknown stage"):
        model_folder(out, "round two")
    assert resume_model(out, None) is None
    assert resume_model(out, {"rounds_done": 3, "warm_start_done": True}) == os.path.join(out, "round-2")
    # The warm start's folder only when it was finished and saved.
    assert resume_model(out, {"rounds_done": 0, "warm_start_done": True}) is None
    os.mkdir(os.path.join(out, "warm-start"))
    assert resume_model(out, {"rounds_done": 0, "warm_start_done": True}) == os.path.join(out, "warm-start")
    assert resume_model(out, {"rounds_done": 0, "warm_start_done": False}) is None
