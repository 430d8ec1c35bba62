#!/usr/bin/env bash
# The eight KernelBench row reductions against torch, on whatever GPU runs it: torch times the
# suite, then each reduction is retuned (offline operators, qd, seed 1) and benched against
# torch's times. Issue 15's bar on the H200: each at >= 0.8x torch.
#
#   row-reductions.sh BIN OUT [SECONDS_PER_TUNE]
set -u
BIN=$1
OUT=$2
T=${3:-30}
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
ROWS="SOFTMAX LAYERNORM LOG_SOFTMAX RMSNORM ADD_LAYERNORM SUM_DIM1 MAX_REDUCE ARGMAX"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
for k in $ROWS; do tune "$k" "$T"; done
log "bench"
sel=()
for k in $ROWS; do sel+=(--kernel "$k"); done
"$BIN" kernelfoundry bench --manifest-path "$M" "${sel[@]}" --samples 20 --json \
  --against "$OUT/torch.jsonl" >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
tar cf "$OUT/entries.tar" examples/kernelbench/kernelfoundry 2>>"$OUT/log.txt"
log done
