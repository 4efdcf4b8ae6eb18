#!/usr/bin/env python3
"""Fails when clozelab's modules import each other in a cycle.

Reads every `.rs` file under src/ and collects the paths it names (`use` statements with their
brace groups, and `crate::…`, `super::…` and `self::…` paths in code). Each reference between
two files is an edge between the two children of their nearest common module: `data/jatos.rs`
naming `game::study` is the edge data → game at the top, and `analysis/figures.rs` naming
`analysis::token_level` is figures → token_level inside `analysis`. A module naming its own
parent or child is no edge. Every strongly connected group of two or more is printed with one
file-level reference per edge, and the exit status is 1.

    python3 scripts/check_cycles.py [SRC_DIR]
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src"
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


def main():
    files = {module_of(p): p for p in sorted(SRC.rglob("*.rs")) if p.parent != SRC / "bin"}
    modules = set(files)
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
    cycles = 0
    for parent, graph in sorted(graphs.items()):
        for group in strongly_connected(graph):
            if len(group) < 2:
                continue
            cycles += 1
            where = "::".join(parent) or "crate"
            print(f"cycle in {where}: {' ↔ '.join(sorted(group))}")
            members = set(group)
            for a in sorted(members):
                for b, example in sorted(graph[a].items()):
                    if b in members:
                        print(f"  {a} → {b}  ({example})")
    if cycles:
        sys.exit(1)
    print(f"check_cycles: no cycles among {len(modules)} modules")


if __name__ == "__main__":
    main()
