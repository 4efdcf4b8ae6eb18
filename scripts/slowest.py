#!/usr/bin/env python3
"""Prints where a test command's time went: the slowest crates of each build (cargo's timing
reports) and the slowest native and browser tests (the lists the test command writes).

    python3 scripts/slowest.py [--top N] [TIMINGS_DIR]   (default test-artifacts/timings)

A fresh machine's test command is mostly compiling, so the crates come first; a crate built
for both targets is listed once per target.
"""

import argparse
import json
import re
import sys
from pathlib import Path


def units(html: Path) -> list[tuple[float, str]]:
    """(seconds, "name version target") for every unit in one cargo-timing.html."""
    text = html.read_text(encoding="utf-8", errors="replace")
    match = re.search(r"const UNIT_DATA = (\[.*?\]);\s*\n", text, re.S)
    if not match:
        raise ValueError(f"{html}: no UNIT_DATA (is it cargo's --timings report?)")
    rows = []
    for unit in json.loads(match.group(1)):
        target = unit.get("target", "").strip() or "lib"
        mode = unit.get("mode", "")
        label = f"{unit['name']} {unit['version']} {target}" + (" (build script)" if mode == "run-custom-build" else "")
        rows.append((float(unit["duration"]), label))
    return sorted(rows, reverse=True)


def tests(listing: Path) -> list[tuple[float, str]]:
    """(seconds, name) from a list the test command wrote, one "SECONDS NAME" a line."""
    rows = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        seconds, _, name = line.partition(" ")
        try:
            rows.append((float(seconds), name))
        except ValueError:
            continue
    return sorted(rows, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", default="test-artifacts/timings", type=Path)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    sections = [(f"slowest crates, {html.stem} build", "units", "of compile time ", units(html))
                for html in sorted(args.dir.glob("*.html"))]
    sections += [(f"slowest tests, {listing.stem}", "tests", "", tests(listing))
                 for listing in sorted(args.dir.glob("*-tests.txt"))]
    for title, noun, what, rows in sections:
        print(f"{title} ({len(rows)} {noun}, {sum(s for s, _ in rows):.0f} s {what}in all):")
        for seconds, label in rows[: args.top]:
            print(f"  {seconds:8.1f} s  {label}")
    found = bool(sections)
    if not found:
        print(f"slowest.py: nothing in {args.dir}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
