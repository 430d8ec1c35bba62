# Shared by the device scripts: sourced after BIN and OUT are set and the working directory is
# the repository root. log prints and appends to OUT/log.txt; tune K SECONDS retunes one
# kernelbench kernel (offline operators, qd, seed 1, at most 400 evaluations); torch_and_bench
# times the suite in torch and benches the committed entries against it, then saves the entries.
M=examples/kernelbench/Cargo.toml
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }

tune() { # kernel seconds
  log "tune $1"
  timeout $(($2 + 120)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$1" --force \
    --strategy qd --seed 1 --time "$2" --budget 400 --json >"$OUT/tune-$1.json" 2>>"$OUT/log.txt"
  log "tune $1 exit $?"
}

torch_and_bench() {
  log "torch"
  python3 examples/kernelbench/torch_bench.py --suite kernelbench >"$OUT/torch.jsonl" 2>>"$OUT/log.txt"
  log "bench"
  "$BIN" kernelfoundry bench --manifest-path "$M" --samples 20 --json --against "$OUT/torch.jsonl" \
    >"$OUT/bench.json" 2>>"$OUT/log.txt"
  log "bench exit $?"
  tar cf "$OUT/entries.tar" examples/kernelbench/kernelfoundry 2>>"$OUT/log.txt"
  log "done"
}
