#!/usr/bin/env bash
# Whether the 16 ms top-up before each timing earns its cost: the throughput tunes (GEMV,
# RMSNORM and SOFTMAX of the kernelbench, the quickstart SOFTMAX at 4096²) with
# KERNELFOUNDRY_TOP_UP_MS at 16 (the default) and 0, and with an OLD binary as it runs by
# default (the before of a change, labelled "old"), in two rounds of opposite order, each with
# its diagnostics; top_up.py reads them (evaluations per second, timings taken again because
# the clock fell, and how much slower the baseline's first samples of a timing ran than its
# best).
#
#   top-up.sh BIN OUT [OLD]
set -u
BIN=$1
OUT=$2
OLD=${3:-}
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
run() { # top-up-ms|old label manifest kernel shape round
  log "top-up $1 $3 $4"
  local shape=() bin=$BIN env=(KERNELFOUNDRY_TOP_UP_MS=$1)
  [ -n "$5" ] && shape=(--tune-shape "$5")
  [ "$1" = old ] && bin=$OLD && env=()
  env "${env[@]}" KERNELFOUNDRY_DIAG="$OUT/diag-$2-$4-$1-r$6.jsonl" timeout 120 \
    "$bin" kernelfoundry tune --manifest-path "$3" --kernel "$4" "${shape[@]}" --force --budget 32 \
    --json >"$OUT/tune-$2-$4-$1-r$6.json" 2>>"$OUT/log.txt"
  log "exit $?"
}
round=0
settings="16 0"
[ -n "$OLD" ] && settings="old 16 0"
for order in "$settings" "$(echo $settings | tr ' ' '\n' | tac | tr '\n' ' ')"; do
  round=$((round + 1))
  for t in $order; do
    for k in GEMV RMSNORM SOFTMAX; do run "$t" kb examples/kernelbench/Cargo.toml "$k" "" "$round"; done
    run "$t" qs examples/quickstart/Cargo.toml SOFTMAX rows=4096,cols=4096 "$round"
  done
done
python3 examples/kernelbench/scripts/top_up.py "$OUT"/diag-*.jsonl >"$OUT/top-up.txt" 2>&1
cat "$OUT/top-up.txt"
log done
