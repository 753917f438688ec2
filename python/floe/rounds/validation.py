"""A Hugging Face model's greedy answers to a set of instances (the validation set, a suite):
the paper's prompts through the chat template, decoded in batches. The round driver verifies and
counts them (floe-rounds' tables, the ones ``floe train`` writes)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .._floe import Instance, prompt


def chat_prompts(tokenizer: Any, instances: Sequence[Instance], system: Optional[str] = None) -> list:
    """The paper's prompt of each instance through the tokenizer's chat template, ready for
    the assistant's answer."""
    texts = []
    for inst in instances:
        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": prompt(inst)})
        texts.append(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))
    return texts


def generate_texts(model: Any, tokenizer: Any, texts: Sequence[str], max_tokens: int, batch: int, bf16: bool = False) -> tuple:
    """Greedy completions of ``texts`` in batches: ``(completions, generated tokens)``. With
    ``bf16`` the model runs under bfloat16 autocast (its weights stay as they are), as TRL's
    ``bf16`` trains it: on a CPU with AVX-512 BF16 a prompt's prefill is several times faster."""
    import contextlib

    import torch

    cast = torch.autocast(model.device.type, dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()

    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    out, generated = [], 0
    try:
        for at in range(0, len(texts), batch):
            enc = tokenizer(list(texts[at : at + batch]), return_tensors="pt", padding=True, add_special_tokens=False)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            with torch.no_grad(), cast:
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
