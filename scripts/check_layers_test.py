#!/usr/bin/env python3
"""Shows that the layer check fails on what it exists to catch: in a copy of src/ it plants one
violation at a time (a back-import across layers, a cycle inside a module, a model file asking
its device, an oversized page file, a module without a rule) and expects check_layers.py to
exit 1 naming the file; the unchanged copy must pass.

    python3 scripts/check_layers_test.py
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = [sys.executable, str(ROOT / "scripts" / "check_layers.py")]
RULES = ROOT / "docs" / "architecture.md"


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


PLANTS = {
    "a back-import (model uses game)": (
        "model/config.rs",
        lambda p: append(p, "\nuse crate::game::study::StudyConfig;\n"),
        "model may not use game",
    ),
    "a cycle inside model (config uses gpt2)": (
        "model/config.rs",
        lambda p: append(p, "\nuse super::transformer::Transformer;\n"),
        "cycle in model",
    ),
    "a model file asking its device": (
        "model/transformer.rs",
        lambda p: append(p, "\nfn on_cpu(d: &Device) -> bool { *d == Device::flex() }\n"),
        "src/model/transformer.rs asks which device",
    ),
    "a page file over 250 lines": (
        "app/state.rs",
        lambda p: append(p, "\n// filler\n" * 260),
        "src/app/state.rs has",
    ),
    "a module without a rule": (
        "extra.rs",
        lambda p: p.write_text("pub fn x() {}\n", encoding="utf-8"),
        "src/extra: no line",
    ),
}


def run(src):
    return subprocess.run(
        CHECK + ["--src", str(src), "--rules", str(RULES)], capture_output=True, text=True
    )


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "clean" / "src"
        shutil.copytree(ROOT / "src", clean)
        result = run(clean)
        if result.returncode != 0:
            failures.append(f"the unchanged copy failed:\n{result.stdout}")
        for name, (file, plant, expected) in PLANTS.items():
            src = Path(tmp) / name.replace(" ", "_") / "src"
            shutil.copytree(ROOT / "src", src)
            plant(src / file)
            result = run(src)
            if result.returncode != 1 or expected not in result.stdout:
                failures.append(
                    f"{name}: exit {result.returncode}, expected {expected!r} in:\n{result.stdout}"
                )
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"check_layers_test: the check passes on src/ and fails on each of {len(PLANTS)} plants")


if __name__ == "__main__":
    main()
