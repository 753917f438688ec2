"""The paper's loop with verl's trainer (docs/rounds.md, "verl"): the protocol is floe-rounds'
(:mod:`floe.rounds.driver`), and :class:`VerlTrainee` trains each round as one run of
``python -m verl.trainer.main_ppo`` (verl 0.9.1 builds its sampler itself, so a round's data
cannot change inside one trainer run) on that round's data in verl's parquet layout, with floe's
reward (``compute_score`` of ``pkg://floe.rewards``), from the previous round's model; verl's
merger turns the last checkpoint into ``round-<r>/``, which answers the validation set and is
the ``self`` engineer. A killed trainer run resumes from its last checkpoint.

    python -m floe.verl --model DIR --out DIR --verl-config configs/verl/qwen3-4b.yaml \\
        [--engineer self|base|fixed|URL|PLUGIN] [--rounds N] [--resume] [--dry-run]

``--verl-config`` is a YAML file with two sections: ``floe`` (:class:`floe.rounds.RoundsConfig`'s
settings, without ``trl``) and ``verl`` (Hydra overrides of verl's ``ppo_trainer``
configuration, dotted keys). ``--dry-run`` runs the protocol up to round 0's data in the run
folder's ``dry-run/`` (the model is not asked) and prints verl's command.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from typing import Any, Callable, Optional, Sequence

from ._floe import ConfigError, Engineer, FloeError, Instance, round_seed
from .datasets import write_verl_parquet
from .rounds.config import RoundsConfig, add_run_flags, cli_main, cli_settings
from .rounds.driver import RunState, drive, say_stderr
from .rounds.trl_trainee import greedy_answers, load_model, round_of, save_model, saved_model, supervised_warm_start

#: verl's keys the driver sets for each round; a configuration's ``verl`` section cannot set them.
DRIVER_KEYS = (
    "data.train_files",
    "data.val_files",
    "data.seed",
    "actor_rollout_ref.model.path",
    "reward.custom_reward_function.path",
    "reward.custom_reward_function.name",
    "reward.custom_reward_function.reward_kwargs",
    "trainer.default_local_dir",
    "trainer.total_epochs",
    "trainer.experiment_name",
)

#: floe's reward for verl's ``reward.custom_reward_function.path`` (``compute_score`` in it).
REWARD_MODULE = "pkg://floe.rewards"

#: verl's own default of ``data.train_batch_size`` (its ``legacy_data.yaml``).
VERL_TRAIN_BATCH = 1024


def hydra_value(value: Any) -> str:
    """``value`` as the right-hand side of a Hydra override: ``true``/``false``, ``null``,
    numbers as written, lists as ``[a,b]``, dicts as ``{k:v}``, and strings quoted when Hydra's
    grammar would read them otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if text and all(c.isalnum() or c in "_-./:+@~" for c in text) and text not in ("true", "false", "null"):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def overrides(values: dict) -> list:
    """Hydra overrides ``key=value`` of a mapping of dotted keys."""
    return [f"{k}={hydra_value(v)}" for k, v in values.items()]


