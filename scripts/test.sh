#!/usr/bin/env bash
# Runs every clozelab test: formatting and lints (native and wasm32), native unit + integration
# tests (CPU and wgpu on lavapipe), then the browser end-to-end tests in headless Chromium
# (WebGPU and CPU fallback, GPT-2 in its worker). Each phase prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
phase_start=$SECONDS
phase() {
  local now=$SECONDS
  [ -n "${phase_name:-}" ] && echo "== ${phase_name}: $((now - phase_start)) s"
  phase_name="$1"; phase_start=$now
  [ -n "$1" ] && echo "== $1"
  return 0
}

phase "setup"
bash scripts/setup.sh

# One cargo target directory outside the clone, shared by every clone on this machine: a fresh
# clone (as CI makes) then rebuilds only clozelab itself, not its ~600 dependencies.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/clozelab/target}"
mkdir -p "$CARGO_TARGET_DIR"
# That shared directory must not fill the disk (the linker then dies with a bus error): a fresh
# clone gains nothing from incremental state, and other clones' binaries go when space is short.
export CARGO_INCREMENTAL=0
python3 scripts/prune_target.py stale

# wgpu tests must run, not skip: lavapipe (mesa-vulkan-drivers) is installed above.
export CLOZELAB_REQUIRE_WGPU=1
# Tests that read ../shared fail instead of skipping when it is there.
[ -d ../shared ] && export CLOZELAB_REQUIRE_SHARED=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/clozelab-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

phase "cargo fmt --check"
cargo fmt --check

phase "cargo clippy (native, all targets)"
cargo clippy --locked -q --all-targets -- -D warnings

phase "cargo clippy (wasm32: the app and the worker)"
cargo clippy --locked -q --target wasm32-unknown-unknown --lib --bins -- -D warnings

phase "cargo test"
cargo test --locked 2>&1

phase "trunk build"
cargo build --locked -q --bin clozelab
export CLOZELAB_BIN="$CARGO_TARGET_DIR/debug/clozelab"
"$CLOZELAB_BIN" make-test-model --out public/models/test 2>/dev/null
trunk build --locked 2>&1 | tail -n 3

phase "prune the shared cargo target directory"
python3 scripts/prune_target.py unused

phase "browser end-to-end"
node --test --test-reporter=spec --test-concurrency=1 tests/e2e/ 2>&1

phase ""
echo "== total: $((SECONDS - started)) s"
