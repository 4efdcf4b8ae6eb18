#!/usr/bin/env python3
"""Checks every link and every command in README.md and docs/*.md.

- **Links** (`[text](target)`, `![alt](target)`, `<img src=…>`): a relative target must exist,
  and an anchor (`file.md#models`, `#models`) must be a heading of that file. Web addresses are
  not fetched (the build machines have no internet).
- **Commands**: `clozelab COMMAND …` and `cargo run --release -- COMMAND …` (in code blocks,
  continuation lines included, and in inline code) must name a command that `clozelab --help`
  lists, and every `--flag` after it must be one its `--help` lists (subcommands such as
  `bench forward` too); `bash|node|python3 scripts/X` must name a script that exists.
- **The command reference**: docs/cli.md's usage lines list every flag of every command (each
  `cargo run --release -- COMMAND …` line, continuations joined, against `COMMAND --help`).
- **Source paths**: every path into the checkout (`src/…`, `tests/…`, `scripts/…`, `docs/…`,
  `.ci/…`) that these files or the Rust sources' doc comments (`//!`, `///`) name must exist.

Each problem is printed with its file and line; the exit status is then 1.

    python3 scripts/check_docs.py [--bin CLOZELAB_BINARY] [--root CHECKOUT]
"""
import argparse
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)|<img[^>]*\bsrc=\"([^\"]+)\"")
INLINE_CODE = re.compile(r"`([^`]+)`")
COMMAND = re.compile(r"(?:^|\s)(?:clozelab|cargo run(?: --release)?(?: -q)?(?: --bin clozelab)? --)\s+(.*)")
SCRIPT = re.compile(r"\b(?:bash|node|python3)\s+(scripts/[\w./-]+)")
# A path into the checkout: not part of a longer path or address (`../shared/…`, `https://…/src/…`).
SOURCE_PATH = re.compile(r"(?<![\w./:-])((?:src|tests|scripts|docs|\.ci)/[\w.\-/*{}]*[\w/*}])")


