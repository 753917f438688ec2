#!/usr/bin/env python3
"""Paired differences of two sets of checkpoints on one suite, from the files of
`floe eval --outcomes` (one file a checkpoint, one seed each; the files of one suite pair up
line by line), with floe experiment's standard errors clustered by seed and by instance
(`floe.paired_difference`):

    .venv/python-test/bin/python scripts/paired.py --a fixed-s*.jsonl --b warm.jsonl

prints `a − b` in percentage points (valid and optimal): over the whole suite, per agent count,
and per map size. A side with one file pairs with every file of the other (a shared start).
"""

import argparse
import json
import sys

import floe


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", nargs="+", required=True, help="outcome files of side a, one a seed")
    p.add_argument("--b", nargs="+", required=True, help="outcome files of side b, one a seed (or one for all)")
    a = p.parse_args(argv)
    sides = [[read(f) for f in a.a], [read(f) for f in a.b]]
    first = sides[0][0]
    for side in sides:
        for rows in side:
            if [(r["file"], r["instance"]) for r in rows] != [(r["file"], r["instance"]) for r in first]:
                sys.exit("error: the files are not outcomes of one suite in one order")
    groups = [("all", lambda r: True)]
    groups += [(f"{k} agents", lambda r, k=k: r["agents"] == k) for k in sorted({r["agents"] for r in first})]
    groups += [(f"{s}x{s}", lambda r, s=s: r["size"] == s) for s in sorted({r["size"] for r in first})]
    print(f"{len(a.a)} file(s) against {len(a.b)}, {len(first)} instances; a − b, points ± standard error (valid / optimal)\n")
    print("| instances | n | valid | optimal |")
    print("|---|---|---|---|")
    for name, keep in groups:
        idx = [i for i, r in enumerate(first) if keep(r)]
        cells = []
        for key in ("valid", "optimal"):
            pick = [[[bool(rows[i][key]) for i in idx] for rows in side] for side in sides]
            mean, se = floe.paired_difference(pick[0], pick[1])
            cells.append(f"{mean:+.2f} ± {se:.2f}")
        print(f"| {name} | {len(idx)} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
