#!/usr/bin/env bash
# Tunes the blind corpus kernel by kernel until a deadline, then (with --bench) times every entry.
#
#   tune-blind.sh BIN OUT SECONDS_PER_KERNEL DEADLINE_EPOCH [--bench]
#
# BIN is a release cargo-kernelfoundry; OUT a directory for the results. Offline operators only,
# qd, seed 1, evaluations capped at 200. A kernel that already has an entry for this adapter is
# skipped by `tune` itself (no --force; entries for other adapters do not count), so the script
# can continue across several calls: no kernel is started after DEADLINE_EPOCH (seconds since
# 1970). Each kernel's `tune --json` lands in
# OUT/tune-<KERNEL>.json; with --bench, `bench --json` over the whole crate in OUT/bench.json.
set -u
BIN=$1
OUT=$2
SECS=$3
DEADLINE=$4
BENCH=${5:-}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
M=examples/blind/Cargo.toml
for k in $(grep -o 'pub static [A-Z0-9_]*: Kernel' examples/blind/src/kernels.rs | cut -d' ' -f3 | tr -d :); do
  if [ "$(date +%s)" -ge "$DEADLINE" ]; then
    log "deadline: stopping before $k"
    break
  fi
  log "tune $k"
  timeout $((SECS + 90)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$k" \
    --strategy qd --seed 1 --time "$SECS" --budget 200 --json >"$OUT/tune-$k.json" 2>>"$OUT/log.txt"
  log "tune $k exit $?"
done
if [ "$BENCH" = "--bench" ]; then
  log "bench"
  "$BIN" kernelfoundry bench --manifest-path "$M" --samples 20 --json >"$OUT/bench.json" 2>>"$OUT/log.txt"
  log "bench exit $?"
fi
log "done"
