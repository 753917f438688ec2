"""Validation: a Hugging Face model's greedy answers to the fixed validation set, verified in
one batch and counted by kind per map size as ``floe train`` counts them
(:func:`floe.validation_counts`), and the tables of a count."""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

from .._floe import FAILURE_KINDS, Instance, prompt, validation_counts


def chat_prompts(tokenizer: Any, instances: Sequence[Instance], system: Optional[str] = None) -> list:
    """The paper's prompt of each instance through the tokenizer's chat template, ready for
    the assistant's answer."""
    texts = []
    for inst in instances:
        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": prompt(inst)})
        texts.append(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
    return texts


def generate_texts(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int, batch: int) -> tuple:
    """Greedy completions of ``texts`` in batches: ``(completions, generated tokens)``."""
    import torch

    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    out, generated = [], 0
    try:
        for at in range(0, len(texts), batch):
            enc = tokenizer(list(texts[at : at + batch]), return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            with torch.no_grad():
                ids = model.generate(
                    **enc,
                    max_new_tokens=max_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )
            new = ids[:, enc["input_ids"].shape[1] :]
            for row in new:
                keep = row[row != tokenizer.pad_token_id]
                generated += int(keep.numel())
                out.append(tokenizer.decode(keep, skip_special_tokens=True))
    finally:
        tokenizer.padding_side = side
    return out, generated


def validate(
    model: Any,
    tokenizer: Any,
    instances: Sequence[Instance],
    *,
    max_tokens: int,
    batch: int = 16,
    system: Optional[str] = None,
) -> dict:
    """Answers ``instances`` greedily and counts the verdicts: :func:`floe.validation_counts`'s
    ``cells`` and ``per_size``, with ``valid_rate``, ``optimal_rate`` over all instances,
    ``answers``, ``generated_tokens`` and ``seconds``."""
    was_training = model.training
    model.eval()
    t0 = time.perf_counter()
    try:
        answers, generated = generate_texts(model, tokenizer, chat_prompts(tokenizer, instances, system), max_tokens, batch)
    finally:
        model.train(was_training)
    counts = validation_counts(list(instances), answers)
    n = sum(c["instances"] for c in counts["cells"]) or 1
    counts["valid_rate"] = sum(c["valid"] for c in counts["cells"]) / n
    counts["optimal_rate"] = sum(c["optimal"] for c in counts["cells"]) / n
    counts["answers"] = answers
    counts["generated_tokens"] = generated
    counts["seconds"] = time.perf_counter() - t0
    return counts


def table(counts: dict) -> str:
    """The count as Markdown, as ``floe train``'s ``eval.md``: valid / optimal % per agent count
    × map size with the mean over sizes, then the failures by kind per cell."""
    cells = counts["cells"]
    sizes = sorted({c["size"] for c in cells})
    agents = sorted({c["agents"] for c in cells})
    by = {(c["agents"], c["size"]): c for c in cells}
    lines = ["| agents |" + "".join(f" {z}x{z} |" for z in sizes) + " mean |"]
    lines.append("|---|" + "---|" * (len(sizes) + 1))
    for k in agents:
        row, vs, os_ = f"| {k} |", [], []
        for z in sizes:
            c = by.get((k, z))
            if c is None:
                row += " – |"
                continue
            v, o = 100 * c["valid"] / max(c["instances"], 1), 100 * c["optimal"] / max(c["instances"], 1)
            vs.append(v)
            os_.append(o)
            row += f" {v:.2f} / {o:.2f} |"
        row += f" {sum(vs) / max(len(vs), 1):.2f} / {sum(os_) / max(len(os_), 1):.2f} |"
        lines.append(row)
    lines += ["", "valid % / optimal %; mean = unweighted mean over map sizes", ""]
    lines.append("| agents | size | instances | valid | optimal |" + "".join(f" {k} |" for k in FAILURE_KINDS))
    lines.append("|---|---|---|---|---|" + "---|" * len(FAILURE_KINDS))
    for c in cells:
        row = f"| {c['agents']} | {c['size']} | {c['instances']} | {c['valid']} | {c['optimal']} |"
        lines.append(row + "".join(f" {c['failures'].get(k, 0)} |" for k in FAILURE_KINDS))
    return "\n".join(lines) + "\n"
