#!/usr/bin/env python3
"""Shows that the docs check fails on what it exists to catch: in a copy of the README, docs/,
scripts/, src/, tests/ and .ci/ it plants one fault at a time (a flag no command has, a command
clozelab lacks, a missing script, a missing file, an anchor no heading makes, a source path that
does not exist in the docs or in a doc comment, a flag the command reference's usage lines leave
out) and expects check_docs.py to exit 1 naming it; the unchanged copy must pass.

    python3 scripts/check_docs_test.py [--bin CLOZELAB_BINARY]
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from check_docs import default_cli  # noqa: E402

BIN = default_cli()
if "--bin" in sys.argv:
    BIN = sys.argv[sys.argv.index("--bin") + 1]

PLANTS = {
    "a flag no command has": ("docs/cli.md", "    clozelab next-token --model DIR --nonsense\n", "has no flag --nonsense"),
    "a command clozelab lacks": ("docs/cli.md", "Run `clozelab frobnicate --out DIR`.\n", "`frobnicate` is not a command"),
    "a missing script": ("README.md", "    bash scripts/no_such_script.sh\n", "scripts/no_such_script.sh does not exist"),
    "a missing file": ("docs/researchers.md", "See [the notes](notes.md).\n", "notes.md does not exist"),
    "an anchor no heading makes": ("README.md", "See [models](docs/researchers.md#no-such-heading).\n", "has no heading #no-such-heading"),
    "a source path that does not exist": ("docs/architecture.md", "The check lives in `scripts/check_cycles.py`.\n", "scripts/check_cycles.py does not exist"),
    "a doc comment naming a missing file": ("src/lib.rs", "//! See `src/model/ops/nothing.rs`.\n", "src/model/ops/nothing.rs does not exist"),
}

# (file, text, replaced by, expected): faults made by taking something out.
REPLACEMENTS = {
    "a flag the usage lines leave out": ("docs/cli.md", " [--tokenizer DIR]", "", "leave out --tokenizer"),
}


def copy(to):
    shutil.copy(ROOT / "README.md", to / "README.md")
    for folder in ("docs", "scripts", "src", "tests", ".ci"):
        shutil.copytree(ROOT / folder, to / folder)


def run(root):
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_docs.py"), "--bin", BIN, "--root", str(root)],
        capture_output=True,
        text=True,
    )


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "clean"
        clean.mkdir()
        copy(clean)
        result = run(clean)
        if result.returncode != 0:
            failures.append(f"the unchanged copy failed:\n{result.stdout}{result.stderr}")
        for name, (file, line, expected) in PLANTS.items():
            root = Path(tmp) / name.replace(" ", "_")
            root.mkdir()
            copy(root)
            with open(root / file, "a", encoding="utf-8") as f:
                f.write("\n" + line)
            result = run(root)
            if result.returncode != 1 or expected not in result.stdout:
                failures.append(f"{name}: exit {result.returncode}, expected {expected!r} in:\n{result.stdout}{result.stderr}")
        for name, (file, text, replacement, expected) in REPLACEMENTS.items():
            root = Path(tmp) / name.replace(" ", "_")
            root.mkdir()
            copy(root)
            content = (root / file).read_text(encoding="utf-8")
            if text not in content:
                failures.append(f"{name}: {file} no longer holds {text!r}")
                continue
            (root / file).write_text(content.replace(text, replacement, 1), encoding="utf-8")
            result = run(root)
            if result.returncode != 1 or expected not in result.stdout:
                failures.append(f"{name}: exit {result.returncode}, expected {expected!r} in:\n{result.stdout}{result.stderr}")
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"check_docs_test: the check passes on the docs and fails on each of {len(PLANTS) + len(REPLACEMENTS)} plants")


if __name__ == "__main__":
    main()
