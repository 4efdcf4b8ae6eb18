#!/usr/bin/env bash
# Counts the GPU kernels clozelab launches on the wgpu backend (each one a dispatch): for one
# next-token distribution (one forward pass over the context, then its softmax), for one
# word distribution of 100 samples, and per context for 8 contexts' distributions, one context
# at a time and all 8 in each pass; and per call of the attention op, its kernel against burn's
# `attention` and burn's composition on `bench attention`'s shapes. GPU time cannot be measured on a machine without a GPU; the
# number of dispatches can, on lavapipe, and it is what a browser pays 10-40 µs each for.
# cubecl's profiling logger at level "minimal" writes one line per kernel executed; it is
# configured by a cubecl.toml in the working directory.
#
#   [STAGES="model attention"] scripts/count_dispatches.sh MODEL_DIR [CLOZELAB_BINARY]
#
# STAGES picks the parts: "model" (the model's commands; on the GPT-2-small-shaped model they
# take lavapipe about an hour) and "attention" (the op alone, about a minute; MODEL_DIR unused).
set -euo pipefail
stages=" ${STAGES:-model attention} "
model=$(realpath "${1:?usage: count_dispatches.sh MODEL_DIR [CLOZELAB_BINARY]}")
bin=$(realpath "${2:-${CLOZELAB_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/clozelab/target}/release/clozelab}}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '[profiling.logger]\nlevel = "minimal"\nfile = "%s/kernels.log"\nappend = false\n' "$work" >cubecl.toml
# Each command runs twice and the second run is counted (the first warms what a first use
# pays). Autotune's trial launches are not the program's own, and nothing keeps its decisions
# between runs: count on a build without it (`cargo build --release --no-default-features`).
count() {
  for _ in warm counted; do
    rm -f kernels.log
    "$bin" "$@" --model "$model" --backend wgpu >run.log 2>&1 || { cat run.log >&2; exit 1; }
  done
  grep -c '^Executing ' kernels.log
}
if [[ $stages == *" model "* ]]; then
context="The quick brown fox jumps over the"
# Counted first, so that a failing run stops the script (set -e) before anything is printed.
forward=$(count next-token --context "$context" --top 5)
words=$(count word-dist --context "$context" --samples 100 --seed 1 --json)
# A sampling tree's level (one decoding step of every open row, the LM head, the draw) ends
# with the draw kernel (a level's rows in one launch where they fit in one LM-head call). The
# total depends on how deep the sampled words go, which a change in rounding can move; the
# dispatches per level do not.
per_level=$(awk '/DrawKernel/ { if (last) print NR - last; last = NR }' kernels.log |
  sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "?") " (median of " NR ")" }')
eight=()
for words_before in "The" "The quick" "The quick brown" "The quick brown fox" "The quick brown fox jumps" \
  "The quick brown fox jumps over" "The quick brown fox jumps over the" "The quick brown fox jumps over the lazy"; do
  eight+=(--context "$words_before")
done
alone=$(count word-dist "${eight[@]}" --samples 100 --seed 1 --contexts-per-pass 1 --json)
together=$(count word-dist "${eight[@]}" --samples 100 --seed 1 --contexts-per-pass 8 --json)
echo "next-token (one forward pass over $(echo "$context" | wc -w) words, softmax): $forward dispatches"
echo "word-dist, 100 samples: $words dispatches; per tree level $per_level"
echo "word-dist, 8 contexts of 100 samples, per context: one at a time $((alone / 8)), all 8 in each pass $((together / 8))"
fi

# `bench attention --rounds 1` runs, per shape, the op, burn's `attention` and burn's
# composition in turn, each twice: once read back as it is, once summed and read back (the sum
# is one FullKernel and one SharedSumKernel). So the log falls into one segment per side and
# shape, each ending with that pair, of 2 × (the side's dispatches) + 2 lines. The second run
# is counted, as above (burn's attention autotunes on a shape's first use).
if [[ $stages == *" attention "* ]]; then
for _ in warm counted; do
  rm -f kernels.log
  "$bin" bench attention --backend wgpu --rounds 1 --out attention.json >run.log 2>&1 || { cat run.log >&2; exit 1; }
done
python3 - "$work/kernels.log" "$work/attention.json" <<'PY'
import json, sys
kernels = [line.split()[1].rsplit("_", 1)[0] for line in open(sys.argv[1]) if line.startswith("Executing ")]
shapes = [row["shape"]["name"] for row in json.load(open(sys.argv[2]))["results"]]
segments, current = [], []
for name in kernels:
    current.append(name)
    if current[-2:] == ["FullKernel", "SharedSumKernel"]:
        segments.append(current)
        current = []
if current or len(segments) != 3 * len(shapes) or any(len(s) % 2 for s in segments):
    sys.exit(f"attention: {len(segments)} segments ({[len(s) for s in segments]}), not 3 per shape "
             f"of an even length: the benchmark's order of calls changed")
print("attention, dispatches per call (the op / burn's attention / burn's composition):")
for i, shape in enumerate(shapes):
    counts = [(len(s) - 2) // 2 for s in segments[3 * i:3 * i + 3]]
    print(f"  {shape}: {counts[0]} / {counts[1]} / {counts[2]}")
PY
fi
