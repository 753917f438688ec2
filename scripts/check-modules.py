#!/usr/bin/env python3
"""Checks that a crate's modules form no circle.

For every crate under the workspace (each `*/src` and `*/*/src` folder with a lib.rs or main.rs),
reads the `use` declarations and the `crate::…` / `super::…` paths of every source file (test
modules, comments and doc comments left out), resolves each to the module it names, and fails
when
  - two top-level modules of a crate use each other, directly or round a longer circle (so the
    crate's modules stack in floors, each using only those below it), or
  - two files of one folder use each other, directly or round a longer circle (a parent module
    and its own children are exempt: a `mod.rs` declares its children, and they may use what it
    defines).
Prints every circle it finds, and "no circles" otherwise.

    python3 scripts/check-modules.py [CRATE_SRC ...]
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def crate_sources():
    for src in sorted(ROOT.glob("*/src")) + sorted(ROOT.glob("*/*/src")):
        if "target" in src.parts or ".venv" in str(src):
            continue
        if (src / "lib.rs").exists() or (src / "main.rs").exists():
            yield src


def module_of(src: Path, file: Path):
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts)


def strip(text: str) -> str:
    """The file without its test module, comments and string literals' contents."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{", text)
    if m:
        text = text[: m.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    return text


def expand_use(tree: str):
    """The paths of a use tree: `a::{b, c::{d, e}}` gives a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        i = t.find("{")
        if i < 0:
            for part in t.split(","):
                if part:
                    out.append(prefix + part.split(" as ")[0])
            return
        head, body = t[:i], t[i + 1 : -1]
        depth, start, items = 0, 0, []
        for j, ch in enumerate(body):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(body[start:j])
                start = j + 1
        items.append(body[start:])
        for item in items:
            if item:
                walk(prefix + head, item)

    walk("", tree)
    return out


def resolve(path: str, here: tuple, modules: set):
    """The module a path names (its longest prefix that is a module), or None outside the crate."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    best = base
    for k in range(1, len(segs) + 1):
        cand = base + tuple(segs[:k])
        if cand in modules:
            best = cand
        else:
            break
    return best


def circles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {b for bs in edges.values() for b in bs}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check(src: Path):
    files = {module_of(src, f): f for f in src.rglob("*.rs")}
    modules = set(files)
    # Inline modules (`mod name {` in a file) count as modules of their own.
    for mod, f in list(files.items()):
        for m in re.finditer(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*\{", strip(f.read_text()), re.M):
            modules.add(mod + (m.group(1),))
    uses = {}
    for mod, f in files.items():
        text = strip(f.read_text())
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += expand_use(m.group(1))
        paths += re.findall(r"\b((?:crate|super)(?:::\w+)+)", text)
        targets = {resolve(p, mod, modules) for p in paths}
        uses[mod] = {t for t in targets if t is not None and t != mod}
    found = []
    # Floors: top-level modules.
    top = {}
    for mod, ts in uses.items():
        if not mod:
            continue
        for t in ts:
            if t and t[0] != mod[0]:
                top.setdefault(mod[0], set()).add(t[0])
    for c in circles(top):
        found.append(f"{src.parent.name}: top-level modules use each other: {' <-> '.join(c)}")
    # Files of one folder: siblings only, parents and children exempt.
    by_parent = {}
    for mod, ts in uses.items():
        if not mod:
            continue
        for t in ts:
            if not t:
                continue
            # Bring both to the children of their common parent.
            k = 0
            while k < min(len(mod), len(t)) and mod[k] == t[k]:
                k += 1
            if k >= len(mod) or k >= len(t):
                continue  # one is inside the other
            a, b = mod[: k + 1], t[: k + 1]
            if k == 0:
                continue  # top level: checked above
            by_parent.setdefault(mod[:k], {}).setdefault(a, set()).add(b)
    for parent, edges in sorted(by_parent.items()):
        for c in circles(edges):
            names = [("::".join(m)) for m in c]
            found.append(f"{src.parent.name}: files of {'::'.join(parent)} use each other: {' <-> '.join(names)}")
    return found


def main():
    srcs = [Path(a).resolve() for a in sys.argv[1:]] or list(crate_sources())
    found = []
    for src in srcs:
        found += check(src)
    for line in found:
        print(line)
    if found:
        sys.exit(1)
    print(f"check-modules: no circles in {len(srcs)} crates")


if __name__ == "__main__":
    main()
