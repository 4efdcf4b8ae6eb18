#!/usr/bin/env bash
# Builds the app for participants into dist-release/ (or the folder given): release profile and
# wasm-opt -Oz on both wasm files. Serve that folder; see docs/researchers.md, "Deploying".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-dist-release}"
# Trunk.toml pins wasm-opt version_132, the npm binaryen that setup installs.
export PATH="$PWD/node_modules/.bin:$PATH"
found=$(wasm-opt --version 2>/dev/null || true)
case "$found" in
  *"(version_132)"*) ;;
  *) echo "release: need wasm-opt version_132 from node_modules/.bin, found: ${found:-none}" >&2; exit 1 ;;
esac
start=$(date +%s)
trunk build --release --dist "$out"
echo "release: built $out in $(( $(date +%s) - start )) s"
for f in "$out"/*.wasm; do
  printf '%s: %s bytes, %s gzipped\n' "$f" "$(stat -c %s "$f")" "$(gzip -9c "$f" | wc -c)"
done
