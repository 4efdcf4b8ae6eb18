#!/usr/bin/env python3
"""Reference outputs of the other model families' ops from Hugging Face transformers' own code.

Run by a developer, not by CI (needs torch + transformers, e.g. the minicons venv):

    ~/.cache/clozelab/minicons-venv/bin/python scripts/reference_ops.py --out tests/fixtures/ops_reference.json

Records, on small deterministic inputs in float32 (the precision clozelab runs in): GPT-NeoX's
rotary embedding on part of each head (`GPTNeoXRotaryEmbedding`, `apply_rotary_pos_emb`) and
Llama's on all of it, at positions far from 0 where f32 angles round; `LlamaRMSNorm`; the exact
GELU (`ACT2FN["gelu"]`); the SiLU gate (`ACT2FN["silu"](gate) * up`); and `repeat_kv`.
tests/all/op_references.rs holds clozelab's ops against them.
"""
import argparse
import json

import torch
import transformers
from transformers.activations import ACT2FN
from transformers.models.gpt_neox import modeling_gpt_neox as neox
from transformers.models.gpt_neox.configuration_gpt_neox import GPTNeoXConfig
from transformers.models.llama import modeling_llama as llama
from transformers.models.llama.configuration_llama import LlamaConfig


def values(count, seed, scale):
    """The same deterministic values as the Rust test's `values` (an LCG), in [-scale, scale)."""
    mask = (1 << 64) - 1
    state = (seed * 0x9E3779B97F4A7C15 + 7) & mask
    out = []
    for _ in range(count):
        state = (state * 6364136223846793005 + 1442695040888963407) & mask
        out.append(((state >> 40) / float(1 << 24) * 2.0 - 1.0) * scale)
    return torch.tensor(out, dtype=torch.float32)


def flat(tensor):
    return [float(v) for v in tensor.reshape(-1)]


def rotary_case(name, rotary, head_dim, rotary_dims, base, batch, heads, seq, starts, seed):
    x = values(batch * heads * seq * head_dim, seed, 1.0).reshape(batch, heads, seq, head_dim)
    positions = torch.stack([torch.arange(s, s + seq) for s in starts])
    cos, sin = rotary(x, positions)
    if name.startswith("gpt_neox"):
        out, _ = neox.apply_rotary_pos_emb(x, x, cos, sin)
    else:
        out, _ = llama.apply_rotary_pos_emb(x, x, cos, sin)
    assert cos.shape[-1] == rotary_dims, (cos.shape, rotary_dims)
    return {
        "name": name,
        "head_dim": head_dim,
        "rotary_dims": rotary_dims,
        "base": base,
        "shape": [batch, heads, seq, head_dim],
        "starts": starts,
        "seed": seed,
        "output": flat(out),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    cases = []
    # Pythia's shape of rotary: a quarter of each head (rotary_pct 0.25), base 10000.
    config = GPTNeoXConfig(hidden_size=48, num_attention_heads=3, rotary_pct=0.25, rotary_emb_base=10000)
    rotary = neox.GPTNeoXRotaryEmbedding(config)
    cases.append(rotary_case("gpt_neox_partial", rotary, 16, 4, 10000.0, 2, 3, 5, [0, 1531], 31))
    # SmolLM2's: all of each head, base 100000.
    config = LlamaConfig(hidden_size=24, num_attention_heads=3, num_key_value_heads=1, rope_theta=100000.0)
    config.rope_parameters = {"rope_type": "default", "rope_theta": 100000.0}
    rotary = llama.LlamaRotaryEmbedding(config)
    cases.append(rotary_case("llama_full", rotary, 8, 8, 100000.0, 2, 3, 4, [7, 2040], 32))

    width, rows, eps = 13, 5, 1e-5
    norm = llama.LlamaRMSNorm(width, eps=eps)
    with torch.no_grad():
        norm.weight.copy_(values(width, 41, 1.5))
    rms_input = values(rows * width, 40, 3.0).reshape(rows, width)
    gelu_input = values(7 * 19, 42, 9.0)
    gate, up = values(6 * 11, 43, 6.0), values(6 * 11, 44, 2.0)
    kv = values(2 * 3 * 4 * 5, 45, 1.0).reshape(2, 3, 4, 5)
    with torch.no_grad():
        fixture = {
            "generated_by": "scripts/reference_ops.py",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "rotary": cases,
            "rms_norm": {
                "shape": [rows, width],
                "epsilon": eps,
                "seeds": [40, 41],
                "output": flat(norm(rms_input)),
            },
            "gelu": {"count": 7 * 19, "seed": 42, "output": flat(ACT2FN["gelu"](gelu_input))},
            "silu_gate": {"count": 66, "seeds": [43, 44], "output": flat(ACT2FN["silu"](gate) * up)},
            "repeat_kv": {"shape": [2, 3, 4, 5], "seed": 45, "group": 3, "output": flat(llama.repeat_kv(kv, 3))},
        }
    with open(args.out, "w") as f:
        json.dump(fixture, f)
        f.write("\n")


if __name__ == "__main__":
    main()
