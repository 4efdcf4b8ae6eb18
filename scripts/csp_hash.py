#!/usr/bin/env python3
"""Trunk post-build hook: allow exactly the inline module script Trunk writes to load the wasm,
by replacing the 'sha256-TRUNK-LOADER' placeholder of index.html's Content-Security-Policy with
that script's hash. Fails the build if the script or the placeholder is missing."""
import base64
import hashlib
import os
import re
import sys

path = os.path.join(os.environ.get("TRUNK_STAGING_DIR", "dist"), "index.html")
html = open(path, encoding="utf-8").read()
scripts = re.findall(r"<script type=\"module\"[^>]*>(.*?)</script>", html, flags=re.S)
if len(scripts) != 1 or "'sha256-TRUNK-LOADER'" not in html:
    sys.exit(f"csp_hash: expected one inline loader and the placeholder in {path}")
digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
open(path, "w", encoding="utf-8").write(html.replace("'sha256-TRUNK-LOADER'", f"'sha256-{digest}'"))
