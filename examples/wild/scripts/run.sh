#!/usr/bin/env bash
# run.sh BIN CRATE OUT SECS DEADLINE_EPOCH [PART/PARTS]: tunes every kernel of the crate crate.py
# wrote (qd, seed 1, offline operators, SECS of search and at most 200 evaluations each, none
# started after the deadline), then benches the kernels it tuned; OUT gets log.txt, tunes.jsonl,
# bench.json, entries.tar. PART/PARTS (e.g. 1/2) takes every PARTS-th kernel from the PART-th, so
# a corpus too long for one sitting splits into runs whose tables concatenate.
set -u
BIN=$1; CRATE=$2; OUT=$3; SECS=$4; DEADLINE=$5; SPLIT=${6:-1/1}
PART=${SPLIT%/*}; PARTS=${SPLIT#*/}
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
M=$CRATE/Cargo.toml
nvidia-smi --query-gpu=name,driver_version --format=csv >>"$OUT/log.txt" 2>&1
ALL=$(grep -o 'pub static [A-Z0-9_]*: Kernel' $CRATE/src/lib.rs | cut -d' ' -f3 | tr -d :)
MINE=$(echo "$ALL" | awk -v p="$PART" -v n="$PARTS" '(NR - p) % n == 0')
SEL=()
for k in $MINE; do
  if [ "$(date +%s)" -ge "$DEADLINE" ]; then log "deadline: stopping before $k"; break; fi
  SEL+=(--kernel "$k")
  log "tune $k"
  timeout $((SECS + 60)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$k" \
    --strategy qd --seed 1 --time "$SECS" --budget 200 --json >"$OUT/tune-$k.json" 2>>"$OUT/log.txt"
  log "tune $k exit $?"
done
log "bench"
timeout 150 "$BIN" kernelfoundry bench --manifest-path "$M" "${SEL[@]}" --samples 10 --json >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
tar cf "$OUT/entries.tar" "$CRATE/kernelfoundry" 2>/dev/null
cat "$OUT"/tune-*.json > "$OUT/tunes.jsonl"; rm -f "$OUT"/tune-*.json
log done
