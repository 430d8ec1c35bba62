#!/usr/bin/env python3
"""The wild corpus's table: corpus.json (sources) joined with a `bench --json` file.

    table.py BENCH_JSON [BENCH_JSON ..]   (the parts of a split run, concatenated)

Speedups are over the kernels as written; a kernel without a tuned entry counts as 1x. A
structural winner is a kernel made faster by a chain with an operator other than `param` and the
canonical form.
"""
import json
import math
import os
import sys

here = os.path.dirname(__file__)
corpus = {k["kernel"]: k for k in json.load(open(os.path.join(here, "../corpus.json")))}
kernels = [k for path in sys.argv[1:] for k in json.load(open(path))["kernels"]]
rows, speedups, structural, faster, faster5 = [], [], 0, 0, 0
for k in kernels:
    c = corpus.get(k["name"], {})
    dep = k.get("deployed") or {}
    base = (dep.get("baseline") or {}).get("ns")
    tuned = (dep.get("timing") or {}).get("ns")
    sp = k.get("speedup") or 1.0
    origin = k.get("origin") or "-"
    ops = [s.strip().split("(")[0] for s in origin.split("→")] if origin != "-" else []
    is_structural = any(o not in ("param", "canon") for o in ops)
    structural += is_structural and sp > 1.0
    faster += sp > 1.0
    faster5 += sp > 1.05
    speedups.append(sp)
    src = c.get("source", "?").split(" @ ")[0]
    us = lambda ns: f"{ns / 1e3:.1f}" if ns else "-"
    rows.append(
        f"| {k['name']} | {c.get('class', '?')} | {src} | {us(base)} | {us(tuned)} | "
        f"{sp:.2f}x | `{origin}` |"
    )
n = len(speedups)
geo = math.exp(sum(math.log(s) for s in speedups) / n)
print("| kernel | class | source | as written (us) | tuned (us) | speedup | winner |")
print("|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print(
    f"{n} kernels: {faster} faster ({faster5} by more than 5 %), faster with a structural operator "
    f"in the winner on {structural} ({100 * structural / n:.0f} %), geomean {geo:.2f}x"
)
