#!/usr/bin/env bash
# On an H200 only (exits at once elsewhere): retune the kernels furthest below torch now that
# proven loops are built without naga's loop counter, then bench the whole suite beside torch.
#
#   h200-proven-loops.sh BIN OUT [SECONDS_PER_TUNE]
set -u
BIN=$1
OUT=$2
T=${3:-35}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
log "GPU: $NAME"
case "$NAME" in *H200*) ;; *) log "not an H200: nothing run"; exit 0 ;; esac
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
M=examples/kernelbench/Cargo.toml
for k in GEMM_LARGE_K GEMM_TALL_SKINNY GEMM_DIVIDE_SUM CONV2D; do
  log "tune $k"
  timeout $((T + 90)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$k" --force \
    --strategy qd --seed 1 --time "$T" --budget 400 --json >"$OUT/tune-$k.json" 2>>"$OUT/log.txt"
  log "tune $k exit $?"
done
log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
log "bench"
"$BIN" kernelfoundry bench --manifest-path "$M" --samples 20 --json --against "$OUT/torch.jsonl" \
  >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
tar cf "$OUT/entries.tar" examples/kernelbench/kernelfoundry 2>>"$OUT/log.txt"
log "done"
