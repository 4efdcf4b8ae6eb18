#!/usr/bin/env python3
"""Words per second of `clozelab predictors` against minicons on the same corpus, model and
machine, in one run: minicons' `IncrementalLMScorer.word_score_tokenized(…,
bow_correction=True)` (the canonical surprisal with the beginning-of-word correction, what
`predictors --canonical-only` computes) on SmolLM2-135M-Instruct, which transformers reads from
the same GGUF file clozelab reads (dequantized to float32), over Provo's 55 passages.

Run by a developer (needs torch + transformers + gguf + minicons, the reference scripts' venv):

    python3 scripts/bench_predictors.py --gguf "$(bash scripts/fetch_smollm2.sh)" [--passages 55] [--batch 4] [--repeats 3]

It prints, for each round (minicons, then clozelab), each side's words/s (minicons timed from its
first call, after loading; clozelab's scoring alone, from its own progress log, and its whole
process with loading), the ratios (scoring alone against scoring alone; and each side's loading
included: minicons' transformers loading the GGUF, timed once, against clozelab's whole process) and the largest difference between the two surprisals, which
must stay within 1e-3 bits for the work to be the same; then the median ratio over the rounds.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import statistics
import time
from pathlib import Path

import torch
from minicons import scorer

sys.path.insert(0, os.path.dirname(__file__))
from reference_smollm2 import load_gguf  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def cli_binary():
    """CLOZELAB_BIN, else the release build, else the test command's (a dev build: slower)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/clozelab/target")))
    for candidate in [os.environ.get("CLOZELAB_BIN"), target / "release/clozelab", target / "debug/clozelab"]:
        if candidate and Path(candidate).is_file():
            return str(candidate)
    sys.exit("build the CLI first (`cargo build --release`) or set CLOZELAB_BIN")


def provo_passages(path, limit):
    """Each Provo text's whole passage: its last context and that context's word."""
    last = {}
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if row["word_num"] > last.get(row["text_id"], (0, ""))[0]:
                last[row["text_id"]] = (row["word_num"], row["context"] + " " + row["original"])
    return [(f"provo-{k}", last[k][1]) for k in sorted(last)][:limit]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--provo", default=str(ROOT.parent / "shared" / "provo" / "provo_cloze.jsonl"))
    parser.add_argument("--passages", type=int, default=55)
    parser.add_argument("--batch", type=int, default=4, help="passages per minicons call")
    parser.add_argument("--repeats", type=int, default=3, help="rounds, each running minicons then clozelab")
    args = parser.parse_args()
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    items = provo_passages(args.provo, args.passages)
    words = sum(len(text.split()) for _, text in items)

    start = time.perf_counter()
    tokenizer, model = load_gguf(args.gguf)
    lm = scorer.IncrementalLMScorer(model, tokenizer=tokenizer, device="cpu")
    minicons_load_s = time.perf_counter() - start
    print(f"corpus: {len(items)} Provo passages, {words} words; model: {os.path.basename(args.gguf)}; {threads} threads;"
          f" minicons loaded the GGUF through transformers in {minicons_load_s:.2f} s (counted once, in every round's"
          f" with-loading ratio: clozelab's process loads it each time)")
    # The two alternate, round after round, so that a slower spell of a shared machine falls on
    # both; each round's ratio is printed and their median is the figure.
    rounds = []
    for round_ in range(1, args.repeats + 1):
        minicons_s, theirs = run_minicons(lm, items, args.batch)
        clozelab_s, scoring_s, ours = run_clozelab(args.gguf, items, threads)
        if len(ours) != len(theirs):
            sys.exit(f"clozelab scored {len(ours)} words, minicons {len(theirs)}")
        worst = max(abs(a - b) for a, b in zip(ours, theirs))
        rounds.append((minicons_s / scoring_s, (minicons_load_s + minicons_s) / clozelab_s))
        print(f"round {round_}: minicons (batches of {args.batch}) {minicons_s:.2f} s, {words / minicons_s:.1f} words/s;"
              f" clozelab {scoring_s:.2f} s scoring alone, {words / scoring_s:.1f} words/s,"
              f" {clozelab_s:.2f} s with loading, {words / clozelab_s:.1f} words/s;"
              f" ratio {rounds[-1][0]:.2f}x scoring alone, {rounds[-1][1]:.2f}x with each side's loading;"
              f" largest |difference| {worst:.2e} bits")
        if worst > 1e-3:
            sys.exit("the two computed different surprisals: not the same work")
    alone = statistics.median(r[0] for r in rounds)
    loaded = statistics.median(r[1] for r in rounds)
    print(f"ratio clozelab/minicons, median of {len(rounds)} rounds: {alone:.2f}x scoring alone"
          f" (range {min(r[0] for r in rounds):.2f}-{max(r[0] for r in rounds):.2f}),"
          f" {loaded:.2f}x with each side's loading (range {min(r[1] for r in rounds):.2f}-{max(r[1] for r in rounds):.2f})")


def run_minicons(lm, items, batch):
    """minicons' seconds (after loading) and its surprisals, word by word."""
    theirs = []
    start = time.perf_counter()
    for i in range(0, len(items), batch):
        scored = lm.word_score_tokenized(
            [text for _, text in items[i : i + batch]],
            tokenize_function=str.split, bow_correction=True, bos_token=True, surprisal=True, base_two=True,
        )
        theirs.extend(float(s) for passage in scored for _, s in passage)
    return time.perf_counter() - start, theirs


def run_clozelab(gguf, items, threads):
    """clozelab's whole process and its scoring alone, in seconds, and its surprisals."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "provo.tsv"
        with open(corpus, "w", newline="") as f:
            writer = csv.writer(f, delimiter="\t")
            writer.writerow(["item", "text"])
            writer.writerows(items)
        start = time.perf_counter()
        run = subprocess.run(
            [cli_binary(), "predictors", "--corpus", str(corpus), "--model", gguf, "--canonical-only", "--out", tmp],
            check=True,
            env={**os.environ, "RAYON_NUM_THREADS": str(threads)},
            stderr=subprocess.PIPE,
            text=True,
        )
        whole_s = time.perf_counter() - start
        # Its last progress line ("…: 55 of 55 items, 16.6 s") times the scoring alone, after
        # loading, as minicons is timed.
        progress = [l for l in run.stderr.splitlines() if " items, " in l]
        scoring_s = float(progress[-1].rsplit(", ", 1)[1].split()[0]) if progress else whole_s
        with open(Path(tmp) / "predictors.csv") as f:
            ours = [float(row["surprisal_bits"]) for row in csv.DictReader(f)]
    return whole_s, scoring_s, ours


if __name__ == "__main__":
    main()
