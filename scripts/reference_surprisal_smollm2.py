#!/usr/bin/env python3
"""minicons' word surprisal on the real SmolLM2-135M-Instruct (the GGUF the test command fetches),
for tests/all/surprisal.rs.

Run by a developer, not by CI (needs torch, transformers 5, gguf and minicons from PyPI):

    ~/.cache/clozelab/venv-ref/bin/python scripts/reference_surprisal_smollm2.py \
        --gguf ~/.cache/clozelab/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
        --out tests/fixtures/surprisal_minicons_smollm2.json

transformers reads the GGUF (dequantized, here in float64) with its tokenizer, whose bos_token is
the file's `tokenizer.ggml.bos_token_id` (`<|im_start|>`); minicons' IncrementalLMScorer then
records each word's surprisal in bits from

    word_score_tokenized(text, tokenize_function=str.split, bow_correction=True,
                         bos_token=True, surprisal=True, base_two=True)

the call scripts/reference_surprisal.py makes for the random test models.
"""
import argparse
import hashlib
import json
import os
from pathlib import Path

import minicons
from minicons import scorer

from reference_smollm2 import load_gguf
from reference_surprisal import TEXTS, minicons_words


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    tokenizer, model = load_gguf(args.gguf)
    lm = scorer.IncrementalLMScorer(model, device="cpu", tokenizer=tokenizer)
    cases = [{"text": text, "words": minicons_words(lm, text)} for text in TEXTS]
    head = {
        "generator": "scripts/reference_surprisal_smollm2.py",
        "model": os.path.basename(args.gguf),
        "sha256": hashlib.sha256(Path(args.gguf).read_bytes()).hexdigest(),
        "bos_token": tokenizer.bos_token,
        "dtype": "float64",
        "minicons": getattr(minicons, "__version__", "unknown"),
    }
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    Path(args.out).write_text(json.dumps(head, ensure_ascii=False)[:-1] + f', "cases": [\n{lines}\n]}}\n')
    print(f"wrote {args.out}: {len(cases)} texts")


if __name__ == "__main__":
    main()
