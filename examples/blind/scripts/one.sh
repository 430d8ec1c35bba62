#!/usr/bin/env bash
# Retunes one blind-corpus kernel (offline operators, qd, seed 1, at most 400 evaluations,
# --force), benches it, and times torch's fp32 matmul of its GEMM shape for reference.
#
#   one.sh BIN OUT KERNEL SECONDS [M N K]
set -u
BIN=$1
OUT=$2
K=$3
T=$4
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
M=examples/blind/Cargo.toml
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$OUT/log.txt" 2>&1
log "tune $K"
timeout $((T + 120)) "$BIN" kernelfoundry tune --manifest-path "$M" --kernel "$K" --force \
  --strategy qd --seed 1 --time "$T" --budget 400 --json >"$OUT/tune-$K.json" 2>>"$OUT/log.txt"
log "tune exit $?"
"$BIN" kernelfoundry bench --manifest-path "$M" --kernel "$K" --samples 20 --json \
  >"$OUT/bench-$K.json" 2>>"$OUT/log.txt"
log "bench exit $?"
if [ $# -ge 7 ]; then
  python3 - "$5" "$6" "$7" >"$OUT/torch.txt" 2>&1 <<'PY'
import sys, torch
m, n, k = map(int, sys.argv[1:4])
a = torch.randn(m, k, device="cuda"); b = torch.randn(k, n, device="cuda")
torch.backends.cuda.matmul.allow_tf32 = False
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
times = []
for i in range(60):
    flush.zero_()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize()
    if i >= 10:
        times.append(s.elapsed_time(e))
times.sort()
med = times[len(times) // 2]
print(f"torch {torch.__version__} fp32 matmul {m}x{n}x{k}: median {med * 1000:.1f} us over {len(times)} ({2 * m * n * k / med / 1e9:.1f} TFLOP/s), L2 flushed")
PY
  cat "$OUT/torch.txt" | tee -a "$OUT/log.txt"
fi
tar cf "$OUT/entry.tar" "examples/blind/kernelfoundry/$K" 2>>"$OUT/log.txt"
log done
