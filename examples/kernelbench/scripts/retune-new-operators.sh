#!/usr/bin/env bash
# Retunes the kernelbench kernels whose operators changed since their entries were measured, then
# times the whole suite beside torch in the same call.
#
#   retune-new-operators.sh BIN OUT
#
# BIN is a release cargo-kernelfoundry; OUT a directory for the results. The kernels and their
# search seconds: ATTENTION_HEAD (flash-attention's register-resident query and prefetched tiles),
# GEMM_DIVIDE_SUM and GEMM_SIGMOID_LOGSUMEXP (tile-split-k over a rows-form GEMM), SILU_AND_MUL
# (widen under the spec's new constraint), TRANSPOSE (transpose-tile). Offline operators only,
# qd, seed 1, evaluations capped at 400. Then torch_bench.py over the suite and `bench --against`
# its times; BENCHMARKS.md quotes these files.
set -u
BIN=$1
OUT=$2
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
M=examples/kernelbench/Cargo.toml

tune() { # kernel seconds
  log "tune $1"
  timeout $(($2 + 120)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$1" --force \
    --strategy qd --seed 1 --time "$2" --budget 400 --json >"$OUT/tune-$1.json" 2>>"$OUT/log.txt"
  log "tune $1 exit $?"
}
tune ATTENTION_HEAD 60
tune GEMM_DIVIDE_SUM 50
tune GEMM_SIGMOID_LOGSUMEXP 50
tune SILU_AND_MUL 30
tune TRANSPOSE 30

log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
log "bench"
"$BIN" kernelfoundry bench --manifest-path "$M" --samples 20 --json --against "$OUT/torch.jsonl" \
  >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
tar cf "$OUT/entries.tar" examples/kernelbench/kernelfoundry 2>>"$OUT/log.txt"
log "done"
