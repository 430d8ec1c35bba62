#!/usr/bin/env bash
# The offline-operator proof on a GPU machine, with torch timed in the same call.
#
#   gpu-proof.sh BIN OUT [BUDGET] [SECONDS_PER_KERNEL]
#
# BIN is a release cargo-kernelfoundry (the GPU machine needs no Rust toolchain: discovery reads
# the manifests directly); OUT is a directory for the results. Each kernel is tuned with the
# offline operators only (qd strategy, no LLM) at production shapes, with BUDGET evaluations
# (default 40) and, when SECONDS_PER_KERNEL is given and not 0, that time cap; then the tuned
# entries and the run directories are packed into OUT. BENCHMARKS.md quotes these files.
set -u
BIN=$1
OUT=$2
BUDGET=${3:-40}
SECS=${4:-0}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }

log "adapters"
"$BIN" kernelfoundry adapters --json > "$OUT/adapters.json" 2>>"$OUT/log.txt"

log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench --op SOFTMAX --op GEMV --op GEMM --op GELU --op SAXPY \
  >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"

tune() { # name manifest kernel shape budget
  log "tune $1"
  local cap=()
  if [ "$SECS" != 0 ]; then cap=(--time "$SECS"); fi
  timeout 200 "$BIN" kernelfoundry tune --manifest-path "$2" --kernel "$3" \
    --tune-shape "$4" --strategy qd --seed 1 --budget "$5" "${cap[@]}" --force --json \
    >>"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
  log "tune $1 exit $?"
}
tune softmax examples/quickstart/Cargo.toml SOFTMAX rows=4096,cols=4096 "$BUDGET"
tune gemv examples/kernelbench/Cargo.toml GEMV rows=8192,cols=2048 "$BUDGET"
tune matmul examples/quickstart/Cargo.toml MATMUL m=1024,n=1024,k=1024 "$BUDGET"
tune gelu examples/kernelbench/Cargo.toml GELU n=16777216 "$BUDGET"
tune saxpy examples/quickstart/Cargo.toml SAXPY n=16777216 "$BUDGET"

tar cf "$OUT/entries.tar" examples/quickstart/kernelfoundry examples/kernelbench/kernelfoundry \
  kernelfoundry/_adapters 2>>"$OUT/log.txt"
tar czf "$OUT/runs.tar.gz" examples/quickstart/target/kernelfoundry/runs examples/kernelbench/target/kernelfoundry/runs \
  target/kernelfoundry/runs 2>/dev/null
log "done"
