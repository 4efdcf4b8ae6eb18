#!/usr/bin/env python3
"""Trunk post-build hook: record the build in build.json (Trunk's profile, the commit, each wasm
file's size), then list every built file in app-files.json (relative paths, '/' separators), so
that the Study page can fetch the app's own files to package a study and say which build they
are (src/game/packages/build_record.rs reads the record)."""
import json
import os
import subprocess

root = os.environ.get("TRUNK_STAGING_DIR", "dist")


def commit():
    """The commit built, `-dirty` when the checkout has changes; `unknown` outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True).stdout.strip()
        return head + ("-dirty" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# Trunk sets TRUNK_PROFILE to "release" for `--release` builds and "debug" otherwise.
record = {
    "profile": "release" if os.environ.get("TRUNK_PROFILE") == "release" else "debug",
    "commit": commit(),
    "wasm": {name: os.path.getsize(os.path.join(root, name)) for name in sorted(os.listdir(root)) if name.endswith(".wasm")},
}
with open(os.path.join(root, "build.json"), "w", encoding="utf-8") as out:
    json.dump(record, out, indent=1)

names = []
for folder, _, files in os.walk(root):
    for name in files:
        rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
        if rel != "app-files.json":
            names.append(rel)
with open(os.path.join(root, "app-files.json"), "w", encoding="utf-8") as out:
    json.dump(sorted(names), out, indent=0)
