#!/usr/bin/env python3
"""Golden next-token log-probs from Hugging Face transformers for clozelab's test model.

Run by a developer, not by CI (needs torch + transformers):

    cargo run --release -- make-test-model --out target/test-model
    python3 scripts/reference_golden.py --model target/test-model --out tests/fixtures/golden_tiny.json

and for GPT-NeoX (Pythia's architecture, GPT-2's vocabulary):

    cargo run --release -- make-test-model --family gpt-neox --dim 64 --heads 2 --out target/test-neox
    python3 scripts/reference_golden.py --model target/test-neox --out tests/fixtures/golden_gpt_neox.json

and for Llama (SmolLM2's architecture: 6 query heads sharing 2 key/value heads, GPT-2's vocabulary):

    cargo run --release -- make-test-model --family llama --dim 96 --heads 6 --out target/test-llama
    python3 scripts/reference_golden.py --model target/test-llama --out tests/fixtures/golden_llama.json

It loads the folder into its `model_type`'s causal LM (float64 for a clean reference) and records, for
several prompts, the log-probs at every position of: a full forward; incremental decoding one
token at a time through `past_key_values`; and a batch of different-length continuations after
one shared prefix (the prefix's cache computed once and reused). Only small numbers are stored:
the top 10 tokens and a fixed set of probe ids per position.
"""
import argparse
import json

import torch
import os

from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2TokenizerFast

PROMPTS = {
    "fox": "The quick brown fox jumps over the lazy dog.",
    "contractions": "It's what they'd've done, isn't it?  Yes:\tno\n",
    "numbers": "In 1999, the U.S. economy grew by 4.2%",
    "unicode": "Café naïve — 東京 🚀 ok",
    "endoftext": "<|endoftext|>",
}
PREFIX = "There are now rumblings that Apple might soon invade the smart"
CONTINUATIONS = [" watch market", " home", " phone and tablet business.", " TV"]
PROBE_IDS = list(range(0, 50257, 997)) + [50256]
TOP = 10


def position_record(logprobs_row):
    top = torch.topk(logprobs_row, TOP)
    return {
        "top": [[int(i), float(v)] for v, i in zip(top.values, top.indices)],
        "probe": [float(logprobs_row[i]) for i in PROBE_IDS],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tokenizer", default="../shared/gpt2")
    args = parser.parse_args()

    # The folder's own tokenizer.json where it has one (the Llama test model's: <|endoftext|> at
    # id 0), else Hugging Face's own GPT-2 tokenizer files (../shared/gpt2), so the ids are
    # Hugging Face's.
    if os.path.exists(os.path.join(args.model, "tokenizer.json")):
        tok = AutoTokenizer.from_pretrained(args.model)
    else:
        tok = GPT2TokenizerFast.from_pretrained(args.tokenizer)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float64, attn_implementation="eager")
    model.eval()
    meta = json.load(open(f"{args.model}/clozelab-test-model.json"))
    cfg = model.config

    cases = []
    with torch.no_grad():
        for name, text in PROMPTS.items():
            ids = tok.encode(text)
            logits = model(torch.tensor([ids])).logits[0]
            lp = torch.log_softmax(logits, -1)
            cases.append({"name": name, "kind": "full", "text": text, "ids": ids,
                          "positions": [position_record(lp[t]) for t in range(len(ids))]})

            # Incremental: first token, then one token at a time through the cache.
            past = None
            records = []
            for t, token in enumerate(ids):
                out = model(torch.tensor([[token]]), past_key_values=past, use_cache=True)
                past = out.past_key_values
                records.append(position_record(torch.log_softmax(out.logits[0, -1], -1)))
            cases.append({"name": name, "kind": "incremental", "text": text, "ids": ids, "positions": records})

        prefix_ids = tok.encode(PREFIX)
        out = model(torch.tensor([prefix_ids]), use_cache=True)
        prefix_past = out.past_key_values
        conts = []
        for text in CONTINUATIONS:
            ids = tok.encode(text)
            # Reuse the prefix cache; deep-copy so each continuation starts from the prefix only.
            import copy
            past = copy.deepcopy(prefix_past)
            o = model(torch.tensor([ids]), past_key_values=past, use_cache=True)
            lp = torch.log_softmax(o.logits[0], -1)
            conts.append({"text": text, "ids": ids, "positions": [position_record(lp[t]) for t in range(len(ids))]})
        cases.append({"name": "shared_prefix", "kind": "shared_prefix", "text": PREFIX, "ids": prefix_ids,
                      "prefix_last": position_record(torch.log_softmax(out.logits[0, -1], -1)),
                      "continuations": conts})

    fixture = {
        "generated_by": "scripts/reference_golden.py",
        "transformers_version": __import__("transformers").__version__,
        "torch_version": torch.__version__,
        "dtype": "float64",
        "model": {"family": cfg.model_type, "seed": meta["seed"], "layers": cfg.num_hidden_layers,
                  "dim": cfg.hidden_size, "heads": cfg.num_attention_heads,
                  "kv_heads": getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads},
        "probe_ids": PROBE_IDS,
        "cases": cases,
    }
    with open(args.out, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
    print(f"wrote {args.out}: {len(cases)} cases")


if __name__ == "__main__":
    main()
