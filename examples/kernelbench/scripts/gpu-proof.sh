#!/usr/bin/env bash
# The offline-operator proof on a GPU machine, with torch timed in the same call.
#
#   gpu-proof.sh BIN OUT [SECONDS_PER_KERNEL]
#
# BIN is a release cargo-kernelfoundry (the GPU machine needs no Rust toolchain: discovery reads
# the manifests directly); OUT is a directory for the results. Each kernel is tuned with the
# offline operators only (qd strategy, no LLM) at production shapes, then the tuned entries are
# packed into OUT/entries.tar. BENCHMARKS.md quotes these files.
set -u
BIN=$1
OUT=$2
SECS=${3:-35}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }

log "adapters"
"$BIN" kernelfoundry adapters --json > "$OUT/adapters.json" 2>>"$OUT/log.txt"

log "torch"
python3 examples/kernelbench/torch_bench.py --suite kernelbench --op SOFTMAX --op GEMV --op GEMM \
  >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"

tune() { # name manifest kernel shape seconds budget
  log "tune $1"
  timeout $(( $5 + 40 )) "$BIN" kernelfoundry tune --manifest-path "$2" --kernel "$3" \
    --tune-shape "$4" --strategy qd --seed 1 --budget "$6" --time "$5" --force --json \
    >>"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
  log "tune $1 exit $?"
}
tune softmax examples/quickstart/Cargo.toml SOFTMAX rows=4096,cols=4096 "$SECS" 40
tune gemv examples/kernelbench/Cargo.toml GEMV rows=8192,cols=2048 "$SECS" 40
tune matmul examples/quickstart/Cargo.toml MATMUL m=1024,n=1024,k=1024 "$SECS" 40
tune gelu examples/kernelbench/Cargo.toml GELU n=16777216 $(( SECS / 2 )) 20

tar cf "$OUT/entries.tar" examples/quickstart/kernelfoundry examples/kernelbench/kernelfoundry \
  kernelfoundry/_adapters 2>>"$OUT/log.txt"
log "done"
