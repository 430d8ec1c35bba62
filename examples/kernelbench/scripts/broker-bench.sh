#!/usr/bin/env bash
# Evaluations per second through a NATS broker against the local worker, on one machine.
#
#   broker-bench.sh BIN NATS_SERVER_BIN OUTDIR [BUDGET]
#
# BIN is a release cargo-kernelfoundry and NATS_SERVER_BIN a nats-server (2.9 or later); nothing
# else is needed (no cargo: discovery reads the manifests directly). The quickstart
# (examples/quickstart) is copied to a temporary directory and tuned three times with the same
# strategy, seed and budget per kernel (BUDGET, default 24): with the local worker process, then
# through a nats-server started here (JetStream on, its store in the temporary directory) with one
# `worker --broker` process, then with two. Workers run on this machine's default adapter (set
# KERNELFOUNDRY_ADAPTER to choose another) and are started, and have measured the adapter, before
# the clock starts; the adapter's ceilings are measured once beforehand, so no run pays for them.
#
# Each run appends one JSON line to OUTDIR/broker-bench.jsonl:
#   {"mode": "local"|"broker", "workers": N, "kernels": K, "evaluations": E, "seconds": S,
#    "evals_per_s": E/S, "tune_evals_per_s": [per kernel, as `tune --json` reports it]}
# where E counts the search evaluations of every kernel and S is the wall time of the whole tune
# command. OUTDIR also gets each tune's JSON, the workers' and the server's logs, and log.txt.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BIN NATS_SERVER_BIN OUTDIR [BUDGET]" >&2
  exit 2
fi
BIN=$(realpath "$1")
NATS=$(realpath "$2")
mkdir -p "$3"
OUT=$(realpath "$3")
BUDGET=${4:-24}
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt" >&2; }
: > "$OUT/broker-bench.jsonl"

# A standalone copy of the quickstart: its own workspace, absolute paths to this checkout's crates
# (only used where cargo is installed), no cache entries.
cp -r "$REPO/examples/quickstart" "$WORK/quickstart"
rm -rf "$WORK/quickstart/kernelfoundry" "$WORK/quickstart/target"
sed -i "s#path = \"../../#path = \"$REPO/#" "$WORK/quickstart/Cargo.toml"
printf '\n[workspace]\n' >> "$WORK/quickstart/Cargo.toml"
MANIFEST="$WORK/quickstart/Cargo.toml"
export CARGO_TARGET_DIR="$WORK/target"

"$BIN" kernelfoundry --version >> "$OUT/log.txt" 2>&1 || true
"$NATS" --version >> "$OUT/log.txt" 2>&1 || true
"$BIN" kernelfoundry adapters --json > "$OUT/adapters.json" 2>>"$OUT/log.txt"

log "measuring the adapter's ceilings once (stored in the copy, read by every run)"
"$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --kernel SAXPY --strategy exhaustive \
  --budget 1 --force --json > /dev/null 2>>"$OUT/log.txt"

tune() { # mode workers [tune args…]
  local mode=$1 workers=$2
  shift 2
  local json="$OUT/tune-$mode-$workers.json" start end
  log "tune: $mode, $workers worker(s), budget $BUDGET per kernel"
  local rc=0
  start=$(date +%s.%N)
  "$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --strategy qd --seed 1 \
    --budget "$BUDGET" --force --json "$@" > "$json" 2>>"$OUT/log.txt" || rc=$?
  end=$(date +%s.%N)
  if [ "$rc" -ne 0 ]; then log "tune $mode $workers exited $rc (a failed kernel is 1; see log.txt)"; fi
  local evals kernels rates
  evals=$(grep -o '"evaluations":[0-9]*' "$json" | awk -F: '{s += $2} END {print s + 0}')
  kernels=$(grep -o '"evaluations":[0-9]*' "$json" | wc -l)
  rates=$(grep -o '"evaluations_per_s":[0-9.eE+-]*' "$json" | cut -d: -f2 | paste -sd, -)
  awk -v mode="$mode" -v w="$workers" -v k="$kernels" -v e="$evals" -v s0="$start" \
    -v s1="$end" -v rates="$rates" 'BEGIN {
      s = s1 - s0
      printf "{\"mode\":\"%s\",\"workers\":%d,\"kernels\":%d,\"evaluations\":%d,\"seconds\":%.3f,\"evals_per_s\":%.3f,\"tune_evals_per_s\":[%s]}\n", mode, w, k, e, s, e / s, rates
    }' | tee -a "$OUT/broker-bench.jsonl"
}

tune local 0

log "starting nats-server"
"$NATS" -js -a 127.0.0.1 -p -1 -sd "$WORK/js" --ports_file_dir "$WORK" > "$OUT/nats.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  PORTS=$(cat "$WORK"/*.ports 2>/dev/null || true)
  [ -n "$PORTS" ] && break
  sleep 0.1
done
ADDR=$(echo "$PORTS" | grep -o '127\.0\.0\.1:[0-9]*' | head -1)
if [ -z "$ADDR" ]; then
  log "nats-server did not start; see $OUT/nats.log"
  exit 1
fi
URL="nats://$ADDR"

start_worker() { # n
  log "starting worker $1"
  "$BIN" kernelfoundry worker --broker "$URL" --name "bench-$1" > "$OUT/worker-$1.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 600); do
    grep -q "waiting for evaluations" "$OUT/worker-$1.log" && return 0
    sleep 0.5
  done
  log "worker $1 did not announce itself; see $OUT/worker-$1.log"
  exit 1
}

start_worker 1
tune broker 1 --broker "$URL"
start_worker 2
tune broker 2 --broker "$URL"
log "done: $OUT/broker-bench.jsonl"
