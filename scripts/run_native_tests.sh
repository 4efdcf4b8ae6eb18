#!/usr/bin/env bash
# Runs the native test binaries that the test command's `cargo test --all-targets
# --no-default-features` would run (the library's unit tests and tests/all), each test's time
# printed beside its result and the slowest listed in test-artifacts/timings/native-tests.txt:
# where a fresh machine's test time goes.
#
# libtest prints per-test times only under `-Z unstable-options --report-time`, which a stable
# test binary accepts with RUSTC_BOOTSTRAP=1 in its own environment. The binaries are run
# directly so that the variable never reaches cargo: there it would change the build's
# fingerprint (proc-macro2 reads it) and rebuild every crate.
set -euo pipefail
cd "$(dirname "$0")/.."
timings=test-artifacts/timings/native-tests.txt
mkdir -p "$(dirname "$timings")"
mapfile -t bins < <(cargo test --locked --all-targets --no-default-features --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])')
[ "${#bins[@]}" -gt 0 ] || { echo "run_native_tests: cargo built no test binary" >&2; exit 1; }
log=$(mktemp)
status=0
for bin in "${bins[@]}"; do
  echo "     Running $(basename "$bin")"
  CARGO_MANIFEST_DIR="$PWD" RUSTC_BOOTSTRAP=1 "$bin" -Z unstable-options --report-time "$@" 2>&1 \
    | tee -a "$log" || status=1
done
# "test NAME ... ok <12.345s>", slowest first.
sed -nE 's/^test (.*) \.\.\. [a-zA-Z]+ <([0-9.]+)s>$/\2 \1/p' "$log" | sort -rn >"$timings"
echo "slowest native tests (all in $timings):"
head -n 15 "$timings" | awk '{ printf "  %8.1f s  %s\n", $1, $2 }'
rm -f "$log"
exit "$status"
