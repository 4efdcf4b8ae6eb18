#!/usr/bin/env python3
"""Trunk post-build hook: list every built file in app-files.json (relative paths, '/'
separators), so that the Study page can fetch the app's own files to package a study."""
import json
import os

root = os.environ.get("TRUNK_STAGING_DIR", "dist")
names = []
for folder, _, files in os.walk(root):
    for name in files:
        rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
        if rel != "app-files.json":
            names.append(rel)
with open(os.path.join(root, "app-files.json"), "w", encoding="utf-8") as out:
    json.dump(sorted(names), out, indent=0)
