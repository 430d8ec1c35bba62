#!/usr/bin/env python3
"""Evaluations per second from `KERNELFOUNDRY_DIAG` files of `tune --budget N` runs.

    throughput.py diag-GEMV.jsonl diag-RMSNORM.jsonl ...

Per file: the search evaluations' `wall_ms` (the first evaluation, the baseline's, and the last,
the final verification, left out), their mean and median, the batches' `prepare_ms` (compiling
ahead) spread over those evaluations, the evaluations per second with compiling included, and
the three largest phases' shares of the summed phase times.
"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    walls, phases, prepare = [], {}, 0.0
    for line in open(path):
        d = json.loads(line)
        if "wall_ms" in d:
            walls.append(d["wall_ms"])
            for p, v in d["phases"].items():
                phases.setdefault(p, []).append(v)
        if "prepare_ms" in d:
            prepare += d["prepare_ms"]
    search = walls[1:-1]
    if not search:
        print(f"{path}: no search evaluations")
        continue
    mean, median = statistics.mean(search), statistics.median(search)
    per_eval_prepare = prepare / len(search)
    shares = {p: sum(v[1:-1]) for p, v in phases.items()}
    total = sum(shares.values())
    top = sorted(shares.items(), key=lambda kv: -kv[1])[:3]
    print(
        f"{path}: {len(search)} evaluations, {mean:.1f}; {median:.1f} ms, "
        f"compiling {per_eval_prepare:.1f} ms, {1000 / (mean + per_eval_prepare):.1f}/s; "
        + ", ".join(f"{p} {100 * v / total:.0f} %" for p, v in top)
    )
