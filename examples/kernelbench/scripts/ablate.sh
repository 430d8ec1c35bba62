#!/usr/bin/env bash
# Strategies at equal wall time on the kernels named, one `ablate` call per kernel (seeds 1-3).
#
#   ablate.sh BIN OUT SECONDS STRATEGIES KERNEL...   e.g. ablate.sh $BIN out 20 qd,greedy,random CONV2D
set -u
BIN=$1
OUT=$2
T=$3
S=$4
shift 4
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
log "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
for k in "$@"; do
  log "ablate $k"
  "$BIN" kernelfoundry ablate --manifest-path "$M" --kernel "$k" --time "$T" --seeds 1,2,3 \
    --strategies "$S" --json >"$OUT/ablate-$k.json" 2>>"$OUT/log.txt"
  log "ablate $k exit $?"
done
