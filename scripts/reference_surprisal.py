#!/usr/bin/env python3
"""minicons' word surprisal with the beginning-of-word correction, for clozelab's test models.

Run by a developer, not by CI (needs torch + minicons from PyPI):

    python3 -m venv ~/.cache/clozelab/minicons-venv && ~/.cache/clozelab/minicons-venv/bin/pip install minicons
    ~/.cache/clozelab/minicons-venv/bin/python scripts/reference_surprisal.py --out tests/fixtures/surprisal_minicons.json

It writes each test model (two GPT-2s, one GPT-NeoX, one Llama) with the built CLI (`clozelab make-test-model`), loads the folder
into minicons' IncrementalLMScorer (float32, as clozelab runs it) and records, for every text,
each word's surprisal in bits from

    word_score_tokenized(text, tokenize_function=str.split, bow_correction=True,
                         bos_token=True, surprisal=True, base_two=True)

`tests/all/surprisal.rs` computes the same words with clozelab and compares to 1e-3 bits.
Texts have single spaces between words: minicons aligns words to tokens by encoding each word
on its own, which a run of spaces would shift.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import minicons
from minicons import scorer

ROOT = Path(__file__).resolve().parent.parent
# Two random GPT-2s of different shape and seed, so that a formula fitted to one would not pass,
# a random GPT-NeoX (Pythia's architecture, GPT-2's vocabulary; minicons reads its folder
# with transformers' GPT-NeoX tokenizer) and a random Llama (SmolLM2's architecture, 6 query heads
# over 2 key/value heads; its folder ships tokenizer.json, read by the tokenizer class its
# tokenizer_config.json names, as SmolLM2's is).
MODELS = [
    {"seed": 0, "layers": 2, "dim": 64, "heads": 4},
    {"seed": 7, "layers": 3, "dim": 96, "heads": 6},
    {"family": "gpt-neox", "seed": 3, "layers": 2, "dim": 64, "heads": 2},
    {"family": "llama", "seed": 5, "layers": 2, "dim": 96, "heads": 6, "kv-heads": 2},
]
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "It's what they'd've done, isn't it? Yes: no.",
    "In 1999, the U.S. economy grew by 4.2% (or so) -- said the well-known analyst.",
    "Café naïve — 東京 🚀 ok",
    "There are now rumblings that Apple might soon invade the smart watch market, while Google already has a product.",
    "word",
]


def minicons_words(lm, text):
    """Each word of `text` with its surprisal in bits, by the call the fixtures record."""
    scored = lm.word_score_tokenized(
        text,
        tokenize_function=str.split,
        bow_correction=True,
        bos_token=True,
        surprisal=True,
        base_two=True,
    )[0]
    return [[w, float(s)] for w, s in scored]


def cli_binary():
    for candidate in [os.environ.get("CLOZELAB_BIN"), os.path.expanduser("~/.cache/clozelab/target/debug/clozelab"), ROOT / "target/debug/clozelab"]:
        if candidate and Path(candidate).is_file():
            return str(candidate)
    sys.exit("build the CLI first (`source scripts/cargo_env.sh && cargo build`) or set CLOZELAB_BIN")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--tokenizer", default=str(ROOT.parent / "shared" / "gpt2"))
    args = parser.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in MODELS:
            folder = Path(tmp) / f"model-{spec['seed']}"
            subprocess.run(
                [cli_binary(), "make-test-model", "--out", str(folder), "--tokenizer", args.tokenizer]
                + [f"--{k}={v}" for k, v in spec.items()],
                check=True,
            )
            lm = scorer.IncrementalLMScorer(str(folder), device="cpu")
            for text in TEXTS:
                cases.append({"model": spec, "text": text, "words": minicons_words(lm, text)})
    out = {
        "generator": "scripts/reference_surprisal.py",
        "minicons": minicons.__version__ if hasattr(minicons, "__version__") else "unknown",
        "call": "word_score_tokenized(text, tokenize_function=str.split, bow_correction=True, bos_token=True, surprisal=True, base_two=True)",
        "cases": cases,
    }
    # One case a line: small, and a change to one text shows as one line in a diff.
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    head = json.dumps({k: v for k, v in out.items() if k != "cases"}, ensure_ascii=False)[:-1]
    Path(args.out).write_text(f'{head}, "cases": [\n{lines}\n]}}\n')
    print(f"wrote {args.out}: {len(cases)} texts")


if __name__ == "__main__":
    main()
