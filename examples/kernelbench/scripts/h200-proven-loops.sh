#!/usr/bin/env bash
# On an H200 only (exits at once elsewhere): retune the kernels furthest below torch now that
# proven loops are built without naga's loop counter, then bench the whole suite beside torch
# (retune.sh's steps).
#
#   h200-proven-loops.sh BIN OUT [SECONDS_PER_TUNE]   (0: no retune, only torch and the bench)
set -u
BIN=$1
OUT=$2
T=${3:-35}
cd "$(dirname "$0")/../../.."
NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$NAME" in
  *H200*) ;;
  *) mkdir -p "$OUT"; echo "GPU: $NAME: not an H200, nothing run" | tee -a "$OUT/log.txt"; exit 0 ;;
esac
KERNELS=(GEMM_LARGE_K GEMM_TALL_SKINNY GEMM_DIVIDE_SUM CONV2D)
[ "$T" = 0 ] && KERNELS=()
exec bash examples/kernelbench/scripts/retune.sh "$BIN" "$OUT" "$T" "${KERNELS[@]}"
