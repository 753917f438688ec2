"""The closed loop, stage by stage. Round r: (1) its configuration (round 0: ``round0`` or
floe's default clamped into the limits; later: the engineer's, adopted as ``floe train`` adopts
it); (2) its prompts (``floe.round_instances``); (3) GRPO with TRL's ``GRPOTrainer`` and floe's
reward; (4) the model saved; (5) greedy answers to the fixed validation set, counted by kind per
map size; (6) the history, metrics and state written, after which the round counts as done.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from typing import Any, Callable, Optional

from .._floe import Engineer, engineer_context, round0_config, round_instances, validation_set
from ..datasets import to_hf_dataset
from ..rewards import trl_reward
from .config import RoundsConfig
from .engineers import make_engineer
from .folder import RunFolder, RunState
from .validation import table, validate


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_model(path: str, device: Optional[Any] = None) -> tuple:
    """A causal language model and its tokenizer from a Hugging Face folder (a pad token set to
    the end-of-sequence token when it has none)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path)
    if device is not None:
        model.to(device)
    return model, tokenizer


def design_round(
    r: int,
    cfg: RoundsConfig,
    state: RunState,
    folder: RunFolder,
    engineer: Callable[[], Optional[Engineer]],
    hyperparameters: dict,
    say: Callable[[str], None],
) -> dict:
    """Round ``r``'s configuration: round 0's (``round0`` or floe's default clamped into the
    limits), the previous one when ``engineer()`` is None (``fixed``), else the engineer's, asked
    with the run's history and adopted as ``floe train`` adopts it; ``hyperparameters`` go into
    the engineer's context. How it came about is recorded in ``state.designs`` and said. Shared
    by the TRL and the verl drivers."""
    config, design = _design(r, cfg, state, folder, engineer, hyperparameters)
    state.designs = [d for d in state.designs if d["round"] < r] + [design]
    notes = "; ".join(design["notes"])
    say(f"round {r}: configuration from {design['source']}{': ' + notes if notes else ''}")
    say(f"round {r}: {json.dumps(config)}")
    return config


def _design(
    r: int,
    cfg: RoundsConfig,
    state: RunState,
    folder: RunFolder,
    engineer: Callable[[], Optional[Engineer]],
    hyperparameters: dict,
) -> tuple:
    """Round ``r``'s configuration and the record of how it came about (see :func:`design_round`)."""
    history = state.history
    if r == 0:
        if cfg.round0 is not None:
            return cfg.round0, {"round": 0, "source": "round0", "notes": []}
        config, notes = round0_config(limits=cfg.design_limits)
        return config, {"round": 0, "source": "default", "notes": notes}
    previous = history["rounds"][-1]["config"]
    asker = engineer()
    if asker is None:
        return previous, {"round": r, "source": "fixed", "notes": []}
    last = state.design(r - 1)
    rationale = last.get("rationale") if last and last["source"] == "engineer" else None
    args = dict(
        rounds=cfg.rounds,
        epochs=cfg.epochs,
        samples=cfg.samples,
        previous_rationale=rationale,
        hyperparameters=hyperparameters,
        limits=cfg.design_limits,
        context=cfg.context,
    )
    # What the engineer is given is on disk before it is asked (the run may die waiting).
    folder.write_context_only(r, engineer_context(history, **args))
    t0 = time.perf_counter()
    asked = asker.next_config(history, **args)
    design = folder.write_design(r, asked, time.perf_counter() - t0)
    return asked["config"], design


