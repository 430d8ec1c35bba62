#!/usr/bin/env bash
# Tune and benchmark a crate of marked kernels on a GPU machine (the kernelbench suite, the Llama
# layer), as BENCHMARKS.md records them.
#
#   suite.sh BIN OUT MANIFEST [BUDGET] [SECONDS_PER_KERNEL] [TUNE_TIMEOUT]
#
# BIN is a release cargo-kernelfoundry (no Rust toolchain needed on the GPU machine); OUT a
# directory for the results. Every kernel of MANIFEST is tuned at the attribute's shapes (the
# realistic ones) with the offline operators (qd, seed 1, BUDGET evaluations, default 16, and at
# most SECONDS_PER_KERNEL of search, default 8), the whole tune stopped after TUNE_TIMEOUT seconds
# (default 420; kernels it did not reach stay not-tuned and are counted so), then `bench` re-measures
# every kernel (baseline, tuned, hand-written reference) as JSON.
#
# KERNELS="GEMM GEMV …" restricts both steps to those kernels (one tune per kernel): the whole suite at realistic
# shapes does not fit one 10-minute GPU call (about 4 s per evaluation at these shapes), so run
# it in parts, e.g. the level-1 kernels in one call and the level-2 fusions in another.
set -u
BIN=$1
OUT=$2
MANIFEST=$3
BUDGET=${4:-16}
SECS=${5:-8}
TUNE_TIMEOUT=${6:-420}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
SELECT=()
for k in ${KERNELS:-}; do SELECT+=(--kernel "$k"); done
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }

if [ -z "${KERNELS:-}" ]; then
  log "tune $MANIFEST"
  timeout "$TUNE_TIMEOUT" "$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --strategy qd --seed 1 \
    --budget "$BUDGET" --time "$SECS" --force --json >"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
  log "tune exit $?"
  pkill -f "cargo-kernelfoundry __worker" 2>/dev/null  # a worker the timeout orphaned
else
  # `tune` takes one --kernel: one tune per kernel, one JSON line each, within TUNE_TIMEOUT in all.
  : >"$OUT/tune.jsonl"
  start=$(date +%s)
  for k in $KERNELS; do
    left=$((TUNE_TIMEOUT - ($(date +%s) - start)))
    if [ "$left" -le 0 ]; then log "tune $k: no time left"; continue; fi
    log "tune $k"
    timeout "$left" "$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --kernel "$k" --strategy qd \
      --seed 1 --budget "$BUDGET" --time "$SECS" --force --json >>"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
    log "tune $k exit $?"
    pkill -f "cargo-kernelfoundry __worker" 2>/dev/null
  done
fi
log "bench"
"$BIN" kernelfoundry bench --manifest-path "$MANIFEST" --samples 20 --json "${SELECT[@]}" >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
dir=$(dirname "$MANIFEST")
tar cf "$OUT/entries.tar" "$dir/kernelfoundry" 2>>"$OUT/log.txt"
log "done"
