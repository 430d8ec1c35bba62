#!/usr/bin/env bash
# What wgpu's shader runtime checks cost: the committed kernelbench entries benched with each
# check turned off in turn (`KERNELFOUNDRY_UNCHECKED`, see kf_runtime::RuntimeChecksOff), beside
# torch in the same call. Every program is still re-verified by `bench`.
#
#   runtime-checks.sh BIN OUT [ENTRIES_KEY] [CHECKS...]
#
# ENTRIES_KEY (optional, `-` for none) benches the entries tuned for that adapter key
# (`bench --entries-for`), e.g. the H200's on an H100. CHECKS default to every single check and
# `all`; `default` is the run with every check on.
set -u
BIN=$1
OUT=$2
KEY=${3:--}
shift 3 2>/dev/null || shift $#
CHECKS=${*:-default loops bounds div zero-workgroup all}
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh
FOR=()
[ "$KEY" != - ] && FOR=(--entries-for "$KEY")
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
for checks in $CHECKS; do
  log "bench $checks ${FOR[*]}"
  if [ "$checks" = default ]; then
    env -u KERNELFOUNDRY_UNCHECKED "$BIN" kernelfoundry bench --manifest-path "$M" "${FOR[@]}" \
      --samples 20 --json --against "$OUT/torch.jsonl" >"$OUT/bench-$checks.json" 2>>"$OUT/log.txt"
  else
    KERNELFOUNDRY_UNCHECKED=$checks "$BIN" kernelfoundry bench --manifest-path "$M" "${FOR[@]}" \
      --samples 20 --json --against "$OUT/torch.jsonl" >"$OUT/bench-$checks.json" 2>>"$OUT/log.txt"
  fi
  log "bench $checks exit $?"
done
log "done"