def read_verl_config(path: str) -> tuple:
    """``(floe settings as a dict, verl overrides as a dict)`` from a ``--verl-config`` YAML file.

    Raises :class:`floe.ConfigError` for an unreadable file, unknown sections, TRL settings, or
    verl keys the driver sets itself."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: {e}") from e
    if not isinstance(data, dict) or set(data) - {"floe", "verl"}:
        raise ConfigError(f"{path}: a mapping with the sections `floe` and `verl` only")
    floe_part, verl_part = dict(data.get("floe") or {}), dict(data.get("verl") or {})
    if "trl" in floe_part:
        raise ConfigError(f"{path}: floe.trl: TRL's arguments do not apply to verl; set verl's keys under `verl`")
    check_overrides(verl_part, path)
    return floe_part, verl_part


def check_overrides(values: dict, where: str = "verl") -> None:
    """Refuses keys the driver sets and a checkpoint frequency that would leave no checkpoint."""
    def driver_sets(key: str) -> bool:
        key = key.lstrip("+~")
        return any(key == own or key.startswith(own + ".") for own in DRIVER_KEYS)

    own = sorted(k.lstrip("+~") for k in values if driver_sets(k))
    if own:
        raise ConfigError(f"{where}: {', '.join(own)} are set by floe.verl for each round")
    if int(values.get("trainer.save_freq", -1)) <= 0:
        raise ConfigError(
            f"{where}: trainer.save_freq must be positive: the round's model is merged from the "
            "checkpoint verl writes at its last step"
        )


class DryRunDone(Exception):
    """Raised by a dry run's trainee once round 0's data and command are written."""


class VerlTrainee:
    """A Hugging Face model trained round by round with verl's trainer (one trainer run a
    round, its last checkpoint merged into ``round-<r>/``) into the run folder ``out``;
    :meth:`run` drives it. ``dry_run``: the run folder is ``<out>/dry-run``, round 0's data and
    command are written there, then :class:`DryRunDone` stops the run; no model is asked."""

    def __init__(
        self,
        model: str,
        out: str,
        config: RoundsConfig,
        verl: dict,
        *,
        python: Optional[str] = None,
        dry_run: bool = False,
        say: Callable[[str], None] = say_stderr,
    ) -> None:
        if config.trl:
            raise ConfigError("trl: TRL's arguments do not apply to verl")
        check_overrides(verl)
        batch = int(verl.get("data.train_batch_size", VERL_TRAIN_BATCH))
        if config.samples < batch:
            raise ConfigError(
                f"samples {config.samples}: fewer than verl's data.train_batch_size {batch}, so a round has no step"
            )
        self.cfg = config
        self.verl = dict(verl)
        self.python = python or sys.executable
        self.model_path = os.path.abspath(model)
        self.out = os.path.abspath(os.path.join(out, "dry-run") if dry_run else out)
        self.dry_run = dry_run
        self.say = say
        self.current = self.model_path
        self._loaded: dict = {}
        self.command: Optional[list] = None
        #: The validation set (the first set the driver asks answers to), verl's val_files.
        self.validation: Optional[list] = None
        #: The last round the driver gave.
        self.round: Optional[dict] = None

    # Paths and commands.
    def model_dir(self, r: int) -> str:
        return os.path.join(self.out, f"round-{r}")

    def round_dir(self, r: int) -> str:
        """verl's files of round ``r``: its data, checkpoints, log and commands."""
        return os.path.join(self.out, "verl", f"round-{r}")

    def warm_dir(self) -> str:
        """The warm start's model (``warm-start/``, as :mod:`floe.rounds` saves it)."""
        return os.path.join(self.out, "warm-start")

    def model_before(self, r: int) -> str:
        """The model round ``r`` starts from: the run's model (or its warm start's), then the
        last round's."""
        if r > 0:
            return self.model_dir(r - 1)
        return self.warm_dir() if self.cfg.warm_start else self.model_path

    def trainer_overrides(self, r: int, seed: Optional[int] = None) -> dict:
        """verl's overrides of round ``r`` (data seed ``seed``, by default the round's seed):
        the configuration's, then the driver's own."""
        d = self.round_dir(r)
        seed = round_seed(self.cfg.seed, r) if seed is None else seed
        return {
            **self.verl,
            "data.train_files": os.path.join(d, "train.parquet"),
            "data.val_files": os.path.join(self.out, "verl", "validation.parquet"),
            "data.seed": seed % (1 << 31),
            "actor_rollout_ref.model.path": self.model_before(r),
            # As a module, not a file: floe/rewards.py imports floe's extension relatively.
            "reward.custom_reward_function.path": REWARD_MODULE,
            "reward.custom_reward_function.name": "compute_score",
            # The run's reward plugin, handed to compute_score by verl's reward_kwargs.
            **self.reward_kwargs(),
            "trainer.default_local_dir": os.path.join(d, "checkpoints"),
            "trainer.total_epochs": self.cfg.epochs,
            "trainer.experiment_name": f"round-{r}",
        }

    def reward_kwargs(self) -> dict:
        """The run's reward plugin (:meth:`RoundsConfig.reward_spec`) as verl's ``reward_kwargs``,
        which verl passes to :func:`floe.compute_score` on every call."""
        key = "+reward.custom_reward_function.reward_kwargs"
        spec = self.cfg.reward_spec()
        kwargs = {f"{key}.reward": spec["name"]}
        if spec["params"] is not None:
            kwargs[f"{key}.reward_params"] = spec["params"]
        if spec["library"] is not None:
            kwargs[f"{key}.reward_library"] = spec["library"]
        return kwargs

    def trainer_command(self, r: int, seed: int) -> list:
        """verl's trainer for round ``r``, as an argument list."""
        return [self.python, "-m", "verl.trainer.main_ppo", *overrides(self.trainer_overrides(r, seed))]

    def merge_command(self, r: int, actor_dir: str, target: str) -> list:
        """verl's model merger: the FSDP checkpoint in ``actor_dir`` as a Hugging Face folder."""
        return [self.python, "-m", "verl.model_merger", "merge", "--backend", "fsdp",
                "--local_dir", actor_dir, "--target_dir", target]  # fmt: skip

    def last_checkpoint(self, r: int) -> tuple:
        """``(step, actor folder)`` of round ``r``'s last checkpoint (verl's tracker file names
        its step)."""
        ckpt = os.path.join(self.round_dir(r), "checkpoints")
        tracker = os.path.join(ckpt, "latest_checkpointed_iteration.txt")
        try:
            with open(tracker, encoding="utf-8") as f:
                step = int(f.read().strip())
        except (OSError, ValueError) as e:
            raise FloeError(f"round {r}: verl left no checkpoint ({e})") from e
        return step, os.path.join(ckpt, f"global_step_{step}", "actor")

    def load(self, path: str) -> tuple:
        """A model folder loaded once, on a GPU when there is one (the last one loaded is kept)."""
        path = os.path.abspath(path)
        if path not in self._loaded:
            import torch

            self._loaded.clear()
            self._loaded[path] = load_model(path, "cuda" if torch.cuda.is_available() else None)
        return self._loaded[path]

    def run_logged(self, command: list, log: str) -> float:
        """Runs ``command`` in the round's folder, its output both shown and appended to ``log``."""
        t0 = time.perf_counter()
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {shlex.join(command)}\n")
            f.flush()
            proc = subprocess.Popen(
                command, cwd=os.path.dirname(log), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stderr.write(line)
                f.write(line)
            code = proc.wait()
        if code != 0:
            raise FloeError(f"{command[2]} exited with status {code}; its output is in {log}")
        return time.perf_counter() - t0

    def current_model(self) -> tuple:
        """The model the next round starts from (the ``self`` engineer)."""
        return self.load(self.current)

    def base_model(self) -> tuple:
        """The run's model (the ``base`` engineer)."""
        return self.load(self.model_path)

    def run(self, *, resume: bool = False, engineer: Optional[Engineer] = None) -> Optional[RunState]:
        """Runs the rounds not done yet; a dry run returns None once round 0's command is written."""
        settings = {"model": self.model_path, "trainer": "verl", "settings": self.cfg.to_dict(), "verl": dict(self.verl)}
        if engineer is not None:
            settings["engineer"] = f"given: {engineer.name}"
        try:
            return drive(self, self.cfg, self.out, settings, engineer=engineer, resume=resume, overwrite=self.dry_run, say=self.say)
        except DryRunDone:
            return None

    # The trainee's side of the protocol.
    def describe(self) -> str:
        return f"{self.model_path} with verl's trainer"

    def restore(self, folder: str, saved: Optional[dict]) -> Optional[dict]:
        self.current = saved_model(folder, saved) or self.current
        return saved

    def warm_start(self) -> Optional[dict]:
        """The same supervised warm start as :mod:`floe.rounds`' (TRL's ``SFTTrainer`` on
        optimal plans, the answer's tokens only), in this process before verl's first round;
        its model, saved in ``warm-start/``, is round 0's actor. A dry run does not train: its
        command names that folder."""
        if not self.cfg.warm_start or self.dry_run:
            return None
        model, tokenizer = load_model(self.model_path)
        model, figures = supervised_warm_start(model, tokenizer, self.cfg, self.out)
        self.current = save_model(self.out, "warm-start", model, tokenizer)
        self._loaded.clear()
        return figures

    def train(self, round: dict) -> dict:
        """verl's trainer on the round's data, then its last checkpoint merged into ``round-<r>/``."""
        import shutil

        r, seed = round["round"], round["seed"]
        self.round = round
        os.makedirs(self.round_dir(r), exist_ok=True)
        val = os.path.join(self.out, "verl", "validation.parquet")
        if not os.path.exists(val):
            write_verl_parquet(val, self.validation or [], self.cfg.system, split="test")
        n = write_verl_parquet(os.path.join(self.round_dir(r), "train.parquet"), round["instances"], self.cfg.system)
        self.command = self.trainer_command(r, seed)
        with open(os.path.join(self.round_dir(r), "command.sh"), "w", encoding="utf-8") as f:
            f.write(shlex.join(self.command) + "\n")
        self.say(f"round {r}: {n} instances in {os.path.join(self.round_dir(r), 'train.parquet')}")
        if self.dry_run:
            raise DryRunDone()
        self._loaded.clear()  # verl needs the GPUs
        log = os.path.join(self.round_dir(r), "train.log")
        seconds = self.run_logged(self.command, log)
        step, actor = self.last_checkpoint(r)
        target = self.model_dir(r)
        tmp = target + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.run_logged(self.merge_command(r, actor, tmp), log)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        self.current = target
        # verl logs its steps in verl/round-<r>/train.log, not in steps.jsonl.
        return {
            "grpo_steps": step,
            "train_s": seconds,
            "figures": {"grpo_steps": step, "steps_per_s": step / seconds if seconds > 0 else 0.0},
        }

    def answer(self, instances: Sequence[Instance]) -> list:
        if self.validation is None:
            self.validation = list(instances)
        if self.dry_run:
            return [""] * len(instances)
        model, tokenizer = self.load(self.current)
        max_tokens = self.cfg.validation_max_tokens or int(self.verl.get("data.max_response_length", 512))
        return greedy_answers(model, tokenizer, instances, self.cfg.system, max_tokens, self.cfg.eval_batch)[0]

    def save(self, stage: str, folder: str, state: dict) -> None:
        """verl's merger has put the round's model in ``round-<r>/`` already."""
        r = round_of(stage)
        if r is not None and not os.path.isdir(self.model_dir(r)):
            raise FloeError(f"{stage}: no merged model in {self.model_dir(r)}")

    def details(self) -> dict:
        return {"verl": self.verl}


def run_verl_rounds(
    model: str,
    out: str,
    config: RoundsConfig,
    verl: dict,
    *,
    python: Optional[str] = None,
    resume: bool = False,
    engineer: Optional[Engineer] = None,
    say: Callable[[str], None] = say_stderr,
) -> RunState:
    """Trains the Hugging Face model in folder ``model`` for ``config.rounds`` rounds of GRPO with
    verl's trainer (Hydra overrides ``verl``, dotted keys) into the run folder ``out``; see the
    module's description. ``python`` runs verl's trainer and merger [this interpreter].

    Raises :class:`floe.ConfigError` for bad settings, :class:`floe.FloeError` when verl fails."""
    state = VerlTrainee(model, out, config, verl, python=python, say=say).run(resume=resume, engineer=engineer)
    assert state is not None
    return state


def parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m floe.verl",
        description="GRPO rounds with verl's trainer on MAPF-FrozenLake; between rounds an environment "
        "engineer (by default the trainee's merged checkpoint) writes the next round's generator configuration.",
    )
    p.add_argument("--model", help="a Hugging Face causal LM folder (round 0's actor)")
    p.add_argument("--out", required=True, help="the run folder (on a filesystem every Ray node sees)")
    p.add_argument("--verl-config", help="a YAML file: `floe` (floe.rounds settings) and `verl` (Hydra overrides)")
    add_run_flags(p)
    p.add_argument("--python", help="the Python that runs verl [this one]")
    p.add_argument("--dry-run", action="store_true", help="write the next round's data and print verl's command")
    p.add_argument("overrides", nargs="*", help="more verl overrides, key=value (over the file's)")
    return p.parse_args(argv)


def read_files(a: argparse.Namespace) -> tuple:
    """``(floe settings, verl overrides)`` of ``--verl-config`` and the overrides given."""
    data, verl = read_verl_config(a.verl_config) if a.verl_config else ({}, {})
    for item in a.overrides:
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"{item}: a verl override is key=value")
        import yaml

        verl[key] = yaml.safe_load(value)
    return data, verl


def main(argv: Optional[list] = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)

    def run() -> Optional[str]:
        model, cfg, verl = cli_settings(a, a.verl_config is not None or bool(a.overrides), lambda: read_files(a))
        trainee = VerlTrainee(model, a.out, cfg, verl, python=a.python, dry_run=a.dry_run)
        state = trainee.run(resume=a.resume)
        if a.dry_run:
            print(shlex.join(trainee.command or []))
            return None
        return f"{state.rounds_done if state else 0} rounds done; run folder {a.out}"

    return cli_main(run)


if __name__ == "__main__":
    sys.exit(main())