def missing_paths(root, text):
    """The checkout paths `text` names that do not exist (globs and placeholders skipped)."""
    missing = []
    for path in SOURCE_PATH.findall(text):
        path = path.rstrip(".")
        if re.search(r"[*{}<>]|\bX\b|\bN\b", path):
            continue
        if not (root / path).exists():
            missing.append(path)
    return missing


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@lru_cache(maxsize=None)
def anchors(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    return {slug(line.lstrip("#")) for line in lines if line.startswith("#")}


@lru_cache(maxsize=None)
def help_text(binary, words):
    result = subprocess.run([binary, *words, "--help"], capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


def listed_commands(text):
    """The names a clap help's `Commands:` section lists."""
    section = text.split("Commands:", 1)[1] if "Commands:" in text else ""
    names = set()
    for line in section.splitlines():
        if not line.strip():
            continue
        if not line.startswith("  "):
            break
        names.add(line.split()[0])
    return names - {"help"}


def check_command(binary, rest):
    """Problems with one command line (the words after `clozelab`)."""
    words = [w for w in re.split(r"[\s\[\]()|]+", rest) if w]
    path = []
    text = help_text(binary, ())
    while words and not words[0].startswith("-"):
        commands = listed_commands(text)
        if not commands:
            break
        if words[0] not in commands:
            if path or re.fullmatch(r"[a-z][a-z0-9-]*", words[0]):
                return [f"`{' '.join(path + [words[0]])}` is not a command of clozelab"]
            return []
        path.append(words.pop(0))
        text = help_text(binary, tuple(path))
        if text is None:
            return [f"`clozelab {' '.join(path)} --help` failed"]
    problems = []
    for word in words:
        flag = re.match(r"--[a-z0-9-]+", word)
        if flag and flag.group(0) not in ("--help", "--") and not re.search(
            rf"(?<![\w-]){re.escape(flag.group(0))}(?![\w-])", text
        ):
            problems.append(f"`clozelab {' '.join(path)}` has no flag {flag.group(0)}")
    return problems


OPTION = re.compile(r"^\s+(?:-\w, )?(--[a-z0-9-]+)", re.MULTILINE)


def undocumented_flags(binary, lines):
    """`(command, flag)` for each flag of each command that docs/cli.md's usage lines leave out."""
    usage = []
    for _, text, code in command_lines(lines):
        found = COMMAND.search(text) if code else None
        if found:
            usage.append(found.group(1).split())
    missing = []

    def walk(path):
        text = help_text(binary, tuple(path)) or ""
        subcommands = listed_commands(text)
        for name in sorted(subcommands):
            walk(path + [name])
        if subcommands or not path:
            return
        lines_of = " ".join(" ".join(words) for words in usage if words[: len(path)] == path)
        for flag in sorted(set(OPTION.findall(text)) - {"--help", "--version"}):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", lines_of):
                missing.append((" ".join(path), flag))

    walk([])
    return missing


def command_lines(lines):
    """(line number, text) of each code line, continuation lines joined to their command."""
    out = []
    in_fence = False
    for number, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        code = in_fence or line.startswith("    ")
        if code:
            stripped = line.strip()
            if out and out[-1][2] and (stripped.startswith("[") or stripped.startswith("--")):
                out[-1] = (out[-1][0], out[-1][1] + " " + stripped, True)
                continue
            out.append((number, stripped, True))
        for inline in INLINE_CODE.findall(line):
            out.append((number, inline, False))
    return out


def default_cli():
    """CLOZELAB_BIN, else where scripts/cargo_env.sh has cargo build (outside the clone), else
    the clone's own target/."""
    if os.environ.get("CLOZELAB_BIN"):
        return os.environ["CLOZELAB_BIN"]
    targets = [Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/clozelab/target")), ROOT / "target"]
    found = [t / "debug" / "clozelab" for t in targets if (t / "debug" / "clozelab").exists()]
    return str(found[0] if found else targets[0] / "debug" / "clozelab")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_bin = default_cli()
    parser.add_argument("--bin", default=default_bin)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose docs to check")
    args = parser.parse_args()
    root = args.root.resolve()
    if help_text(args.bin, ()) is None:
        sys.exit(f"check_docs: cannot run {args.bin} --help (build it, or pass --bin)")
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    problems = []
    links = commands = paths = 0
    for file in files:
        lines = file.read_text(encoding="utf-8").splitlines()
        where = lambda n: f"{file.relative_to(root)}:{n}"
        for number, line in enumerate(lines, 1):
            for match in LINK.finditer(line):
                target = match.group(1) or match.group(2)
                if re.match(r"[a-z]+:", target):
                    continue
                links += 1
                page, _, anchor = target.partition("#")
                path = (file.parent / page).resolve() if page else file
                if not path.exists():
                    problems.append(f"{where(number)}: {target} does not exist")
                elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                    problems.append(f"{where(number)}: {path.name} has no heading #{anchor}")
        for number, line in enumerate(lines, 1):
            paths += len(SOURCE_PATH.findall(line))
            problems += [f"{where(number)}: {p} does not exist" for p in missing_paths(root, line)]
        for number, text, _ in command_lines(lines):
            for script in SCRIPT.findall(text):
                commands += 1
                if not (root / script).exists():
                    problems.append(f"{where(number)}: {script} does not exist")
            found = COMMAND.search(text)
            if found:
                commands += 1
                problems += [f"{where(number)}: {p}" for p in check_command(args.bin, found.group(1))]
    reference = root / "docs" / "cli.md"
    if reference.exists():
        for command, flag in undocumented_flags(args.bin, reference.read_text(encoding="utf-8").splitlines()):
            problems.append(f"docs/cli.md: the usage lines of `{command}` leave out {flag}")
    sources = sorted((root / "src").rglob("*.rs"))
    for file in sources:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*//[/!]", line):
                paths += len(SOURCE_PATH.findall(line))
                problems += [
                    f"{file.relative_to(root)}:{number}: {p} does not exist"
                    for p in missing_paths(root, line)
                ]
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(
        f"check_docs: {links} links, {commands} commands and {paths} source paths"
        f" in {len(files)} files and {len(sources)} sources' doc comments hold"
    )


if __name__ == "__main__":
    main()
