#!/usr/bin/env python3
"""Baseline for `clozelab bench forward`: Hugging Face transformers on the CPU, same weights and
workload. Prints one JSON object of tokens/s. Called by the Rust benchmark, not by hand."""
import argparse
import json
import statistics
import time

import torch
from transformers import GPT2LMHeadModel


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--workload", required=True)
    a = p.parse_args()
    w = json.loads(a.workload)
    model = GPT2LMHeadModel.from_pretrained(a.model, torch_dtype=torch.float32)
    model.eval()
    ids = torch.tensor([[262 + (i * 7919) % 40000 for i in range(w["prefill"])]])
    prefill, decode1, decode_b = [], [], []
    with torch.inference_mode():
        for rnd in range(w["repeats"] + 1):
            t = time.perf_counter()
            out = model(ids, use_cache=True)
            out.logits[:, -1].argmax(-1)
            t_prefill = time.perf_counter() - t
            past = out.past_key_values
            t = time.perf_counter()
            for step in range(w["decode_steps_batch1"]):
                out = model(torch.tensor([[1000 + step]]), past_key_values=past, use_cache=True)
                past = out.past_key_values
                out.logits[:, -1].argmax(-1)
            t_decode1 = time.perf_counter() - t
            out = model(ids, use_cache=True)
            prefix = out.past_key_values
            t = time.perf_counter()
            past = prefix
            past.batch_repeat_interleave(w["batch"])  # transformers copies the prefix per row
            for step in range(w["decode_steps_batched"]):
                rows = torch.tensor([[500 + b * 31 + step] for b in range(w["batch"])])
                out = model(rows, past_key_values=past, use_cache=True)
                past = out.past_key_values
                out.logits[:, -1].argmax(-1)
            t_decode_b = time.perf_counter() - t
            if rnd > 0:
                prefill.append(w["prefill"] / t_prefill)
                decode1.append(w["decode_steps_batch1"] / t_decode1)
                decode_b.append(w["batch"] * w["decode_steps_batched"] / t_decode_b)
    print(json.dumps({
        "system": f"transformers {__import__('transformers').__version__} (torch {torch.__version__}, CPU, {torch.get_num_threads()} threads)",
        "prefill": statistics.median(prefill),
        "decode_batch1": statistics.median(decode1),
        "decode_batched": statistics.median(decode_b),
    }))


if __name__ == "__main__":
    main()
