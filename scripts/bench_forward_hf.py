#!/usr/bin/env python3
"""Baseline for `clozelab bench forward`: Hugging Face transformers, same weights and workload,
on the CPU (or CUDA with CLOZELAB_HF_DEVICE=cuda), for any family the folder's config names
(GPT-2, GPT-NeoX, Llama). Prints one JSON object of tokens/s. Called by the Rust benchmark, not by
hand. Every pass computes the last position's logits only (`logits_to_keep=1`), as clozelab's
does."""
import argparse
import json
import os
import statistics
import time

import torch
from transformers import AutoModelForCausalLM


def decode_from_prefix(model, ids, batch, steps, tensor, sync):
    """Seconds to decode `steps` tokens in `batch` rows sharing the prefix `ids` (untimed)."""
    out = model(ids, use_cache=True, logits_to_keep=1)
    past = out.past_key_values
    t = time.perf_counter()
    past.batch_repeat_interleave(batch)  # transformers copies the prefix per row
    for step in range(steps):
        rows = tensor([[500 + b * 31 + step] for b in range(batch)])
        out = model(rows, past_key_values=past, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        sync(out.logits)
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--workload", required=True)
    a = p.parse_args()
    w = json.loads(a.workload)
    device = os.environ.get("CLOZELAB_HF_DEVICE", "cpu")
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32).to(device)
    model.eval()
    ids = torch.tensor([[262 + (i * 7919) % 40000 for i in range(w["prefill"])]], device=device)

    def tensor(rows):
        return torch.tensor(rows, device=device)

    def sync(logits):
        # Reading the arg-max back ends the timed region, as the Rust side does.
        logits[:, -1].argmax(-1).tolist()
    prefill, decode1 = [], []
    decode_b = {batch: [] for batch in w["batches"]}
    with torch.inference_mode():
        for rnd in range(w["repeats"] + 1):
            t = time.perf_counter()
            out = model(ids, use_cache=True, logits_to_keep=1)
            sync(out.logits)
            t_prefill = time.perf_counter() - t
            past = out.past_key_values
            t = time.perf_counter()
            for step in range(w["decode_steps_batch1"]):
                out = model(tensor([[1000 + step]]), past_key_values=past, use_cache=True, logits_to_keep=1)
                past = out.past_key_values
                sync(out.logits)
            t_decode1 = time.perf_counter() - t
            t_batched = [decode_from_prefix(model, ids, batch, w["decode_steps_batched"], tensor, sync)
                         for batch in w["batches"]]
            if rnd > 0:
                prefill.append(w["prefill"] / t_prefill)
                decode1.append(w["decode_steps_batch1"] / t_decode1)
                for batch, t_b in zip(w["batches"], t_batched):
                    decode_b[batch].append(batch * w["decode_steps_batched"] / t_b)
    print(json.dumps({
        "system": f"transformers {__import__('transformers').__version__} {type(model).__name__} (torch {torch.__version__}, " + (f"CPU, {torch.get_num_threads()} threads)" if device == "cpu" else f"{torch.cuda.get_device_name()})"),
        "prefill": statistics.median(prefill),
        "decode_batch1": statistics.median(decode1),
        **{f"decode_batch{batch}": statistics.median(v) for batch, v in decode_b.items()},
    }))


if __name__ == "__main__":
    main()
