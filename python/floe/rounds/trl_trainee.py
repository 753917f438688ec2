"""A Hugging Face causal language model as a trainee of the round protocol, trained with TRL's
``GRPOTrainer`` on floe's prompts and reward. The protocol itself (designs, seeds, validation and
its count, the run folder) is floe-rounds' (:mod:`floe.rounds.driver`); here is what is TRL's:
a round's GRPO, greedy answers, and the model saved after each round as ``round-<r>/``.
"""

from __future__ import annotations

import gc
import os
import shutil
import time
from typing import Any, Callable, Optional, Sequence

from .._floe import Engineer, Instance, RunSettings, model_folder, prompt, resume_model, trainer_folder, verify_batch
from ..datasets import to_hf_dataset
from ..rewards import trl_reward
from .driver import RunState, drive

#: TRL arguments floe sets for every round unless the settings' ``trl`` sets them.
TRL_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "num_generations": 4,
    "max_completion_length": 256,
    "learning_rate": 1e-6,
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
}


def trl_args(cfg: RunSettings) -> dict:
    """TRL's arguments as every round uses them (the settings' ``trl`` over
    :data:`TRL_DEFAULTS`), before floe's own per round."""
    return {**TRL_DEFAULTS, **cfg.trl}


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


def save_model(final: str, model: Any, tokenizer: Any) -> str:
    """Saves the model into the folder ``final`` (:func:`floe._floe.model_folder`'s) through a
    temporary folder, so that a folder there is whole."""
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return final


def chat_prompts(tokenizer: Any, instances: Sequence[Instance], system: Optional[str] = None) -> list:
    """The paper's prompt of each instance through the tokenizer's chat template, ready for
    the assistant's answer."""
    head = [{"role": "system", "content": system}] if system is not None else []
    return [
        tokenizer.apply_chat_template(head + [{"role": "user", "content": prompt(i)}], add_generation_prompt=True, tokenize=False)
        for i in instances
    ]


