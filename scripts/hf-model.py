"""SmolLM2-135M-Instruct as a Hugging Face model folder (safetensors), made once from the GGUF
file that scripts/setup.sh downloads, for floe.rounds' tests and CPU runs.

transformers reads a GGUF file with ``from_pretrained(dir, gguf_file=...)`` (through the ``gguf``
package), dequantizing its Q4_1 weights to float32; ``save_pretrained`` refuses a model loaded so
(it is marked as quantized), so its weights are moved into a plain model of the same
configuration, which is saved as safetensors. SmolLM2 ties its output layer to its
embeddings, so the folder has no ``lm_head`` weight. Idempotent: a folder whose ``source.json``
names the same GGUF file (size and SHA-256) is left as it is.

    python scripts/hf-model.py [--gguf FILE] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GGUF = os.path.join(ROOT, "third_party", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
OUT = os.path.join(ROOT, "third_party", "models", "SmolLM2-135M-Instruct")


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def convert(gguf: str, out: str) -> bool:
    """Writes the folder ``out`` from ``gguf``; False when it was already made from that file."""
    source = {"gguf": os.path.basename(gguf), "bytes": os.path.getsize(gguf), "sha256": sha256(gguf)}
    stamp = os.path.join(out, "source.json")
    if os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            if json.load(f) == source:
                return False
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = os.path.split(os.path.abspath(gguf))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    # The loaded model is marked as quantized with gguf, which save_pretrained refuses: its
    # (dequantized) weights go into a plain model of the same configuration.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=loaded.dtype)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # Tied embeddings: the output layer is the embedding table, not a weight of its own.
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise SystemExit(f"{gguf}: weights do not match the model: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    if not model.config.tie_word_embeddings:
        raise SystemExit(f"{gguf}: expected tied embeddings (SmolLM2 has no lm_head of its own)")
    if not tokenizer.chat_template:
        raise SystemExit(f"{gguf}: the GGUF file carries no chat template")
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    with open(os.path.join(tmp, "source.json"), "w", encoding="utf-8") as f:
        json.dump(source, f, indent=1)
        f.write("\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return True


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gguf", default=GGUF)
    p.add_argument("--out", default=OUT)
    a = p.parse_args()
    if not os.path.exists(a.gguf):
        print(f"hf-model: {a.gguf} is missing (scripts/setup.sh downloads it)", file=sys.stderr)
        return 1
    made = convert(a.gguf, a.out)
    print(f"hf-model: {a.out} {'written' if made else 'is up to date'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
