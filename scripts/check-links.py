#!/usr/bin/env python3
"""Checks every relative link of floe's documentation.

Reads README.md, ARCHITECTURE.md, BENCHMARKS.md and docs/**/*.md (or the Markdown files given as
arguments), finds the inline links and images, `[text](target)` and `![alt](target)`, outside code,
and checks each relative one: the file or folder it names exists, and a `#anchor` into a Markdown
file (or into the same file) matches a heading there, by GitHub's rule for heading ids. Web
addresses are not fetched. Prints each broken link as `file:line: target: reason` and exits 1 if
there is any, else 0.

Python 3 standard library only.
"""

import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
# An inline link or image: [text](target) or [text](target "title"); the text may hold one
# level of brackets ([`a[0]`](x)) and the target one level of parentheses.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
HTML_ID = re.compile(r"""<a\s[^>]*(?:name|id)\s*=\s*["']([^"']+)["']""", re.I)


def outside_code(text):
    """Yields (line number, line, line with code spans blanked) for the lines outside fenced code."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            closing = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closing and not line.strip().strip(fence[0]):
                fence = None
            continue
        yield n, line, CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)


def slug(heading):
    """GitHub's id for a heading: its text, lower case, without punctuation, spaces as hyphens."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LN" or cat == "Mn":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


_anchors = {}


def anchors(path):
    """The ids of a Markdown file's headings (with GitHub's -1, -2 for repeats) and HTML anchors."""
    if path not in _anchors:
        ids = set()
        seen = {}
        text = path.read_text(encoding="utf-8")
        for _, line, _ in outside_code(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                ids.add(base if n == 0 else f"{base}-{n}")
                seen[base] = n + 1
            ids.update(HTML_ID.findall(line))
        # Setext headings (a line of text underlined with === or ---).
        lines = text.split("\n")
        for i in range(1, len(lines)):
            if re.fullmatch(r" {0,3}(=+|-+)\s*", lines[i]) and lines[i - 1].strip() and not lines[i - 1].lstrip().startswith(("|", "-", "*", "#")):
                ids.add(slug(lines[i - 1]))
        _anchors[path] = ids
    return _anchors[path]


def check(md):
    problems = []
    text = md.read_text(encoding="utf-8")
    for n, _, line in outside_code(text):
        for m in LINK.finditer(line):
            target = m.group(1).strip()
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1].strip()
            if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # a web address, mailto:, ...
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part.split("?", 1)[0])
            if path_part.startswith("/"):
                dest = ROOT / path_part.lstrip("/")
            elif path_part:
                dest = (md.parent / path_part).resolve()
            else:
                dest = md
            where = f"{md.relative_to(ROOT)}:{n}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file or folder")
                continue
            if anchor and dest.is_file() and dest.suffix.lower() in (".md", ".markdown"):
                if unquote(anchor).lower() not in anchors(dest):
                    problems.append(f"{where}: no heading with the id #{anchor} in {dest.relative_to(ROOT)}")
    return problems


def main(argv):
    if argv:
        files = [Path(a).resolve() for a in argv]
    else:
        files = [ROOT / f for f in DEFAULT if (ROOT / f).exists()]
        files += sorted((ROOT / "docs").rglob("*.md"))
    problems = []
    for md in files:
        problems += check(md)
    for p in problems:
        print(p)
    if problems:
        print(f"check-links: {len(problems)} broken link(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    print(f"check-links: every relative link of {len(files)} file(s) resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
