"""floe.verl against verl's own classes: a round's parquet read by verl's dataset (through the
class verl's trainer picks for the driver's data configuration), floe's reward reached through
verl's reward loader and reward manager, the driver's overrides composed with verl's Hydra
configuration, and ``--dry-run``'s run folder. scripts/python.sh runs this file in its own
environment, where verl 0.9.1 is installed (python/requirements-verl.txt); elsewhere the tests
that need verl are skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pytest

import floe
from floe.rounds import RunSettings, read_state
from floe.verl import VerlTrainee, hydra_overrides, read_verl_config

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONFIGS = [os.path.join(ROOT, "configs", "verl", f) for f in ("qwen3-4b.yaml", "smollm2-135m.yaml")]
SMALL = CONFIGS[1]
MODEL = os.environ.get("FLOE_HF_MODEL") or os.path.join(ROOT, "third_party", "models", "SmolLM2-135M-Instruct")

needs_verl = pytest.mark.skipif(
    importlib.util.find_spec("verl") is None,
    reason="verl is not installed here (scripts/python.sh installs it in .venv/python-verl and runs this file there)",
)
needs_model = pytest.mark.skipif(
    not os.path.exists(os.path.join(MODEL, "tokenizer.json")),
    reason=f"no tokenizer folder at {MODEL} (scripts/hf-model.py makes it; FLOE_HF_MODEL points elsewhere)",
)


def small_run(out, samples=32, **verl):
    """A dry run of the one-GPU configuration with ``samples`` prompts a round: round 0 written."""
    data, overrides_ = read_verl_config(SMALL)
    cfg = RunSettings.from_dict({**data, "samples": samples})
    run = VerlTrainee(MODEL, str(out), cfg, {**overrides_, **verl}, dry_run=True, say=lambda _: None)
    assert run.run() is None
    return run, run.command


def compose(values: dict):
    """verl's ``ppo_trainer`` configuration with ``values`` as overrides, as its trainer composes it."""
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=hydra_overrides(values))


def answer(moves) -> str:
    letters = {"U": "UP", "D": "DOWN", "L": "LEFT", "R": "RIGHT", "W": "WAIT"}
    return "\n".join(f"Agent {a}: " + " ".join(letters[c] for c in m) for a, m in enumerate(moves))


@needs_verl
@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_overrides_compose_with_verls_configuration(path, tmp_path):
    data, values = read_verl_config(path)
    cfg = RunSettings.from_dict({**data, "samples": max(data.get("samples", 0), 2048)})
    run = VerlTrainee(MODEL, str(tmp_path / "run"), cfg, values, say=lambda _: None)
    composed = compose(run.trainer_overrides(0))
    assert composed.algorithm.adv_estimator == "grpo"
    assert composed.actor_rollout_ref.rollout.name == "vllm"
    assert composed.actor_rollout_ref.rollout.n == values["actor_rollout_ref.rollout.n"]
    assert composed.trainer.nnodes == 1 and composed.trainer.n_gpus_per_node == values["trainer.n_gpus_per_node"]
    assert composed.reward.custom_reward_function.path == "pkg://floe.rewards"
    assert composed.reward.custom_reward_function.name == "compute_score"
    assert composed.actor_rollout_ref.model.path == os.path.abspath(MODEL)
    assert composed.data.train_files.endswith(os.path.join("verl", "round-0", "train.parquet"))
    assert composed.trainer.total_epochs == cfg.epochs


@needs_verl
def test_verl_refuses_a_key_it_does_not_have():
    # The composition is strict: a key verl 0.9.1 does not know (its data.sampler of the
    # curriculum-sampler interface is gone) fails, so the test above would catch one.
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="sampler"):
        compose({"data.sampler.class_path": "floe.verl"})


