#!/usr/bin/env python3
"""Reads the diagnostics of top-up.sh: per file (kernel, top-up, round) the search evaluations'
rate with compiling included (as throughput.py counts it), how many timings were taken again
because the baseline ran more than 25 % slower than its best (`clock_fell`), and, over the
timings after the first, the baseline's first sample of each timing against the baseline's
fastest median of a timing in that file: mean and worst ratio. A clock that fell while the host
worked between two timings shows as first samples slower than the best.

    top_up.py diag-*.jsonl
"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    walls, prepare, fell = [], 0.0, 0
    timings, current = [], []
    for line in open(path):
        d = json.loads(line)
        if "wall_ms" in d:
            walls.append(d["wall_ms"])
        elif "prepare_ms" in d:
            prepare += d["prepare_ms"]
        elif "clock_fell" in d:
            fell += 1
        elif d.get("program") == 0:
            if d["i"] == 0 and current:
                timings.append(current)
                current = []
            current.append(d["ns"])
    if current:
        timings.append(current)
    search = walls[1:-1]
    if not search or len(timings) < 2:
        print(f"{path}: too few evaluations")
        continue
    rate = 1000 / (statistics.mean(search) + prepare / len(search))
    best = min(statistics.median(t) for t in timings)
    first = [t[0] / best for t in timings[1:]]
    print(
        f"{path}: {len(search)} evaluations, {rate:.1f}/s, clock fell {fell}, "
        f"first sample / best median: mean {statistics.mean(first):.3f}, worst {max(first):.3f}"
    )
