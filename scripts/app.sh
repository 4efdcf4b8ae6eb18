#!/usr/bin/env bash
# Runs the clozelab app on http://127.0.0.1:8080 (installing what is missing first).
# Open it with ?model=models/test/ for the random test model, or put real GPT-2 in
# public/models/gpt2/ (see docs/researchers.md, "Models") and it loads by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The test command's target directory: dependencies built by either serve the other.
source scripts/cargo_env.sh
if [ ! -f public/models/test/model.safetensors ]; then
  cargo run -q --bin clozelab -- make-test-model --out public/models/test
fi
exec trunk serve --address 127.0.0.1 --port "${PORT:-8080}" --no-autoreload "$@"
