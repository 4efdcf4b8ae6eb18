#!/usr/bin/env python3
"""Sums a cubecl profiling log (level "basic": one `| duration | kernel` line per kernel, timed
on the device) into kernels, device milliseconds and the five costliest kernel kinds. Called by
scripts/gpu_bench.sh."""
import collections
import re
import sys

UNITS = {"ns": 1e-6, "µs": 1e-3, "ms": 1.0, "s": 1e3}
total, count, kinds = 0.0, 0, collections.Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"\|\s*([0-9.]+)(ns|µs|ms|s)\s*\|\s*(.*)", line)
    if m:
        ms = float(m.group(1)) * UNITS[m.group(2)]
        total += ms
        count += 1
        kinds[re.sub(r"_[0-9a-f]{8}$", "", m.group(3).split(" | ")[0])] += ms
top = ", ".join(f"{k} {v:.1f} ms" for k, v in kinds.most_common(5))
print(f"{count} kernels, {total:.1f} ms of device time; costliest: {top}")
