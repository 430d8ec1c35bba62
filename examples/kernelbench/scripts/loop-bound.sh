#!/usr/bin/env bash
# The committed kernelbench entries benched with loops built as proven (the default: a program
# whose every loop is proven to end is built without naga's forced loop bound) and with the
# bound forced on every program (`KERNELFOUNDRY_LOOP_BOUND=forced`), beside torch in the same
# call. On an H200 (or any GPU with RETUNE=1) the GEMM family is then retuned under the default
# and benched again (on another GPU the retuned kernels only, with this GPU's new entries).
#
#   [RETUNE=1] loop-bound.sh BIN OUT H200_KEY
set -u
BIN=$1
OUT=$2
KEY=$3
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
FOR=()
case "$NAME" in *H200*) ;; *) FOR=(--entries-for "$KEY") ;; esac
bench() { # name, then env assignments
  local name=$1
  shift
  log "bench $name ${FOR[*]}"
  env "$@" "$BIN" kernelfoundry bench --manifest-path "$M" "${FOR[@]}" --samples 20 --json \
    --against "$OUT/torch.jsonl" >"$OUT/bench-$name.json" 2>>"$OUT/log.txt"
  log "bench $name exit $?"
}
log "torch on $NAME"
python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
KERNELS="GEMM GEMM_LARGE_K GEMM_TALL_SKINNY GEMM_DIVIDE_SUM SGEMM BMM"
if [ "${RETUNE:-0}" != 1 ]; then
  bench proven KERNELFOUNDRY_LOOP_BOUND=proven
  bench forced KERNELFOUNDRY_LOOP_BOUND=forced
  case "$NAME" in *H200*) ;; *) log "not an H200: no retune"; exit 0 ;; esac
fi
for k in $KERNELS; do tune "$k" 40; done
case "$NAME" in
  *H200*) bench retuned KERNELFOUNDRY_LOOP_BOUND=proven ;;
  *)
    FOR=()
    for k in $KERNELS; do FOR+=(--kernel "$k"); done
    bench retuned KERNELFOUNDRY_LOOP_BOUND=proven
    ;;
esac
tar cf "$OUT/entries.tar" examples/kernelbench/kernelfoundry 2>>"$OUT/log.txt"
log "done"