def record_round(
    r: int,
    config: dict,
    trained: dict,
    counts: dict,
    state: RunState,
    folder: RunFolder,
    steps: Optional[list] = None,
) -> dict:
    """Writes round ``r``'s records: the history the engineer reads, ``rounds.jsonl`` (the
    validation ``counts``, the configuration, how it came about, ``trained``'s figures),
    ``steps.jsonl`` (``steps``, when the trainer logged them), the validation tables, and the
    state, after which the round counts as done. Returns the ``rounds.jsonl`` line with the
    table as ``table``. Shared by the TRL and the verl drivers."""
    state.history["rounds"].append({"round": r, "config": config, "results": counts["per_size"]})
    state.grpo_steps += trained["grpo_steps"]
    seconds = counts["seconds"]
    line = {
        "stage": f"round {r}",
        "round": r,
        "config": config,
        "valid_rate": counts["valid_rate"],
        "optimal_rate": counts["optimal_rate"],
        "grpo_step": state.grpo_steps,
        "per_size": counts["per_size"],
        "report": {"cells": counts["cells"]},
        "design": state.design(r),
        **trained,
        "validation_s": seconds,
        "validation_tokens": counts["generated_tokens"],
        "validation_tokens_per_s": counts["generated_tokens"] / seconds if seconds > 0 else 0.0,
    }
    if steps is not None:
        folder.append("steps.jsonl", steps)
    folder.append("rounds.jsonl", [line])
    text = table(counts)
    os.makedirs(folder.path("validation"), exist_ok=True)
    with open(folder.path("validation", f"round-{r}.md"), "w", encoding="utf-8") as f:
        f.write(f"# Validation after round {r}\n\n{text}")
    with open(folder.path("eval.md"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(folder.path("eval.json"), "w", encoding="utf-8") as f:
        json.dump({"round": r, "cells": counts["cells"], "per_size": counts["per_size"]}, f, indent=1)
    state.rounds_done = r + 1
    folder.write_state(state)
    return {**line, "table": text}


class Rounds:
    """One run: its settings, folder, state, trainee and engineer. :func:`run_rounds` makes
    one and runs it."""

    def __init__(
        self,
        model: str,
        out: str,
        config: RoundsConfig,
        *,
        resume: bool = False,
        engineer: Optional[Engineer] = None,
        say: Callable[[str], None] = _say,
    ) -> None:
        self.cfg = config
        self.model_path = os.path.abspath(model)
        self.folder = RunFolder(out)
        self.say = say
        self.settings = {"model": self.model_path, "settings": config.to_dict()}
        if engineer is not None:
            self.settings["engineer"] = f"given: {engineer.name}"
        self.state: RunState = self.folder.start(self.settings, resume)
        done = self.state.rounds_done
        start = self.folder.model_dir(done - 1) if done else self.model_path
        self.model, self.tokenizer = load_model(start)
        if done:
            say(f"resuming after round {done - 1} from {start}")
        self._base: Optional[tuple] = None
        self.validation = validation_set(**config.validation)
        self.reward = trl_reward(config.reward, config.reward_params, config.reward_library)
        self.model_engineer = None
        if engineer is None:
            engineer, self.model_engineer = make_engineer(
                config.engineer,
                trainee=lambda: (self.model, self.tokenizer),
                base=self.base,
                params=config.engineer_params,
                library=config.engineer_library,
                seed=config.seed,
                retries=config.engineer_retries,
                max_tokens=config.engineer_max_tokens,
                temperature=config.engineer_temperature,
                constraint=config.engineer_constraint,
            )
        self.engineer = engineer

    def base(self) -> tuple:
        """The round-0 model (the ``base`` engineer), loaded once, on the trainee's device."""
        if self._base is None:
            self._base = load_model(self.model_path, self.model.device)
        return self._base

    # (1) The round's configuration.
    def design(self, r: int) -> dict:
        """Round ``r``'s configuration, its design recorded."""
        return design_round(
            r, self.cfg, self.state, self.folder, lambda: self.engineer, {"trl": self.cfg.trl_args()}, self.say
        )

    # (2)–(3) The round's prompts and GRPO.
    def train(self, r: int, config: dict) -> dict:
        """GRPO on round ``r``'s prompts; the figures of the round's training."""
        from trl import GRPOConfig, GRPOTrainer

        cfg = self.cfg
        instances = round_instances(config, cfg.samples, seed=cfg.seed + r)
        dataset = to_hf_dataset(instances, cfg.system)
        generated = {"tokens": 0, "completions": 0}
        reward = self.reward

        def floe_reward(prompts, completions, **kwargs):
            ids = kwargs.get("completion_ids")
            if ids is not None:
                generated["tokens"] += sum(len(x) for x in ids)
            generated["completions"] += len(completions)
            return reward(prompts, completions, **kwargs)

        floe_reward.__name__ = reward.__name__
        args = GRPOConfig(
            output_dir=self.folder.path("trl", f"round-{r}"),
            num_train_epochs=cfg.epochs,
            seed=cfg.seed + r,
            **cfg.trl_args(),
        )
        trainer = GRPOTrainer(
            model=self.model,
            reward_funcs=floe_reward,
            args=args,
            train_dataset=dataset,
            processing_class=self.tokenizer,
        )
        t0 = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - t0
        self.model = trainer.model
        steps = int(trainer.state.global_step)
        log = [dict(e) for e in trainer.state.log_history if "step" in e and "train_runtime" not in e]
        del trainer
        gc.collect()
        return {
            "instances": len(instances),
            "grpo_steps": steps,
            "train_s": seconds,
            "steps_per_s": steps / seconds if seconds > 0 else 0.0,
            "generated_tokens": generated["tokens"],
            "completions": generated["completions"],
            "tokens_per_s": generated["tokens"] / seconds if seconds > 0 else 0.0,
            "log": log,
        }

    # (4)–(6) The model, the validation, the records.
    def finish(self, r: int, config: dict, trained: dict) -> dict:
        cfg, folder, state = self.cfg, self.folder, self.state
        folder.save_model(r, self.model, self.tokenizer)
        max_tokens = cfg.validation_max_tokens or cfg.max_completion_length()
        counts = validate(
            self.model, self.tokenizer, self.validation, max_tokens=max_tokens, batch=cfg.eval_batch, system=cfg.system
        )
        steps = []
        for e in trained.pop("log"):
            e.update(phase="grpo", round=r, step=state.grpo_steps + int(e["step"]) - 1)
            steps.append(e)
        return record_round(r, config, trained, counts, state, folder, steps)

    def run(self) -> RunState:
        """Runs the rounds not done yet."""
        cfg, state = self.cfg, self.state
        for r in range(state.rounds_done, cfg.rounds):
            config = self.design(r)
            trained = self.train(r, config)
            self.say(
                f"round {r}: {trained['grpo_steps']} GRPO steps in {trained['train_s']:.1f} s "
                f"({trained['steps_per_s']:.3f} steps/s), {trained['generated_tokens']} tokens generated "
                f"({trained['tokens_per_s']:.1f} tokens/s)"
            )
            done = self.finish(r, config, trained)
            self.say(
                f"round {r}: validation valid {100 * done['valid_rate']:.1f}%, optimal "
                f"{100 * done['optimal_rate']:.1f}% in {done['validation_s']:.1f} s "
                f"({done['validation_tokens_per_s']:.1f} tokens/s)\n{done['table']}"
            )
        return state


def run_rounds(
    model: str,
    out: str,
    config: Optional[RoundsConfig] = None,
    *,
    resume: bool = False,
    engineer: Optional[Engineer] = None,
    say: Callable[[str], None] = _say,
) -> RunState:
    """Trains the Hugging Face causal language model in folder ``model`` for ``config.rounds``
    rounds of GRPO into the run folder ``out``, the environment engineer writing each round's
    configuration after the first; ``resume`` continues a run in ``out`` after its last finished
    round. ``engineer`` (a :class:`floe.Engineer`) replaces ``config.engineer``. Returns the
    run's state: ``history`` (what the engineer read), ``designs``, ``rounds_done``.

    Raises :class:`floe.ConfigError` for bad settings, a folder holding another run, or a
    resumed run with other settings."""
    return Rounds(model, out, config or RoundsConfig(), resume=resume, engineer=engineer, say=say).run()
