#!/usr/bin/env bash
# Times the test command as on a fresh machine, as far as one machine allows: an empty
# CARGO_HOME (registry, cargo installs), empty target dir and npm cache, a new clone of this
# repository beside ../shared; apt packages reinstalled (not purged). Run it on an idle machine
# with ~30 GB free: other builds on the same cores make the figure meaningless.
set -uo pipefail
F=${FRESH_DIR:-/tmp/fresh}
REPO="$(cd "$(dirname "$0")/.." && pwd)"
RUSTUP="$(command -v rustup)"
rm -rf $F/cargo-home $F/target $F/npm-cache $F/ws $F/rbin
mkdir -p $F/cargo-home/bin $F/rbin $F/ws
for t in cargo rustc rustup rustfmt cargo-fmt cargo-clippy clippy-driver rustdoc; do ln -s "$RUSTUP" $F/rbin/$t; done
export CARGO_HOME=$F/cargo-home CARGO_TARGET_DIR=$F/target npm_config_cache=$F/npm-cache
export PATH=$F/cargo-home/bin:$F/rbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
which trunk wasm-bindgen || echo "no trunk/wasm-bindgen on PATH (good)"
t0=$(date +%s)
echo "== apt reinstall"; time (DEBIAN_FRONTEND=noninteractive apt-get install --reinstall -y -qq chromium chromium-driver mesa-vulkan-drivers libvulkan1 >/dev/null 2>&1)
t1=$(date +%s)
git clone -q "$REPO" $F/ws/main && ln -s "$REPO/../shared" $F/ws/shared || exit 1
cd $F/ws/main || exit 1
echo "== test command"; time bash scripts/test.sh; rc=$?
t2=$(date +%s)
echo "RESULT rc=$rc apt_s=$((t1-t0)) test_command_s=$((t2-t1)) total_s=$((t2-t0))"
# The fresh target dir is ~22 GB: removed so that it never fills the disk for what runs next.
rm -rf $F/target
