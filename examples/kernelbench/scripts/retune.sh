#!/usr/bin/env bash
# Retunes the kernelbench kernels named (offline operators, qd, seed 1, SECONDS of search each,
# at most 400 evaluations), then times the whole suite in torch and benches every committed entry
# against it, in the same call, on whatever GPU runs it. BENCHMARKS.md quotes these files.
#
#   retune.sh BIN OUT SECONDS KERNEL...   (no KERNEL: only torch and the bench)
set -u
BIN=$1
OUT=$2
T=$3
shift 3
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
log "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
for k in "$@"; do tune "$k" "$T"; done
torch_and_bench
