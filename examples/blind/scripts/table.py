#!/usr/bin/env python3
"""Summarises a blind-corpus bench (`bench --json` over examples/blind) as the BENCHMARKS table.

    table.py BENCH_JSON

One row per kernel: its class (from the kernel's header in tests/data/unseen/), the time as
written and tuned, the speedup, and the winning variant's origin; then per class and overall:
kernels faster, kernels whose winner went through a structural operator (any operator but
`param` and the canonical form's `canon(..)`), and the geomean speedup over the kernels measured.
A kernel with no entry counts as 1x (the kernel as written), and the summary says how many.
"""
import json
import math
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
UNSEEN = os.path.join(ROOT, "tests", "data", "unseen")


def classes():
    out = {}
    for f in os.listdir(UNSEEN):
        if f.endswith(".wgsl"):
            text = open(os.path.join(UNSEEN, f)).read()
            m = re.search(r"^// class: *(\S+)", text, re.M)
            out[f[:-5].upper()] = m.group(1) if m else "?"
    return out


def operators(origin):
    """The operator names of a variant's origin, `a(..) -> b(..)`, without canon."""
    names = re.findall(r"(?:^|→|->)\s*([a-z][a-z0-9-]*)\(", origin or "")
    return [n for n in names if n != "canon"]


def main():
    bench = json.load(open(sys.argv[1]))
    cls = classes()
    rows, untuned = [], 0
    for k in bench["kernels"]:
        d = k.get("deployed") or {}
        base = (d.get("baseline") or {}).get("ns")
        best = (d.get("timing") or {}).get("ns")
        speed = k.get("speedup") if k.get("status") == "tuned" and k.get("correct") else None
        if speed is None:
            untuned += 1
            speed = 1.0
        ops = operators(k.get("origin"))
        structural = any(o != "param" for o in ops) and speed > 1.0
        rows.append((k["name"], cls.get(k["name"], "?"), base, best, speed, k.get("origin") or "-", structural))
    print("| kernel | class | as written (µs) | tuned (µs) | speedup | winner |")
    print("|---|---|---|---|---|---|")
    for name, c, base, best, speed, origin, _ in rows:
        us = lambda ns: f"{ns / 1000:.1f}" if ns else "-"
        print(f"| {name} | {c} | {us(base)} | {us(best)} | {speed:.2f}× | `{origin}` |")
    n = len(rows)
    geo = math.exp(sum(math.log(r[4]) for r in rows) / n)
    faster = sum(1 for r in rows if r[4] > 1.0)
    structural = sum(1 for r in rows if r[6])
    print()
    print(f"{n} kernels ({untuned} without a tuned entry, counted as 1×): {faster} faster, "
          f"a structural operator won on {structural} ({100 * structural / n:.0f} %), geomean {geo:.2f}×")
    by = {}
    for r in rows:
        by.setdefault(r[1], []).append(r)
    print()
    print("| class | kernels | faster | structural winner | geomean |")
    print("|---|---|---|---|---|")
    for c in sorted(by):
        rs = by[c]
        g = math.exp(sum(math.log(r[4]) for r in rs) / len(rs))
        print(f"| {c} | {len(rs)} | {sum(1 for r in rs if r[4] > 1.0)} | {sum(1 for r in rs if r[6])} | {g:.2f}× |")


if __name__ == "__main__":
    main()
