#!/usr/bin/env python3
"""GPT-2 on wgpu against the CPU backend (itself tested against Hugging Face to 2e-6), on a
GPU machine where the browser's checks cannot run: one binary, one model folder. Next-token
distributions over the whole vocabulary (top-20 sets, TVD, worst log-prob difference) and exact
word probabilities (every segmentation through the KV cache). Prints one line per check and
exits 1 if a check fails. Called by scripts/gpu_bench.sh."""
import json
import math
import subprocess
import sys

CONTEXTS = ["The quick brown fox jumps over the", "There are now rumblings that Apple might soon",
            "Ask anyone in the world"]
WORDS = ["the", "lazy", "invent", "what", "extraordinarily"]


def run(binary, *args):
    out = subprocess.run([binary, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def next_token(binary, model, backend, context):
    got = run(binary, "next-token", "--model", model, "--context", context, "--top", "50257",
              "--backend", backend)
    return {t["id"]: t["logprob"] for t in got["tokens"]}


def main():
    binary, model = sys.argv[1], sys.argv[2]
    failed = False
    for context in CONTEXTS:
        cpu = next_token(binary, model, "cpu", context)
        gpu = next_token(binary, model, "wgpu", context)
        top = lambda d: set(sorted(d, key=d.get, reverse=True)[:20])
        tvd = 0.5 * sum(abs(math.exp(cpu[i]) - math.exp(gpu[i])) for i in cpu)
        worst = max(abs(cpu[i] - gpu[i]) for i in cpu)
        ok = top(cpu) == top(gpu) and tvd < 1e-3 and worst < 2e-3
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} next token, {context!r}: same top-20 {top(cpu) == top(gpu)}, "
              f"TVD {tvd:.2e}, worst |log p| difference {worst:.2e}")
    for context in CONTEXTS[:2]:
        args = ["word-prob", "--model", model, "--context", context]
        for w in WORDS:
            args += ["--word", w]
        cpu = run(binary, *args, "--backend", "cpu")["words"]
        gpu = run(binary, *args, "--backend", "wgpu")["words"]
        rel = max(abs(a["prob"] - b["prob"]) / a["prob"] for a, b in zip(cpu, gpu))
        ok = rel < 1e-3
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} word probabilities, {context!r}: worst relative difference {rel:.2e}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