@needs_verl
@needs_model
def test_the_rounds_parquet_loads_through_verls_dataset(tmp_path):
    from transformers import AutoTokenizer
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import RLHFDataset, get_dataset_class

    run, _ = small_run(tmp_path / "run", samples=40)
    values = run.trainer_overrides(0)
    data_config = compose(values).data
    assert get_dataset_class(data_config) is RLHFDataset
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    ds = create_rl_dataset([values["data.train_files"]], data_config, tokenizer, None, is_train=True)
    assert isinstance(ds, RLHFDataset)
    # The round's instances, as the driver made them (round 0's configuration, its round seed).
    given = run.round
    instances = floe.round_instances(given["config"], 40, seed=floe.round_seed(run.cfg.seed, 0))
    assert instances == given["instances"]
    assert len(ds) == len(instances) == 40
    for i, inst in enumerate(instances):
        item = ds[i]
        assert item["raw_prompt"] == [{"role": "user", "content": floe.prompt(inst)}]
        assert item["data_source"] == floe.datasets.DATA_SOURCE
        assert item["reward_model"]["ground_truth"] == inst.to_json()
        assert item["extra_info"]["index"] == i and item["extra_info"]["split"] == "train"
    # The validation set, as verl's validation data.
    val = create_rl_dataset([values["data.val_files"]], data_config, tokenizer, None, is_train=False)
    assert [v["raw_prompt"][0]["content"] for v in (val[i] for i in range(len(val)))] == [
        floe.prompt(inst) for inst in run.validation
    ]


@needs_verl
@needs_model
def test_verls_reward_path_scores_with_floes_compute_score(tmp_path):
    import torch
    from transformers import AutoTokenizer
    from verl import DataProto
    from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager

    run, _ = small_run(tmp_path / "run")
    config = compose(run.trainer_overrides(0))
    fn = get_custom_reward_fn(config)
    assert fn is not None and fn.args[0].__name__ == "compute_score"
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    manager = load_reward_manager(config, tokenizer)
    assert type(manager).__name__ == "NaiveRewardManager"

    inst = floe.generate(2, 4, count=1, seed=3)[0]
    moves = floe.solve(inst)["moves"]
    correct = answer(moves)
    wrong = answer([moves[0][:-1], *moves[1:]])  # agent 0 stops one move short of its goal
    unparseable = "I cannot solve this."
    verdicts = floe.verify_batch([inst] * 3, [correct, wrong, unparseable])
    assert list(verdicts["optimal"]) == [True, False, False] and list(verdicts["valid"]) == [True, False, False]
    # The run names no reward: floe-rounds' default, the one floe train gets.
    default = floe.default_reward()
    expected = floe.Reward(default["name"], default["params"]).score([inst] * 3, [correct, wrong, unparseable]).tolist()
    assert len(set(expected)) == 3  # three different tiers

    got = []
    for text in (correct, wrong, unparseable):
        ids = torch.tensor(tokenizer(text, add_special_tokens=False)["input_ids"])
        pad = torch.full((4,), tokenizer.pad_token_id or 0)
        responses = torch.cat([ids, pad])[None]
        mask = torch.cat([torch.ones_like(ids), torch.zeros_like(pad)])[None]
        data = DataProto.from_dict(
            tensors={"responses": responses, "attention_mask": mask},
            non_tensors={
                "data_source": np.array([floe.datasets.DATA_SOURCE], dtype=object),
                "reward_model": np.array([{"ground_truth": inst.to_json(), "style": "rule"}], dtype=object),
                "extra_info": np.array([{"index": 0, "split": "train"}], dtype=object),
            },
        )
        out = manager.loop.run_until_complete(manager.run_single(data))
        got.append(out["reward_score"])
        # The loaded function is floe's compute_score itself.
        assert fn(data_source=floe.datasets.DATA_SOURCE, solution_str=text, ground_truth=inst.to_json()) == out[
            "reward_score"
        ]
    assert got == pytest.approx(expected, abs=0) and got[0] == 1.0


