#!/usr/bin/env python3
"""GGML's quantized blocks decoded by llama.cpp's own Python package `gguf`, for
src/model/gguf/blocks.rs's tests.

Run by a developer, not by CI (needs `pip install gguf numpy`):

    python3 scripts/reference_gguf_blocks.py --out tests/fixtures/gguf_blocks.json

For each block type, two blocks of seeded random bytes (their f16 scales set to finite values
of a trained model's size), and the f32 values `gguf.quants.dequantize` gives them.
"""
import argparse
import json

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T

# Type, block bytes, byte offsets of its f16 scales.
TYPES = [
    (T.Q8_0, 34, [0]),
    (T.Q4_0, 18, [0]),
    (T.Q4_1, 20, [0, 2]),
    (T.Q4_K, 144, [0, 2]),
    (T.Q5_K, 176, [0, 2]),
    (T.Q6_K, 210, [208]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    cases = []
    for qtype, size, scales in TYPES:
        raw = bytearray(rng.integers(0, 256, size * 2, dtype=np.uint8).tobytes())
        for block in range(2):
            for at in scales:
                scale = np.float16(rng.uniform(-0.05, 0.05)).tobytes()
                raw[block * size + at : block * size + at + 2] = scale
        values = gguf.quants.dequantize(np.frombuffer(bytes(raw), dtype=np.uint8), qtype)
        cases.append({"type": qtype.name, "bytes": bytes(raw).hex(), "values": [float(v) for v in values.reshape(-1)]})
    with open(args.out, "w") as f:
        json.dump({"generated_by": "scripts/reference_gguf_blocks.py", "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0", "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
