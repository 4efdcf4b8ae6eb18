#!/usr/bin/env python3
"""Exports a GPT-2 folder (config.json + model.safetensors, e.g. from `clozelab make-test-model`)
to ONNX for the browser benchmark's onnxruntime-web side, two graphs, each one for prefill and
decode alike, as transformers.js runs GPT-2 (a "merged" decoder): token ids [1, T] and the keys
and values so far [L, 1, H, P, D] (P = 0 for a prefill) → logits and the keys and values
[L, 1, H, P + T, D]. `gpt2.onnx` gives the last position's logits [1, V] (the work clozelab's
next-token request does); `gpt2-all-positions.onnx` every position's [1, T, V] (what
transformers.js' exports compute). Same weights, same arithmetic as transformers'
GPT2LMHeadModel: the script checks each graph's logits against it (in torch, and in onnxruntime
when installed) at lengths other than the one it was traced at, and fails otherwise.

Explicit key/value tensors rather than transformers' Cache objects: they export the same way
whatever transformers version is installed. Never commit the output (it holds the weights).

Usage: export_onnx.py MODEL_DIR OUT_DIR
"""
import math
import sys
from pathlib import Path

import torch
from torch import nn
from transformers import GPT2LMHeadModel

TOLERANCE = 1e-4


class Gpt2WithCache(nn.Module):
    """GPT-2 over explicit keys and values, built from a loaded GPT2LMHeadModel's tensors."""

    def __init__(self, hf, all_positions=False):
        super().__init__()
        self.all_positions = all_positions
        self.t = hf.transformer
        self.n_head = hf.config.n_head
        self.eps = hf.config.layer_norm_epsilon
        # Fixed sizes: shapes read off tensors while tracing would become graph inputs.
        self.dim = hf.config.n_embd
        self.scale = 1.0 / math.sqrt(self.dim // self.n_head)

    def norm(self, x, ln):
        return nn.functional.layer_norm(x, (self.dim,), ln.weight, ln.bias, self.eps)

    def forward(self, input_ids, past_keys, past_values):
        """`past_*`: [L, 1, H, P, D]. Returns the last position's logits [1, V] (every position's,
        [1, T, V], with `all_positions`) and the keys/values [L, 1, H, P+T, D]."""
        t = self.t
        ids = input_ids
        start = past_keys.shape[3]
        positions = torch.arange(ids.shape[1]) + start
        # Query i (at position start + i) sees every key up to its own position.
        visible = torch.arange(start + ids.shape[1])[None, :] <= positions[:, None]
        x = t.wte.weight[ids] + t.wpe.weight[positions]
        keys, values = [], []
        seq = ids.shape[1]
        for i, block in enumerate(t.h):
            a = block.attn
            h = self.norm(x, block.ln_1)
            qkv = h @ a.c_attn.weight + a.c_attn.bias
            q, k, v = qkv.split(self.dim, dim=-1)
            split = lambda z: z.view(1, seq, self.n_head, -1).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            k = torch.cat([past_keys[i], k], dim=2)
            v = torch.cat([past_values[i], v], dim=2)
            keys.append(k)
            values.append(v)
            scores = (q @ k.transpose(-1, -2)) * self.scale
            scores = scores.masked_fill(~visible, torch.finfo(scores.dtype).min)
            attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(1, seq, self.dim)
            x = x + attended @ a.c_proj.weight + a.c_proj.bias
            h = self.norm(x, block.ln_2)
            m = block.mlp
            h = nn.functional.gelu(h @ m.c_fc.weight + m.c_fc.bias, approximate="tanh")
            x = x + h @ m.c_proj.weight + m.c_proj.bias
        final = self.norm(x if self.all_positions else x[:, -1], t.ln_f)
        # The export folds wte's transpose into an initializer of its own: the LM head is a
        # plain MatMul for onnxruntime, at the cost of a second copy of wte in the file.
        return nn.functional.linear(final, t.wte.weight), torch.stack(keys), torch.stack(values)


def prompt(n):
    # The fixed ids every engine of the benchmarks runs (clozelab's `speed::prompt_ids`).
    return torch.tensor([[262 + (i * 7919) % 40000 for i in range(n)]])


def empty_past(hf):
    c = hf.config
    shape = (c.n_layer, 1, c.n_head, 0, c.n_embd // c.n_head)
    return torch.zeros(shape), torch.zeros(shape)


GRAPHS = {"gpt2.onnx": False, "gpt2-all-positions.onnx": True}


def last_logits(logits):
    """The last position's logits [1, V] of either graph's output."""
    return logits[:, -1] if logits.ndim == 3 else logits


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    hf = GPT2LMHeadModel.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    # Checked at 23 tokens then one more; traced at 16 tokens after 16 (a graph that had kept
    # a traced length would fail the checks).
    ids = prompt(23)
    following = torch.tensor([[1000]])
    with torch.inference_mode():
        reference = hf(torch.cat([ids, following], dim=1)).logits
    out.mkdir(parents=True, exist_ok=True)
    for name, all_positions in GRAPHS.items():
        model = Gpt2WithCache(hf, all_positions).eval()
        with torch.inference_mode():
            logits, k, v = model(ids, *empty_past(hf))
            step, _, _ = model(following, k, v)
        worst = difference(logits, step, reference, all_positions)
        if worst > TOLERANCE:
            sys.exit(f"{name}: the exported arithmetic differs from transformers by {worst:.2e}")
        with torch.no_grad():
            _, k16, v16 = model(prompt(16), *empty_past(hf))
            logits_axes = {1: "seq"} if all_positions else {}
            torch.onnx.export(
                model, (prompt(16), k16, v16), out / name, dynamo=False, opset_version=17,
                input_names=["input_ids", "past_keys", "past_values"],
                output_names=["logits", "keys", "values"],
                dynamic_axes={"input_ids": {1: "seq"}, "past_keys": {3: "past"},
                              "past_values": {3: "past"}, "keys": {3: "total"},
                              "values": {3: "total"}, "logits": logits_axes},
            )
        check_with_onnxruntime(out / name, ids, following, empty_past(hf), reference, all_positions)
        print(f"wrote {out}/{name} (torch differs from transformers by {worst:.1e})")


def difference(logits, step, reference, all_positions):
    """The largest difference from transformers' logits: every position of the prompt's (or its
    last) and the step's."""
    logits, step = torch.as_tensor(logits), torch.as_tensor(step)
    prompt_part = (logits - reference[:, :-1]) if all_positions else (logits - reference[:, -2])
    return max(prompt_part.abs().max().item(), (last_logits(step) - reference[:, -1]).abs().max().item())


def check_with_onnxruntime(path, ids, following, past, reference, all_positions):
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime (Python) is not installed: the ONNX graph was checked in torch only")
        return
    session = ort.InferenceSession(str(path))
    empty_k, empty_v = (p.numpy() for p in past)
    logits, k, v = session.run(
        None, {"input_ids": ids.numpy(), "past_keys": empty_k, "past_values": empty_v}
    )
    step, _, _ = session.run(
        None, {"input_ids": following.numpy(), "past_keys": k, "past_values": v}
    )
    worst = difference(logits, step, reference, all_positions)
    if worst > TOLERANCE:
        sys.exit(f"{path.name}: onnxruntime's logits differ from transformers by {worst:.2e}")
    print(f"{path.name}: onnxruntime matches transformers within {worst:.1e}")


if __name__ == "__main__":
    main()
