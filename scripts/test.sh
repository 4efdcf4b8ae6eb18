#!/usr/bin/env bash
# Runs every clozelab test: native unit + integration tests (CPU and wgpu on lavapipe),
# then the browser end-to-end tests in headless Chromium (WebGPU and CPU fallback).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# wgpu tests must run, not skip: lavapipe (mesa-vulkan-drivers) is installed above.
export CLOZELAB_REQUIRE_WGPU=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/clozelab-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

echo "== cargo test"
cargo test --locked 2>&1

echo "== browser end-to-end"
cargo build --locked -q --bin clozelab
target_dir=$(cargo metadata --format-version 1 --no-deps | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')
export CLOZELAB_BIN="$target_dir/debug/clozelab"
"$CLOZELAB_BIN" make-test-model --out public/models/test 2>/dev/null
trunk build --locked 2>&1 | tail -n 3
node --test --test-reporter=spec tests/e2e/ 2>&1
