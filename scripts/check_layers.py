#!/usr/bin/env python3
"""The layer check: fails when clozelab's code breaks the rules docs/architecture.md states.

- **Layers**: the top-level modules and which others each may use are read from the
  ```layers``` block of docs/architecture.md (one line each, `module: used modules`); every
  reference from one top-level module to another must be listed there, and every module under
  src/ must have a line.
- **Cycles**: no two modules at any level use each other, directly or round a loop.
- **Devices**: only `model/ops/`, `runtime/` and the crate roots ask which device or target they
  run on (`Device::flex`, `target_arch`, `supports_dtype`); the model's files record the backend
  that `ops::backend::Backend::of` chooses at load and hand it to the ops instead.
- **Sizes**: no file under src/ over 600 lines, none under src/app/ over 250.

Each violation is printed with the file (and the import) that makes it, and the exit status is 1.

How imports are read: every `.rs` file under src/ and collects the paths it names (`use` statements with their
brace groups, and `crate::…`, `super::…` and `self::…` paths in code). Each reference between
two files is an edge between the two children of their nearest common module: `data/jatos.rs`
naming `game::study` is the edge data → game at the top, and `analysis/figures.rs` naming
`analysis::token_level` is figures → token_level inside `analysis`. A module naming its own
parent or child is no edge. Every strongly connected group of two or more is printed with one
file-level reference per edge, and the exit status is 1.

    python3 scripts/check_layers.py [--src DIR] [--rules FILE]
"""
import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
MAX_LINES = 600
MAX_APP_LINES = 250
# Where a file may ask which device or target it runs on.
DEVICE_ASKERS = (("model", "ops"), ("runtime",), ())
DEVICE_QUESTION = re.compile(r"Device::flex|target_arch|supports_dtype")
# The crate roots: the library's modules live under them; binaries only use the library.
ROOTS = {"lib.rs", "main.rs"}


def module_of(path):
    """src/a/b.rs and src/a/b/mod.rs → ('a', 'b'); src/lib.rs → ()."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] + ".rs" in ROOTS):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments_and_strings(text):
    """The code alone: comments removed, string and character literals emptied (one pass, so
    that `//` in a string, a quote in a character literal or a line continuation `\\` cannot
    hide the code after them)."""
    out, i, n = [], 0, len(text)
    while i < n:
        two = text[i : i + 2]
        if two == "//":
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif two == "/*":
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text[i] == '"' or (text[i] == "r" and re.match(r'r#*"', text[i:]) and not text[i - 1 : i].isalnum()):
            if text[i] == "r":
                hashes = re.match(r"r(#*)\"", text[i:]).group(1)
                end = text.find('"' + hashes, i + 2 + len(hashes))
                i = n if end < 0 else end + 1 + len(hashes)
            else:
                i += 1
                while i < n and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
                i += 1
            out.append('""')
        elif text[i] == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[i:]):
            i += re.match(r"'(\\.[^']*|[^\\'])'", text[i:]).end()
            out.append("' '")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, e}}` → ['a::b', 'a::c::d', 'a::c::e']."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"\s+as\s+\w+$", "", tree).strip()] if tree else []
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [prefix + p for part in parts for p in expand_use(part)]


def paths_in(text):
    text = strip_comments_and_strings(text)
    found = []
    for tree in re.findall(r"\buse\s+([^;]+);", text):
        found += expand_use(tree)
    found += re.findall(r"\b(?:crate|super|self)(?:::\w+)+", text)
    return found


def resolve(path, here, modules):
    """The module (tuple) a path names, from module `here`; None for outside crates."""
    parts = [p for p in path.replace(" ", "").split("::") if p]
    if not parts:
        return None
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    elif parts[0] in ("super", "self"):
        base = here
        while parts and parts[0] in ("super", "self"):
            base = base[:-1] if parts.pop(0) == "super" else base
        rest = parts
    elif (parts[0],) in modules and here == ():
        base, rest = (), parts  # a bare `mod` name at the crate root
    else:
        return None
    target = base
    for part in rest:
        if target + (part,) in modules:
            target = target + (part,)
        else:
            break
    return target


def strongly_connected(graph):
    index, low, stack, on_stack, groups, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            groups.append(group)

    for node in list(graph):
        if node not in index:
            visit(node)
    return groups


def read_layers(rules_file):
    """{module: set of modules it may use} from the ```layers``` block."""
    text = rules_file.read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    if not block:
        sys.exit(f"{rules_file}: no ```layers``` block")
    layers = {}
    for line in block.group(1).splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, uses = line.partition(":")
            layers[name.strip()] = set(uses.split())
    return layers


def check_layers(files, modules, layers):
    """Messages for references outside the layers' rules and modules without a rule."""
    problems = []
    for top in sorted({m[0] for m in modules if m}):
        if top not in layers:
            problems.append(f"src/{top}: no line for it in the layers block")
    seen = set()
    for here, file in files.items():
        for path in paths_in(file.read_text(encoding="utf-8")):
            there = resolve(path, here, modules)
            if not here or not there or here[0] == there[0]:
                continue
            if there[0] in layers.get(here[0], set()) or (here[0], there[0]) in seen:
                continue
            seen.add((here[0], there[0]))
            problems.append(
                f"{here[0]} may not use {there[0]}  ({file.relative_to(SRC.parent)}: {path})"
            )
    return problems


