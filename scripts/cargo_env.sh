# Sourced by the app and test commands: where cargo builds, so that both share one build.
# One target directory outside the clone, shared by every clone on this machine: a fresh clone
# (as CI makes) then rebuilds only clozelab itself, not its ~600 dependencies.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/clozelab/target}"
mkdir -p "$CARGO_TARGET_DIR"
# A fresh clone gains nothing from incremental state, and it grew that directory by 10 GB.
export CARGO_INCREMENTAL=0
