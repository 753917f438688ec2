"""The environment engineer that is one of the trainee's own models: its current checkpoint
(``self``) or the round-0 model (``base``); floe's driver makes it (an OpenAI-compatible server,
a URL, and a floe engineer plugin, a name, are floe's own).

A Hugging Face model answers through floe's own language-model engineer
(:meth:`floe.Engineer.from_model`): floe gives it the context, the reply's JSON schema and GBNF
grammar (both derived from the configuration type and the run's design limits) and a seed; the
model writes the reply through its chat template, its tokens constrained by the schema (or the
grammar) with xgrammar; floe reads the reply strictly, asks again on an unusable one, clamps it
into the limits, or keeps the previous configuration and says why.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .._floe import ConfigError


def bounded_strings(schema: Any) -> Any:
    """``schema`` with every string that has a ``maxLength`` (the reply's rationale) written as a
    pattern of the same lengths that JSON accepts: no control characters, quotes or backslashes.
    xgrammar 0.2 writes a string with ``maxLength`` as any characters but quotes, backslashes
    and line breaks, so a tab could enter a reply that no JSON reader then accepts."""
    if isinstance(schema, list):
        return [bounded_strings(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded_strings(v) for k, v in schema.items()}
    if out.get("type") == "string" and "maxLength" in out and "pattern" not in out:
        # The lengths go into the pattern (xgrammar takes a pattern instead of them).
        lo, hi = int(out.pop("minLength", 0)), int(out.pop("maxLength"))
        out["pattern"] = '^[^\\x00-\\x1f"\\\\]{%d,%d}$' % (lo, hi)
    return out


class ModelEngineer:
    """Answers floe's engineer requests (see :meth:`floe.Engineer.from_model`) with a Hugging
    Face causal language model.

    ``model`` returns the ``(model, tokenizer)`` to ask, when asked (the trainee as it is now,
    or the round-0 model). ``constraint``: ``"schema"`` (the reply's JSON schema),
    ``"grammar"`` (floe's GBNF grammar) or ``"none"``. ``temperature`` 0 decodes greedily.
    """

    def __init__(
        self,
        model: Callable[[], tuple],
        *,
        max_tokens: int = 640,
        temperature: float = 0.7,
        constraint: str = "schema",
    ) -> None:
        if constraint not in ("schema", "grammar", "none"):
            raise ConfigError(f"constraint {constraint!r}: one of 'schema', 'grammar', 'none'")
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.constraint = constraint
        self._tokenizer_info: dict = {}
        #: Generated tokens and seconds of every request, for the run's figures.
        self.calls: list = []

    def processors(self, tokenizer: Any, model: Any, request: dict) -> list:
        """The logits processors that hold the reply to the schema or grammar."""
        if self.constraint == "none":
            return []
        import xgrammar as xgr

        key = id(tokenizer)
        if key not in self._tokenizer_info:
            # The mask must cover the model's logits, which may be padded past the tokenizer.
            info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=model.config.vocab_size)
            # Without its cache: xgrammar 0.2.8's cache fails a check on the pattern that
            # bounded_strings writes ("per_rule_fsm_hashes"); a reply's grammar is small.
            self._tokenizer_info[key] = (tokenizer, xgr.GrammarCompiler(info, cache_enabled=False))
        compiler = self._tokenizer_info[key][1]
        if self.constraint == "schema":
            schema = json.dumps(bounded_strings(request["schema"]))
            compiled = compiler.compile_json_schema(schema, any_whitespace=False)
        else:
            compiled = compiler.compile_grammar(request["grammar"])
        return [xgr.contrib.hf.LogitsProcessor(compiled)]

    def __call__(self, request: dict) -> str:
        import time

        import torch

        model, tokenizer = self.model()
        messages = [
            {"role": "system", "content": request["system"]},
            {"role": "user", "content": request["user"]},
        ]
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        enc = tokenizer(text, return_tensors="pt", add_special_tokens=False).to(model.device)
        # Plain sampling at the temperature (no top-k or top-p cut), or greedy decoding.
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature, "top_k": 0, "top_p": 1.0}
        else:
            sampling = {"do_sample": False}
        devices = [model.device.index or 0] if model.device.type == "cuda" else []
        was_training = model.training
        model.eval()
        t0 = time.perf_counter()
        try:
            with torch.random.fork_rng(devices=devices), torch.no_grad():
                torch.manual_seed(int(request["seed"]) % (1 << 63))
                ids = model.generate(
                    **enc,
                    max_new_tokens=self.max_tokens,
                    logits_processor=self.processors(tokenizer, model, request),
                    pad_token_id=tokenizer.pad_token_id,
                    **sampling,
                )
        finally:
            model.train(was_training)
        new = ids[0, enc["input_ids"].shape[1] :]
        self.calls.append({"tokens": int(new.numel()), "seconds": time.perf_counter() - t0})
        return tokenizer.decode(new, skip_special_tokens=True)
