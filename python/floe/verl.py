"""The paper's loop with verl's trainer: a round driver around ``python -m verl.trainer.main_ppo``.

verl 0.9.1 builds its sampler itself (``verl.trainer.ppo.utils.create_rl_sampler``: random or
sequential, no curriculum sampler), so the round's data cannot change inside one trainer run;
instead each round is one run of verl's trainer on that round's data. Round r:

1. its configuration (round 0: ``round0`` or floe's default clamped into the limits; later: the
   engineer's, adopted as ``floe train`` adopts it);
2. its instances (``floe.round_instances``, seed ``seed + r``) written in verl's parquet layout
   (``floe.write_verl_parquet``) into ``verl/round-<r>/train.parquet``;
3. verl's trainer, a subprocess, on the previous round's model with floe's reward
   (``reward.custom_reward_function``: ``compute_score`` of ``pkg://floe.rewards``), checkpoints
   in ``verl/round-<r>/checkpoints``;
4. verl's model merger turns the last checkpoint into a Hugging Face folder, ``round-<r>/``;
5. that model's greedy answers to floe's fixed validation set, counted by failure kind per size;
6. the history, metrics and state written, after which the round counts as done.

Between rounds verl's trainer has exited, and with it its rollout servers: the engineer
(``self``) is the merged checkpoint ``round-<r>/``, loaded with transformers in this process;
``--engineer URL`` asks an OpenAI-compatible server instead (for example vLLM serving
``round-<r>/``), with the reply's schema as ``response_format``. The run folder is
:mod:`floe.rounds`' layout, so ``floe engineer --run`` reads it, and a killed run resumes
after its last finished round; a killed trainer run resumes from its last checkpoint
(``trainer.resume_mode=auto``).

    python -m floe.verl --model DIR --out DIR --verl-config configs/verl/qwen3-4b.yaml \\
        [--engineer self|base|fixed|URL|PLUGIN] [--rounds N] [--resume] [--dry-run]

``--verl-config`` is a YAML file with two sections: ``floe`` (:class:`floe.rounds.RoundsConfig`'s
settings, without ``trl``) and ``verl`` (Hydra overrides of verl's ``ppo_trainer``
configuration, dotted keys). ``--dry-run`` writes round 0's data and prints verl's command.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from typing import Any, Callable, Optional

from ._floe import ConfigError, Engineer, FloeError, round_instances, validation_set
from .datasets import write_verl_parquet
from .rounds.config import RoundsConfig, add_run_flags, apply_run_flags, saved_run
from .rounds.folder import RunFolder, RunState
from .rounds.loop import design_round, load_model, record_round

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


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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


class VerlRounds:
    """One run of rounds with verl's trainer. :func:`run_verl_rounds` makes one and runs it."""

    def __init__(
        self,
        model: str,
        out: str,
        config: RoundsConfig,
        verl: dict,
        *,
        python: Optional[str] = None,
        resume: bool = False,
        engineer: Optional[Engineer] = None,
        say: Callable[[str], None] = _say,
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
        self.folder = RunFolder(os.path.abspath(out))
        self.say = say
        self.settings = {"model": self.model_path, "trainer": "verl", "settings": config.to_dict(), "verl": self.verl}
        if engineer is not None:
            self.settings["engineer"] = f"given: {engineer.name}"
        self.state: RunState = self.folder.start(self.settings, resume)
        self.validation = validation_set(**config.validation)
        self._loaded: dict = {}
        self.engineer = engineer
        self._engineer_given = engineer is not None

    # Paths and commands.
    def round_dir(self, r: int) -> str:
        """verl's files of round ``r``: its data, checkpoints, log and commands."""
        return self.folder.path("verl", f"round-{r}")

    def model_before(self, r: int) -> str:
        """The model round ``r`` starts from: the run's model, then the last round's."""
        return self.model_path if r == 0 else os.path.abspath(self.folder.model_dir(r - 1))

    def trainer_overrides(self, r: int) -> dict:
        """verl's overrides of round ``r``: the configuration's, then the driver's own."""
        d = self.round_dir(r)
        return {
            **self.verl,
            "data.train_files": os.path.join(d, "train.parquet"),
            "data.val_files": self.folder.path("verl", "validation.parquet"),
            "data.seed": self.cfg.seed + r,
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
        """The run's reward plugin (``reward``, ``reward_params``, ``reward_library``) as verl's
        ``reward_kwargs``, which verl passes to :func:`floe.compute_score` on every call."""
        key = "+reward.custom_reward_function.reward_kwargs"
        kwargs = {f"{key}.reward": self.cfg.reward}
        if self.cfg.reward_params is not None:
            kwargs[f"{key}.reward_params"] = self.cfg.reward_params
        if self.cfg.reward_library is not None:
            kwargs[f"{key}.reward_library"] = self.cfg.reward_library
        return kwargs

    def trainer_command(self, r: int) -> list:
        """verl's trainer for round ``r``, as an argument list."""
        return [self.python, "-m", "verl.trainer.main_ppo", *overrides(self.trainer_overrides(r))]

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

    # (1) The round's configuration.
    def design(self, r: int) -> dict:
        """Round ``r``'s configuration, its design recorded."""
        return design_round(r, self.cfg, self.state, self.folder, self.make_engineer, {"verl": self.verl}, self.say)

    def make_engineer(self) -> Optional[Engineer]:
        if self._engineer_given or self.engineer is not None:
            return self.engineer
        from .rounds.engineers import make_engineer

        cfg = self.cfg
        self.engineer, _ = make_engineer(
            cfg.engineer,
            trainee=lambda: self.load(self.folder.model_dir(self.state.rounds_done - 1)),
            base=lambda: self.load(self.model_path),
            params=cfg.engineer_params,
            library=cfg.engineer_library,
            seed=cfg.seed,
            retries=cfg.engineer_retries,
            max_tokens=cfg.engineer_max_tokens,
            temperature=cfg.engineer_temperature,
            constraint=cfg.engineer_constraint,
        )
        return self.engineer

    def load(self, path: str) -> tuple:
        """A model folder loaded once, on a GPU when there is one (the last one loaded is kept)."""
        path = os.path.abspath(path)
        if path not in self._loaded:
            import torch

            self._loaded.clear()
            self._loaded[path] = load_model(path, "cuda" if torch.cuda.is_available() else None)
        return self._loaded[path]

    # (2) The round's data.
    def write_data(self, r: int, config: dict) -> int:
        """Writes round ``r``'s training set and (once) the validation set in verl's layout."""
        os.makedirs(self.round_dir(r), exist_ok=True)
        val = self.folder.path("verl", "validation.parquet")
        if not os.path.exists(val):
            write_verl_parquet(val, self.validation, self.cfg.system, split="test")
        instances = round_instances(config, self.cfg.samples, seed=self.cfg.seed + r)
        return write_verl_parquet(os.path.join(self.round_dir(r), "train.parquet"), instances, self.cfg.system)

    # (3)–(4) verl's trainer and model merger.
    def run_logged(self, command: list, log: str) -> float:
        """Runs ``command`` in round's folder, its output both shown and appended to ``log``."""
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

    def train(self, r: int) -> dict:
        """verl's trainer on round ``r``'s data, then its last checkpoint merged into ``round-<r>/``."""
        import shutil

        log = os.path.join(self.round_dir(r), "train.log")
        seconds = self.run_logged(self.trainer_command(r), log)
        step, actor = self.last_checkpoint(r)
        target = self.folder.model_dir(r)
        tmp = target + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.run_logged(self.merge_command(r, actor, tmp), log)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        return {"grpo_steps": step, "train_s": seconds, "steps_per_s": step / seconds if seconds > 0 else 0.0}

    # (5)–(6) The validation and the records.
    def finish(self, r: int, config: dict, trained: dict) -> dict:
        from .rounds.validation import validate

        cfg = self.cfg
        model, tokenizer = self.load(self.folder.model_dir(r))
        max_tokens = cfg.validation_max_tokens or int(self.verl.get("data.max_response_length", 512))
        counts = validate(model, tokenizer, self.validation, max_tokens=max_tokens, batch=cfg.eval_batch, system=cfg.system)
        # verl logs its steps in verl/round-<r>/train.log, not in steps.jsonl.
        return record_round(r, config, trained, counts, self.state, self.folder)

    def begin(self, r: int) -> dict:
        """Round ``r``'s configuration, recorded, and its data written; returns the configuration."""
        config = self.design(r)
        n = self.write_data(r, config)
        with open(os.path.join(self.round_dir(r), "command.sh"), "w", encoding="utf-8") as f:
            f.write(shlex.join(self.trainer_command(r)) + "\n")
        self.say(f"round {r}: {n} instances in {os.path.join(self.round_dir(r), 'train.parquet')}")
        return config

    def dry_run(self) -> list:
        """The next round's configuration and data, written, and verl's command for it, returned
        (nothing is trained; the round does not count as done)."""
        r = self.state.rounds_done
        self.begin(r)
        return self.trainer_command(r)

    def run(self) -> RunState:
        """Runs the rounds not done yet."""
        for r in range(self.state.rounds_done, self.cfg.rounds):
            config = self.begin(r)
            self._loaded.clear()  # verl needs the GPUs
            trained = self.train(r)
            self.say(
                f"round {r}: {trained['grpo_steps']} GRPO steps in {trained['train_s']:.1f} s "
                f"({trained['steps_per_s']:.3f} steps/s); model in {self.folder.model_dir(r)}"
            )
            done = self.finish(r, config, trained)
            self.say(
                f"round {r}: validation valid {100 * done['valid_rate']:.1f}%, optimal "
                f"{100 * done['optimal_rate']:.1f}% in {done['validation_s']:.1f} s\n{done['table']}"
            )
        return self.state


def run_verl_rounds(
    model: str,
    out: str,
    config: RoundsConfig,
    verl: dict,
    *,
    python: Optional[str] = None,
    resume: bool = False,
    engineer: Optional[Engineer] = None,
    say: Callable[[str], None] = _say,
) -> RunState:
    """Trains the Hugging Face model in folder ``model`` for ``config.rounds`` rounds of GRPO with
    verl's trainer (Hydra overrides ``verl``, dotted keys) into the run folder ``out``; see the
    module's description. ``python`` runs verl's trainer and merger [this interpreter].

    Raises :class:`floe.ConfigError` for bad settings, :class:`floe.FloeError` when verl fails."""
    return VerlRounds(model, out, config, verl, python=python, resume=resume, engineer=engineer, say=say).run()


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


def settings(a: argparse.Namespace) -> tuple:
    """``(model folder, RoundsConfig, verl overrides)`` that the flags ask for."""
    saved = saved_run(a, a.verl_config is not None or bool(a.overrides))
    if saved is not None:
        return saved["model"], RoundsConfig.from_dict(saved["settings"]), saved["verl"]
    if a.model is None:
        raise ConfigError("--model: required (except with --resume alone, which reads the run's own)")
    data, verl = read_verl_config(a.verl_config) if a.verl_config else ({}, {})
    for item in a.overrides:
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"{item}: a verl override is key=value")
        import yaml

        verl[key] = yaml.safe_load(value)
    return a.model, RoundsConfig.from_dict(apply_run_flags(data, a)), verl


def main(argv: Optional[list] = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        model, cfg, verl = settings(a)
        run = VerlRounds(model, a.out, cfg, verl, python=a.python, resume=a.resume or a.dry_run)
        if a.dry_run:
            print(shlex.join(run.dry_run()))
            return 0
        state = run.run()
    except FloeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{state.rounds_done} rounds done; run folder {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