@needs_verl
def test_the_runs_reward_plugin_reaches_verls_reward_function(tmp_path):
    """The run's ``reward_params`` travel as verl's ``reward_kwargs`` to floe's compute_score."""
    from verl.trainer.ppo.reward import get_custom_reward_fn

    data, overrides_ = read_verl_config(SMALL)
    params = {"unparseable": 0.05, "invalid": 0.3}
    cfg = RunSettings.from_dict({**data, "samples": 32, "reward_params": params})
    run = VerlTrainee(MODEL, str(tmp_path / "run"), cfg, overrides_, say=lambda _: None)
    fn = get_custom_reward_fn(compose(run.trainer_overrides(0)))
    inst = floe.generate(2, 4, count=1, seed=3)[0]
    moves = floe.solve(inst)["moves"]
    wrong = answer([moves[0][:-1], *moves[1:]])  # agent 0 stops one move short of its goal
    texts = [wrong, "I cannot solve this."]
    want = floe.Reward("tiered", params).score([inst] * 2, texts).tolist()
    assert want != floe.Reward("tiered").score([inst] * 2, texts).tolist()
    got = [fn(data_source=floe.datasets.DATA_SOURCE, solution_str=t, ground_truth=inst.to_json()) for t in texts]
    assert got == pytest.approx(want, abs=0)
    with pytest.raises(floe.ConfigError, match="set by floe.verl"):
        VerlTrainee(MODEL, str(tmp_path / "other"), cfg, {**overrides_, "+reward.custom_reward_function.reward_kwargs.reward": "x"}).run()


def test_dry_run_writes_round_0_and_verls_command(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    cmd = [sys.executable, "-m", "floe.verl", "--model", MODEL, "--out", str(out), "--verl-config", SMALL,
           "--samples", "32", "--dry-run", "trainer.n_gpus_per_node=2"]  # fmt: skip
    got = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    printed = shlex.split(got.stdout)
    assert printed[1:3] == ["-m", "verl.trainer.main_ppo"]
    assert "trainer.n_gpus_per_node=2" in printed and "trainer.n_gpus_per_node=1" not in printed
    dry = out / "dry-run"
    assert f"data.train_files={dry / 'verl' / 'round-0' / 'train.parquet'}" in printed
    assert f"actor_rollout_ref.model.path={os.path.abspath(MODEL)}" in printed
    assert (dry / "verl" / "round-0" / "command.sh").read_text() == got.stdout
    import pyarrow.parquet as pq

    rows = pq.read_table(dry / "verl" / "round-0" / "train.parquet").to_pylist()
    assert len(rows) == 32 and all(r["data_source"] == floe.datasets.DATA_SOURCE for r in rows)
    # The dry run's folder, apart from the run's: settings, a state that counts no round.
    state = read_state(str(dry))
    assert state.rounds_done == 0 and state.history == {"rounds": []}
    saved = json.load(open(dry / "config.json"))
    assert saved["trainer"] == "verl" and saved["verl"]["trainer.n_gpus_per_node"] == 2
    assert saved["settings"]["samples"] == 32
    assert not (out / "state.json").exists()
    # A dry run again starts its folder anew, with any settings.
    again = subprocess.run(cmd[:-1] + ["trainer.n_gpus_per_node=4"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "trainer.n_gpus_per_node=4" in shlex.split(again.stdout)


def test_settings_the_driver_owns_are_refused(tmp_path):
    data, values = read_verl_config(SMALL)
    cfg = RunSettings.from_dict(data)
    for bad, match in (
        ({"data.train_files": "x.parquet"}, "set by floe.verl"),
        ({"actor_rollout_ref.model.path": "m"}, "set by floe.verl"),
        ({"trainer.save_freq": -1}, "save_freq must be positive"),
        ({"data.train_batch_size": 1024}, "fewer than verl's data.train_batch_size"),
    ):
        with pytest.raises(floe.ConfigError, match=match):
            VerlTrainee(MODEL, str(tmp_path / "r"), cfg, {**values, **bad}, say=lambda _: None).run()
    with pytest.raises(floe.ConfigError, match="trl"):
        VerlTrainee(MODEL, str(tmp_path / "r"), RunSettings.from_dict({**data, "trl": {"max_steps": 1}}), values).run()
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text("floe: {}\nverl: {trainer.default_local_dir: here, trainer.save_freq: 1}\n")
    with pytest.raises(floe.ConfigError, match="trainer.default_local_dir"):
        read_verl_config(str(bad_file))
