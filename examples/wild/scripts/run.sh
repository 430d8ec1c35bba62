#!/usr/bin/env bash
# run.sh BIN CRATE OUT SECS DEADLINE_EPOCH: tunes every kernel of the crate crate.py wrote (qd, seed 1,
# offline operators, SECS of search and at most 200 evaluations each, none started after the
# deadline), then benches them all; OUT gets log.txt, tunes.jsonl, bench.json, entries.tar.
set -u
BIN=$1; CRATE=$2; OUT=$3; SECS=$4; DEADLINE=$5
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
M=$CRATE/Cargo.toml
nvidia-smi --query-gpu=name,driver_version --format=csv >>"$OUT/log.txt" 2>&1
for k in $(grep -o 'pub static [A-Z0-9_]*: Kernel' $CRATE/src/lib.rs | cut -d' ' -f3 | tr -d :); do
  if [ "$(date +%s)" -ge "$DEADLINE" ]; then log "deadline: stopping before $k"; break; fi
  log "tune $k"
  timeout $((SECS + 60)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$k" \
    --strategy qd --seed 1 --time "$SECS" --budget 200 --json >"$OUT/tune-$k.json" 2>>"$OUT/log.txt"
  log "tune $k exit $?"
done
log "bench"
timeout 150 "$BIN" kernelfoundry bench --manifest-path "$M" --samples 10 --json >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
tar cf "$OUT/entries.tar" "$CRATE/kernelfoundry" 2>/dev/null
cat "$OUT"/tune-*.json > "$OUT/tunes.jsonl"; rm -f "$OUT"/tune-*.json
log done
