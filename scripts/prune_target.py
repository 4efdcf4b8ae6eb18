#!/usr/bin/env python3
"""Keeps the cargo target directory that every clone on a machine shares from filling the disk.

Each clone builds clozelab's own test binary under a new
hash, and every change of features or of Cargo.lock leaves the old dependency builds behind; on a
machine that runs CI again and again the disk fills and the linker dies with a bus error.

    prune_target.py stale    when less than 40 GiB is free, delete clozelab's own binaries and
                             incremental state left by other clones (and by older runs of this
                             one: a build needs ~20 GiB); run before building
    prune_target.py unused   after the build: ask cargo which artifacts this checkout uses
                             (every build the test command makes, all fresh by now) and delete
                             every other build in deps/

Both print how much they freed. Nothing here is needed for correctness: cargo rebuilds what
is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/clozelab/target"))
STALE_BELOW_FREE = 40 * 2**30
PROFILE_DIRS = [TARGET / "debug", TARGET / "wasm32-unknown-unknown" / "debug"]
# `<name>-<16 hex digits>` with an optional `lib` prefix and extension: one cargo unit's output.
UNIT_FILE = re.compile(r"^(?:lib)?(?P<name>[A-Za-z0-9_]+)-(?P<hash>[0-9a-f]{16})(?:\..*)?$")

# The builds scripts/test.sh makes (fresh by the time this runs: the same flags and the same
# environment, clippy's workspace wrapper included, or cargo would redo them), asked again for
# their JSON artifact lists. Trunk builds each wasm binary as the last two do.
BUILDS = [
    ["cargo", "test", "--locked", "--no-run", "--all-targets", "--no-default-features"],
    ["cargo", "build", "--locked", "--target", "wasm32-unknown-unknown", "--no-default-features", "--bin", "clozelab"],
    ["cargo", "build", "--locked", "--target", "wasm32-unknown-unknown", "--no-default-features", "--bin", "worker"],
]


def free_bytes():
    return shutil.disk_usage(TARGET if TARGET.exists() else Path.home()).free


def own_target_names():
    """clozelab's own crate names: the library, the binaries and the integration tests."""
    names = {"clozelab", "worker"}
    names.update(p.stem for p in (ROOT / "tests").glob("*.rs"))
    names.update(p.name for p in (ROOT / "tests").iterdir() if (p / "main.rs").is_file())
    return names


def size(path):
    if path.is_dir() and not path.is_symlink():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return path.stat().st_size


def remove(path):
    freed = size(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return freed


def live_hashes():
    hashes = set()
    for command in BUILDS:
        cut = command.index("--") if "--" in command else len(command)
        result = subprocess.run(
            command[:cut] + ["--message-format=json"] + command[cut:],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            sys.exit(f"prune_target: `{' '.join(command)}` failed; nothing deleted")
        for line in result.stdout.splitlines():
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            if message.get("reason") != "compiler-artifact":
                continue
            for file in message.get("filenames", []) + [message.get("executable") or ""]:
                match = UNIT_FILE.match(Path(file).name)
                if match:
                    hashes.add(match["hash"])
    return hashes


def prune_stale():
    if free_bytes() >= STALE_BELOW_FREE:
        return 0
    names = own_target_names()
    freed = 0
    for profile in PROFILE_DIRS:
        for entry in list((profile / "deps").glob("*")) if (profile / "deps").is_dir() else []:
            match = UNIT_FILE.match(entry.name)
            if match and match["name"] in names:
                freed += remove(entry)
        incremental = profile / "incremental"
        if incremental.is_dir():
            for entry in incremental.iterdir():
                freed += remove(entry)
    return freed


def prune_unused():
    live = live_hashes()
    if not live:
        sys.exit("prune_target: cargo reported no artifacts; nothing deleted")
    freed = 0
    for profile in PROFILE_DIRS:
        deps = profile / "deps"
        if not deps.is_dir():
            continue
        for entry in deps.iterdir():
            match = UNIT_FILE.match(entry.name)
            if match and match["hash"] not in live:
                freed += remove(entry)
    return freed


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("stale", "unused"):
        sys.exit(__doc__)
    freed = prune_stale() if mode == "stale" else prune_unused()
    print(f"prune_target {mode}: freed {freed / 2**30:.1f} GiB; {free_bytes() / 2**30:.1f} GiB free")


if __name__ == "__main__":
    main()
