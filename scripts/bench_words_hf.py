#!/usr/bin/env python3
"""Baseline for `clozelab bench words`: the paper's own procedure (Ilia & Aziz 2024) with
Hugging Face transformers on the CPU (CUDA with CLOZELAB_HF_DEVICE=cuda) — `generate` with do_sample=True, top_k=0,
num_return_sequences=N, 5 new tokens, first word cut from the decoded text — on the same weights
and contexts. Prints one JSON object with seconds per context. Called by the Rust benchmark."""
import argparse
import json
import os
import re
import time

import torch
from transformers import GPT2LMHeadModel, GPT2TokenizerFast

WORD = re.compile(r"\w+(?:['’\-.]\w+)*")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--job", required=True, help="JSON: contexts, samples, temperature, seed")
    a = p.parse_args()
    job = json.loads(a.job)
    torch.manual_seed(job["seed"])
    tok = GPT2TokenizerFast.from_pretrained(a.model)  # the folder holds vocab.json + merges.txt
    device = os.environ.get("CLOZELAB_HF_DEVICE", "cpu")
    model = GPT2LMHeadModel.from_pretrained(a.model, torch_dtype=torch.float32).to(device)
    model.eval()
    times, failed = [], 0
    with torch.inference_mode():
        # One untimed call first: kernel loading and CUDA warm-up are not throughput.
        warm = torch.tensor([[tok.eos_token_id]], device=device)
        model.generate(warm, attention_mask=torch.ones_like(warm), do_sample=True, top_k=0,
                       num_return_sequences=2, max_new_tokens=2, pad_token_id=tok.eos_token_id)
        for context in job["contexts"]:
            ids = tok(context, return_tensors="pt").input_ids if context else torch.tensor([[tok.eos_token_id]])
            ids = ids.to(device)
            start = time.perf_counter()
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, top_k=0,
                                 temperature=job["temperature"], num_return_sequences=job["samples"],
                                 max_new_tokens=5, pad_token_id=tok.eos_token_id)
            texts = tok.batch_decode(out[:, ids.shape[1]:], skip_special_tokens=True)
            words = [m.group(0).lower() if (m := WORD.search(t)) else None for t in texts]
            failed += sum(w is None for w in words)
            times.append(time.perf_counter() - start)
    print(json.dumps({"system": f"transformers {__import__('transformers').__version__} generate (torch {torch.__version__}, " + (f"CPU, {torch.get_num_threads()} threads)" if device == "cpu" else f"{torch.cuda.get_device_name()})"),
                      "seconds": times, "failed": failed}))


if __name__ == "__main__":
    main()
