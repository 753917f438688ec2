#!/usr/bin/env python3
"""A language model's generation and supervised-step speed in floe.rounds, before and after the CPU
settings of configs/rounds/cpu-learn.json, side by side in one run:

    .venv/python-test/bin/python scripts/bench/llm-cpu.py [MODEL] [--prompts 64]

- validation: greedy answers to the same prompts (2 agents, 3×3 to 5×5), `before` in float32
  in batches of 16 (floe.rounds' defaults), `after` under bfloat16 autocast in batches of 32;
  generated tokens/s and answers/s;
- supervised steps: 3 of TRL's SFTTrainer (batch 8), `before` with TRL's defaults (float32,
  gradient checkpointing), `after` with bf16 and no checkpointing; seconds a step (the first
  step included);
- GRPO steps (`--grpo-steps`, 2 by default; 0 skips them): TRL's GRPOTrainer as cpu-learn.json's
  rounds run it (16 completions a step, 8 a prompt, up to 128 tokens, temperature 1), `before`
  and `after` as above; seconds a step and generated tokens/s.
MODEL defaults to SmolLM2-135M-Instruct (third_party/models/); a warm-started folder answers at
its real length. Prints a Markdown table; nothing is written but TRL's scratch in a temp folder.
"""

import argparse
import os
import sys
import tempfile
import time

import floe
from floe.rounds import RunSettings
from floe.rounds.trl_trainee import TrlTrainee, greedy_answers, supervised_warm_start

ROUND0 = {
    "sizes": [{"size": s, "data_ratio": 1 / 3, "hole_ratio": 0.2, "wait_ratio": 0.5} for s in (3, 4, 5)],
    "agents": [2],
}
BEFORE = {"use_cpu": True, "bf16": False}
AFTER = {"use_cpu": True, "bf16": True, "gradient_checkpointing": False}
#: cpu-learn.json's GRPO step.
GRPO = {"num_generations": 8, "per_device_train_batch_size": 16, "max_completion_length": 128, "temperature": 1.0}


def settings(trl):
    return RunSettings.from_dict(
        {
            "round0": ROUND0,
            "design_limits": {"min_size": 3, "max_size": 5, "agents": [2]},
            "reward_params": {"prefix_credit": 0.0, "goal_credit": 0.0},
            "warm_start": {"steps": 3, "samples": 24, "batch_size": 8, "answer": "letters"},
            "validation_max_tokens": 40,
            "engineer": "fixed",
            "trl": trl,
        }
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="?", default="third_party/models/SmolLM2-135M-Instruct")
    p.add_argument("--prompts", type=int, default=64)
    p.add_argument("--grpo-steps", type=int, default=2)
    a = p.parse_args()
    instances = floe.round_instances(ROUND0, a.prompts, seed=99)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, trl, batch in (("before", BEFORE, 16), ("after", AFTER, 32)):
            cfg = settings(trl)
            t = TrlTrainee(a.model, cfg, tmp)
            t0 = time.perf_counter()
            answers, tokens = greedy_answers(t.model, t.tokenizer, instances, None, 40, batch, bool(trl["bf16"]))
            gen_s = time.perf_counter() - t0
            valid = int(floe.verify_batch(instances, answers)["valid"].sum())
            model, sft = supervised_warm_start(t.model, t.tokenizer, cfg, tmp)
            t.model = model
            sft_s = sft["train_s"] / len(sft["steps"])
            grpo = "—"
            if a.grpo_steps > 0:
                t.cfg = settings({**trl, **GRPO, "max_steps": a.grpo_steps})
                got = t.train({"round": 0, "instances": instances[:16], "seed": 1, "grpo_steps": 0})["figures"]
                grpo = f"{got['round_train_s'] / got['grpo_steps']:.1f}, {got['tokens_per_s']:.1f}"
            rows.append((name, batch, tokens, gen_s, valid, sft_s, grpo))
            print(f"{name}: done", file=sys.stderr, flush=True)
    print(f"{a.prompts} validation prompts, {os.cpu_count()} CPUs, torch threads {__import__('torch').get_num_threads()}\n")
    print("| settings | validation: batch, tokens, tokens/s, answers/s, valid | SFT s/step | GRPO: s/step, tokens/s |")
    print("|---|---|---|---|")
    for name, batch, tokens, gen_s, valid, sft_s, grpo in rows:
        print(f"| {name} | {batch}, {tokens}, {tokens / gen_s:.1f}, {a.prompts / gen_s:.2f}, {valid} | {sft_s:.1f} | {grpo} |")


if __name__ == "__main__":
    main()
