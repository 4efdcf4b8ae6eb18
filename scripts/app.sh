#!/usr/bin/env bash
# Runs the clozelab app on http://127.0.0.1:8080 (installing what is missing first).
# Open it with ?model=models/test/ for the random test model, or put real GPT-2 in
# public/models/gpt2/ (see docs/researchers.md, "Models") and it loads by itself.
# `bash scripts/app.sh --release` builds and serves the optimised app (release profile and
# wasm-opt; about 45 minutes on 2 cores the first time): the build the Study page should package for participants.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The test command's target directory: dependencies built by either serve the other.
source scripts/cargo_env.sh
if [ ! -f public/models/test/model.safetensors ]; then
  cargo run -q --bin clozelab -- make-test-model --out public/models/test
fi
# A release build runs wasm-opt: npm's binaryen, the version Trunk.toml pins.
export PATH="$PWD/node_modules/.bin:$PATH"
case " $* " in
  *" --release "*)
    echo "app: building the optimised app (release profile, wasm-opt; about 45 minutes on 2 cores the first time, less after), then serving it" >&2 ;;
  *)
    echo "app: serving a development build; to package a study for participants, start it with: bash scripts/app.sh --release" >&2 ;;
esac
exec trunk serve --address 127.0.0.1 --port "${PORT:-8080}" --no-autoreload "$@"
