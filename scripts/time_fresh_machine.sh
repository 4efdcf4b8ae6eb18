#!/usr/bin/env bash
# Times the test command as on a fresh machine: empty cargo registry and installs, empty
# target dir and npm cache, a new clone of this repository beside ../shared, the apt packages
# reinstalled (not purged), and empty caches of compiled shaders (Mesa's lavapipe compiles
# every GPU kernel with LLVM and keeps the result in ~/.cache: a warm cache hides that cost).
# The test command prints each phase's wall and CPU time, the slowest crates and tests, and
# fails past the budget docs/performance.md states; this adds the apt step, the total and the
# target directory's size. Run it on an idle machine with ~30 GB free: other builds on the
# same cores make the figure meaningless.
#
#   time_fresh_machine.sh          in /tmp/fresh (CARGO_HOME, target, npm cache); removes the
#                                  target dir afterwards
#   time_fresh_machine.sh --here   on a machine that is new anyway: empties this user's own
#                                  cargo registry, cargo installs, npm cache and the shared
#                                  target directory, and leaves them built for what follows
set -uo pipefail
F=${FRESH_DIR:-/tmp/fresh}
REPO="$(cd "$(dirname "$0")/.." && pwd)"
here=false; [ "${1:-}" = "--here" ] && here=true
rm -rf $F/ws
mkdir -p $F/ws
if $here; then
  CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/clozelab/target}
  rm -rf "$CARGO_HOME/registry" "$CARGO_HOME/git" "$CARGO_HOME/.crates.toml" "$CARGO_HOME/.crates2.json" \
    "$CARGO_TARGET_DIR" "$HOME/.npm" "${XDG_CACHE_HOME:-$HOME/.cache}/mesa_shader_cache" \
    "${XDG_CACHE_HOME:-$HOME/.cache}/mesa_shader_cache_db" "${XDG_CACHE_HOME:-$HOME/.cache}/cubecl"
  for tool in trunk wasm-bindgen wasm-bindgen-test-runner wasm2es6js leptosfmt; do rm -f "$CARGO_HOME/bin/$tool"; done
  rustup target remove wasm32-unknown-unknown >/dev/null 2>&1
else
  RUSTUP="$(command -v rustup)"
  rm -rf $F/cargo-home $F/target $F/npm-cache $F/rbin $F/cache
  mkdir -p $F/cargo-home/bin $F/rbin $F/cache
  for t in cargo rustc rustup rustfmt cargo-fmt cargo-clippy clippy-driver rustdoc; do ln -s "$RUSTUP" $F/rbin/$t; done
  export CARGO_HOME=$F/cargo-home CARGO_TARGET_DIR=$F/target npm_config_cache=$F/npm-cache XDG_CACHE_HOME=$F/cache
  export PATH=$F/cargo-home/bin:$F/rbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
fi
which trunk wasm-bindgen || echo "no trunk/wasm-bindgen on PATH (good)"
t0=$(date +%s)
echo "== apt reinstall"; time (DEBIAN_FRONTEND=noninteractive apt-get install --reinstall -y -qq chromium chromium-driver mesa-vulkan-drivers libvulkan1 >/dev/null 2>&1)
t1=$(date +%s)
git clone -q "$REPO" $F/ws/main && ln -s "$REPO/../shared" $F/ws/shared || exit 1
cd $F/ws/main || exit 1
echo "== test command"; time bash scripts/test.sh; rc=$?
t2=$(date +%s)
echo "RESULT rc=$rc apt_s=$((t1-t0)) test_command_s=$((t2-t1)) total_s=$((t2-t0)) target_dir=$(du -sh "$CARGO_TARGET_DIR" | cut -f1)"
# The fresh target dir is ~20 GB: removed so that it never fills the disk for what runs next.
$here || rm -rf $F/target
exit "$rc"
