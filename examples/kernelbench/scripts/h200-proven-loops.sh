#!/usr/bin/env bash
# On an H200 only (exits at once elsewhere): retune the kernels furthest below torch now that
# proven loops are built without naga's loop counter, then bench the whole suite beside torch.
#
#   h200-proven-loops.sh BIN OUT [SECONDS_PER_TUNE]   (0: no retune, only torch and the bench)
set -u
BIN=$1
OUT=$2
T=${3:-35}
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
log "GPU: $NAME"
case "$NAME" in *H200*) ;; *) log "not an H200: nothing run"; exit 0 ;; esac
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
if [ "$T" != 0 ]; then
  for k in GEMM_LARGE_K GEMM_TALL_SKINNY GEMM_DIVIDE_SUM CONV2D; do tune "$k" "$T"; done
fi
torch_and_bench
