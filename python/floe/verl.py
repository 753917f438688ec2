"""The paper's loop with verl's trainer (docs/rounds.md, "verl"): the protocol is floe-rounds'
(:mod:`floe.rounds.driver`), and :class:`VerlTrainee` trains each round as one run of
``python -m verl.trainer.main_ppo`` (verl 0.9.1 builds its sampler itself, so a round's data
cannot change inside one trainer run) on that round's data in verl's parquet layout, with floe's
reward (``compute_score`` of ``pkg://floe.rewards``), from the previous round's model; verl's
merger turns the last checkpoint into ``round-<r>/``, which answers the validation set and is
the ``self`` engineer. A killed trainer run resumes from its last checkpoint.

    python -m floe.verl --model DIR --out DIR --verl-config configs/verl/qwen3-4b.yaml \\
        [--engineer self|base|fixed|URL|PLUGIN] [--rounds N] [--resume] [--dry-run]

``--verl-config`` is a YAML file with two sections: ``floe`` (:class:`floe.rounds.RunSettings`'
settings, without ``trl``) and ``verl`` (Hydra overrides of verl's ``ppo_trainer``
configuration, dotted keys). ``--dry-run`` runs the protocol up to round 0's data in the run
folder's ``dry-run/`` (the model is not asked) and prints verl's command. floe runs the command
line whole (:func:`floe._floe.command_line`): it reads and checks it, calls :func:`make` for the
trainee, and drives it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from typing import Callable, Optional, Sequence

from ._floe import (
    Engineer,
    FloeError,
    Instance,
    RunSettings,
    command_line,
    hydra_overrides,
    model_folder,
    read_verl_config,
    resume_model,
    trainer_folder,
    verl_overrides,
)
from .datasets import write_verl_parquet
from .rounds.driver import RunState, drive
from .rounds.trl_trainee import greedy_answers, load_model, save_model, supervised_warm_start

__all__ = ["VerlTrainee", "hydra_overrides", "read_verl_config"]


class DryRunDone(Exception):
    """Raised by a dry run's trainee once round 0's data and command are written: its argument
    is verl's command, as a shell line."""


class VerlTrainee:
    """A Hugging Face model trained round by round with verl's trainer (one trainer run a
    round, its last checkpoint merged into ``round-<r>/``) into the run folder ``out``;
    :meth:`run` drives it (checking the settings and overrides first). ``dry_run``: round 0's
    data and command are written, then :class:`DryRunDone` stops the run; no model is asked."""

    def __init__(
        self,
        model: str,
        out: str,
        config: RunSettings,
        verl: dict,
        *,
        python: Optional[str] = None,
        dry_run: bool = False,
        say: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.cfg = config
        self.verl = dict(verl)
        self.python = python or sys.executable
        self.model_path = os.path.abspath(model)
        self.out = os.path.abspath(out)
        self.dry_run = dry_run
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.current = self.model_path
        self._loaded: dict = {}
        self.command: Optional[list] = None
        #: The validation set (the first set the driver asks answers to), verl's val_files.
        self.validation: Optional[list] = None
        #: The last round the driver gave.
        self.round: Optional[dict] = None

    # Paths and commands.
    def model_dir(self, r: int) -> str:
        return model_folder(self.out, f"round {r}")

    def round_dir(self, r: int) -> str:
        """verl's files of round ``r``: its data, checkpoints, log and commands."""
        return trainer_folder(self.out, "verl", f"round {r}")

    def model_before(self, r: int) -> str:
        """The model round ``r`` starts from: the run's model (or its warm start's), then the
        last round's."""
        if r > 0:
            return self.model_dir(r - 1)
        return model_folder(self.out, "warm start") if self.cfg.warm_start else self.model_path

    def trainer_overrides(self, r: int, seed: Optional[int] = None) -> dict:
        """verl's overrides of round ``r`` (:func:`floe._floe.verl_overrides`; data seed ``seed``, by
        default the round's)."""
        return verl_overrides(self.cfg, self.verl, out=self.out, round=r, model=self.model_before(r), seed=seed)

    def trainer_command(self, r: int, seed: int) -> list:
        """verl's trainer for round ``r``, as an argument list."""
        return [self.python, "-m", "verl.trainer.main_ppo", *hydra_overrides(self.trainer_overrides(r, seed))]

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
        """Runs the rounds not done yet; a dry run returns None once round 0's command is written.

        Raises :class:`floe.ConfigError` for settings or overrides verl cannot run (TRL
        arguments, keys the driver sets, no positive ``trainer.save_freq``, fewer prompts a round
        than a batch)."""
        try:
            return drive(self, self.cfg, self.out, model=self.model_path, trainer="verl", verl=self.verl,
                         engineer=engineer, resume=resume, overwrite=self.dry_run, say=self.say)  # fmt: skip
        except DryRunDone:
            return None

    # The trainee's side of the protocol.
    def describe(self) -> str:
        return f"{self.model_path} with verl's trainer"

    def restore(self, folder: str, saved: Optional[dict]) -> Optional[dict]:
        self.current = resume_model(folder, saved) or self.current
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
        self.current = save_model(model_folder(self.out, "warm start"), model, tokenizer)
        self._loaded.clear()
        return figures

    def train(self, round: dict) -> dict:
        """verl's trainer on the round's data, then its last checkpoint merged into ``round-<r>/``."""
        import shutil

        r, seed = round["round"], round["seed"]
        self.round = round
        os.makedirs(self.round_dir(r), exist_ok=True)
        val = os.path.join(trainer_folder(self.out, "verl"), "validation.parquet")
        if not os.path.exists(val):
            write_verl_parquet(val, self.validation or [], self.cfg.system, split="test")
        n = write_verl_parquet(os.path.join(self.round_dir(r), "train.parquet"), round["instances"], self.cfg.system)
        self.command = self.trainer_command(r, seed)
        with open(os.path.join(self.round_dir(r), "command.sh"), "w", encoding="utf-8") as f:
            f.write(shlex.join(self.command) + "\n")
        self.say(f"round {r}: {n} instances in {os.path.join(self.round_dir(r), 'train.parquet')}")
        if self.dry_run:
            raise DryRunDone(shlex.join(self.command))
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
        """verl's merger has put the round's model in ``round-<r>/`` already (the warm start's
        is in ``warm-start/``)."""
        path = model_folder(folder, stage)
        if path is not None and not os.path.isdir(path):
            raise FloeError(f"{stage}: no merged model in {path}")

    def details(self) -> dict:
        return {"verl": self.verl}


def make(a: dict) -> VerlTrainee:
    """The command line's trainee (:func:`floe._floe.command_line`): ``a`` holds its ``model``,
    run folder ``out``, ``config``, ``verl`` overrides, ``python`` and ``dry_run``."""
    return VerlTrainee(a["model"], a["out"], a["config"], a["verl"], python=a["python"], dry_run=a["dry_run"])


def main(argv: Optional[list] = None) -> int:
    """``python -m floe.verl``; a dry run prints verl's command."""
    try:
        return command_line("verl", sys.argv[1:] if argv is None else argv, make)
    except DryRunDone as done:
        print(done.args[0])
        return 0


if __name__ == "__main__":
    sys.exit(main())
