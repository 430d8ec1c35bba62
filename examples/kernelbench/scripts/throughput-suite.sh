#!/usr/bin/env bash
# Evaluations per second over the kernels the throughput bar names: GEMV, the kernelbench
# elementwise kernels and row reductions, and the quickstart SOFTMAX at 4096². Each is tuned with
# `--force --budget 32 --json` and KERNELFOUNDRY_DIAG; throughput.py reads the diagnostics into
# OUT/throughput.txt.
#
#   throughput-suite.sh BIN OUT
set -u
BIN=$1
OUT=$2
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
one() { # label manifest kernel [shape]
  log "throughput $1 $3"
  local shape=()
  [ -n "${4:-}" ] && shape=(--tune-shape "$4")
  KERNELFOUNDRY_DIAG="$OUT/diag-$1-$3.jsonl" timeout 120 "$BIN" kernelfoundry tune \
    --manifest-path "$2" --kernel "$3" "${shape[@]}" --force --budget 32 --json \
    >"$OUT/tune-$1-$3.json" 2>>"$OUT/log.txt"
  log "exit $?"
}
for k in GEMV GELU SILU BIAS_GELU SILU_AND_MUL SUM_DIM1 MAX_REDUCE ARGMAX SOFTMAX LOG_SOFTMAX \
  LAYERNORM RMSNORM ADD_LAYERNORM CAUSAL_SOFTMAX; do
  one kb examples/kernelbench/Cargo.toml "$k"
done
one qs examples/quickstart/Cargo.toml SOFTMAX rows=4096,cols=4096
python3 examples/kernelbench/scripts/throughput.py "$OUT"/diag-*.jsonl >"$OUT/throughput.txt" 2>&1
cat "$OUT/throughput.txt"
log done