def greedy_answers(model: Any, tokenizer: Any, instances: Sequence[Instance], system: Optional[str], max_tokens: int, batch: int, bf16: bool = False) -> tuple:
    """The model's greedy answers to ``instances`` (their chat prompts), decoded in batches, in
    eval mode: ``(answers, generated tokens)``. With ``bf16`` the model runs under bfloat16
    autocast (its weights stay as they are), as TRL's ``bf16`` trains it: on a CPU with AVX-512
    BF16 a prompt's prefill is several times faster."""
    import contextlib

    import torch

    cast = torch.autocast(model.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    texts = chat_prompts(tokenizer, instances, system)
    side, was_training = tokenizer.padding_side, model.training
    tokenizer.padding_side = "left"
    model.eval()
    out, generated = [], 0
    try:
        for at in range(0, len(texts), batch):
            enc = tokenizer(list(texts[at : at + batch]), return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            with torch.no_grad(), cast:
                ids = model.generate(**enc, max_new_tokens=max_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id)
            for row in ids[:, enc["input_ids"].shape[1] :]:
                keep = row[row != tokenizer.pad_token_id]
                generated += int(keep.numel())
                out.append(tokenizer.decode(keep, skip_special_tokens=True))
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return out, generated


def supervised_warm_start(model: Any, tokenizer: Any, cfg: RunSettings, out: str) -> tuple:
    """TRL's ``SFTTrainer`` on the generator's optimal plans written in the prompt's answer
    format (the settings' ``warm_start``: ``steps``, ``samples``, ``config``, ``learning_rate``,
    ``batch_size``), the loss on the answer's tokens only (prompt-completion data). Returns the
    trained model and the warm start's figures (its logged steps, its seconds)."""
    import datasets
    from trl import SFTConfig, SFTTrainer

    w, trl = cfg.warm_start, trl_args(cfg)
    seed, data = cfg.warm_start_data()
    system = [{"role": "system", "content": cfg.system}] if cfg.system is not None else []
    rows = [
        {
            "prompt": system + [{"role": "user", "content": prompt(inst)}],
            "completion": [{"role": "assistant", "content": plan}],
        }
        for inst, plan in data
    ]
    args = SFTConfig(
        output_dir=trainer_folder(out, "trl", "warm start"),
        max_steps=int(w["steps"]),
        learning_rate=float(w["learning_rate"]),
        per_device_train_batch_size=int(w["batch_size"]),
        completion_only_loss=True,
        max_length=None,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=seed,
        use_cpu=bool(trl.get("use_cpu", False)),
        bf16=bool(trl.get("bf16", False)),
        gradient_checkpointing=bool(trl.get("gradient_checkpointing", True)),
    )
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=datasets.Dataset.from_list(rows), processing_class=tokenizer
    )
    t0 = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - t0
    model = trainer.model
    log = [dict(e) for e in trainer.state.log_history if "loss" in e and "train_runtime" not in e]
    for e in log:
        e.update(phase="warm_start", step=int(e["step"]) - 1)
    del trainer
    gc.collect()
    return model, {"steps": log, "train_s": seconds}


class TrlTrainee:
    """The model in folder ``model`` trained round by round with TRL's ``GRPOTrainer``."""

    def __init__(self, model: str, config: RunSettings, out: str) -> None:
        self.cfg = config
        self.model_path = os.path.abspath(model)
        self.out = out
        self.model, self.tokenizer = load_model(self.model_path)
        self._reward: Optional[Callable] = None
        self._base: Optional[tuple] = None

    @property
    def reward(self) -> Callable:
        """The run's reward (its settings' ``reward``) as TRL's reward function, made once."""
        if self._reward is None:
            spec = self.cfg.reward_spec()
            self._reward = trl_reward(spec["name"], spec["params"], spec["library"])
        return self._reward

    def current_model(self) -> tuple:
        """The model as it is now (the ``self`` engineer)."""
        return self.model, self.tokenizer

    def base_model(self) -> tuple:
        """The round-0 model (the ``base`` engineer), loaded once, on the trainee's device."""
        if self._base is None:
            self._base = load_model(self.model_path, self.model.device)
        return self._base

    def describe(self) -> str:
        n = sum(p.numel() for p in self.model.parameters())
        return f"{n} parameters ({self.model_path})"

    def restore(self, folder: str, saved: Optional[dict]) -> Optional[dict]:
        path = resume_model(folder, saved)
        if path is not None:
            self.model, self.tokenizer = load_model(path)
        return saved

    def warm_start(self) -> Optional[dict]:
        """Supervised fine-tuning on optimal plans (:func:`supervised_warm_start`); None without
        a ``warm_start`` in the settings."""
        if not self.cfg.warm_start:
            return None
        self.model, figures = supervised_warm_start(self.model, self.tokenizer, self.cfg, self.out)
        return figures

    def train(self, round: dict) -> dict:
        """GRPO on the round's prompts; the figures of the round's training."""
        from trl import GRPOConfig, GRPOTrainer

        cfg, r, instances = self.cfg, round["round"], round["instances"]
        dataset = to_hf_dataset(instances, cfg.system).add_column("index", list(range(len(instances))))
        generated = {"tokens": 0, "completions": 0}
        samples: list = []
        reward = self.reward

        def floe_reward(prompts, completions, **kwargs):
            ids = kwargs.get("completion_ids")
            if ids is not None:
                generated["tokens"] += sum(len(x) for x in ids)
            generated["completions"] += len(completions)
            scores = reward(prompts, completions, **kwargs)
            texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
            valid = verify_batch(list(kwargs["instance"]), texts)["valid"]
            samples.extend([int(i), float(s), bool(v)] for i, s, v in zip(kwargs["index"], scores, valid))
            return scores

        floe_reward.__name__ = reward.__name__
        args = GRPOConfig(
            output_dir=trainer_folder(self.out, "trl", f"round {r}"),
            num_train_epochs=cfg.epochs,
            seed=round["trainer_seed"],
            **trl_args(cfg),
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
        for e in log:
            e.update(phase="grpo", round=r, step=round["grpo_steps"] + int(e["step"]) - 1)
        del trainer
        gc.collect()
        return {
            "samples": samples,
            "steps": log,
            "grpo_steps": steps,
            "train_s": seconds,
            "figures": {
                "instances": len(instances),
                "grpo_steps": steps,
                "round_train_s": seconds,
                "steps_per_s": steps / seconds if seconds > 0 else 0.0,
                "generated_tokens": generated["tokens"],
                "completions": generated["completions"],
                "tokens_per_s": generated["tokens"] / seconds if seconds > 0 else 0.0,
            },
        }

    def answer(self, instances: Sequence[Instance]) -> list:
        cfg = self.cfg
        trl = trl_args(cfg)
        max_tokens = cfg.validation_max_tokens or int(trl["max_completion_length"])
        bf16 = bool(trl.get("bf16", False))
        return greedy_answers(self.model, self.tokenizer, instances, cfg.system, max_tokens, cfg.eval_batch, bf16)[0]

    def save(self, stage: str, folder: str, state: dict) -> None:
        path = model_folder(folder, stage)
        if path is not None:
            save_model(path, self.model, self.tokenizer)

    def details(self) -> dict:
        return {"trl": trl_args(self.cfg)}


def run_rounds(
    model: str,
    out: str,
    config: Optional[RunSettings] = None,
    *,
    resume: bool = False,
    engineer: Optional[Engineer] = None,
    say: Optional[Callable[[str], None]] = None,
) -> RunState:
    """Trains the Hugging Face causal language model in folder ``model`` for ``config.rounds``
    rounds of GRPO into the run folder ``out``, the environment engineer (or the curriculum)
    writing each round's configuration after the first; ``resume`` continues a run in ``out``
    after its last finished round. ``engineer`` (a :class:`floe.Engineer`) replaces
    ``config.engineer``. Returns the run's state: ``history`` (what the engineer read),
    ``designs``, ``evals``, ``rounds_done``.

    Raises :class:`floe.ConfigError` for bad settings, a folder holding another run, or a
    resumed run with other settings."""
    cfg = config or RunSettings()
    trainee = TrlTrainee(model, cfg, out)
    return drive(trainee, cfg, out, model=model, trainer="trl", engineer=engineer, resume=resume, say=say)