def check_devices(files):
    problems = []
    for here, file in files.items():
        if any(here[: len(a)] == a for a in DEVICE_ASKERS if a) or len(here) == 0:
            continue
        code = strip_comments_and_strings(file.read_text(encoding="utf-8"))
        found = DEVICE_QUESTION.search(code)
        if found:
            problems.append(
                f"{file.relative_to(SRC.parent)} asks which device it runs on ({found.group(0)}):"
                " call an op of model/ops instead"
            )
    return problems


def check_sizes(all_files):
    problems = []
    for file in all_files:
        lines = len(file.read_text(encoding="utf-8").splitlines())
        limit = MAX_APP_LINES if (SRC / "app") in file.parents else MAX_LINES
        if lines > limit:
            problems.append(f"{file.relative_to(SRC.parent)} has {lines} lines (at most {limit})")
    return problems


def check_cycles(files, modules):
    """Messages for each strongly connected group of modules, at every level."""
    # graphs[parent][child_a][child_b] = an example "file: path" for the edge
    graphs = defaultdict(lambda: defaultdict(dict))
    for here, file in files.items():
        for path in paths_in(file.read_text(encoding="utf-8")):
            there = resolve(path, here, modules)
            if there is None:
                continue
            common = 0
            while common < min(len(here), len(there)) and here[common] == there[common]:
                common += 1
            if common in (len(here), len(there)):
                continue  # the same module, an ancestor or a descendant
            parent = here[:common]
            edge = graphs[parent][here[common]]
            edge.setdefault(there[common], f"{file.relative_to(SRC.parent)}: {path}")
    problems = []
    for parent, graph in sorted(graphs.items()):
        for group in strongly_connected(graph):
            if len(group) < 2:
                continue
            where = "::".join(parent) or "crate"
            lines = [f"cycle in {where}: {' ↔ '.join(sorted(group))}"]
            members = set(group)
            for a in sorted(members):
                for b, example in sorted(graph[a].items()):
                    if b in members:
                        lines.append(f"  {a} → {b}  ({example})")
            problems.append("\n".join(lines))
    return problems


def main():
    global SRC
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=SRC)
    parser.add_argument("--rules", type=Path, default=ROOT / "docs" / "architecture.md")
    args = parser.parse_args()
    SRC = args.src.resolve()
    all_files = sorted(SRC.rglob("*.rs"))
    files = {module_of(p): p for p in all_files if p.parent != SRC / "bin"}
    modules = set(files)
    problems = (
        check_layers(files, modules, read_layers(args.rules))
        + check_cycles(files, modules)
        + check_devices(files)
        + check_sizes(all_files)
    )
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(
        f"check_layers: {len(modules)} modules keep their layers, no cycles, device questions"
        f" only in model/ops and runtime, {len(all_files)} files within their sizes"
    )


if __name__ == "__main__":
    main()
