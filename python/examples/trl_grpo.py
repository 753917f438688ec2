"""TRL's GRPOTrainer on floe's prompts with floe's reward: the plumbing, not the learning.

A tiny causal language model (a two-layer Llama with random weights) and a character-level
tokenizer with a chat template are made here, so nothing is downloaded from a model hub; the
dataset is floe's prompts (``floe.to_hf_dataset``) and the reward is ``floe.trl_reward``, the
batched verifier and the ``tiered`` reward plugin of ``floe train``. A few GRPO steps run on the
CPU; swap in a real model name for ``model`` (and drop ``processing_class``) to train one.

    python python/examples/trl_grpo.py --steps 2 --out /tmp/floe-grpo
"""

from __future__ import annotations

import argparse
import string

import floe

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]


def char_tokenizer():
    """A character-level tokenizer over printable ASCII, with the chat template above."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    chars = [c for c in string.printable if c not in "\r\x0b\x0c"]
    vocab = {t: n for n, t in enumerate(SPECIAL + chars)}
    # BPE without merges reads one character per token; Fuse joins them back without spaces.
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.add_special_tokens(SPECIAL)
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        padding_side="left",
        chat_template=CHAT_TEMPLATE,
    )


def tiny_model(tokenizer, seed: int = 0):
    """A two-layer Llama with random weights, sized for the tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)


def run(steps: int = 2, out: str = "floe-grpo", seed: int = 0):
    """Trains for ``steps`` GRPO steps; returns the trainer and the reward calls it made, each
    ``(completions, instances, rewards)``."""
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = char_tokenizer()
    model = tiny_model(tokenizer, seed)
    # 2-agent 3x3 maps keep the prompts short for a character-level model.
    dataset = floe.to_hf_dataset(floe.generate(2, 3, count=8, seed=1))
    reward = floe.trl_reward("tiered")
    calls = []

    def floe_tiered(prompts, completions, **kwargs):
        rewards = reward(prompts, completions, **kwargs)
        calls.append((completions, list(kwargs["instance"]), rewards))
        return rewards

    args = GRPOConfig(
        output_dir=out,
        max_steps=steps,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=24,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=seed,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=floe_tiered,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    return trainer, calls


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--out", default="floe-grpo")
    a = p.parse_args()
    trainer, calls = run(a.steps, a.out)
    for entry in trainer.state.log_history:
        print(entry)
    print(f"{len(calls)} reward calls, {sum(len(r) for _, _, r in calls)} completions scored by floe")


if __name__ == "__main__":
    main()
