#!/usr/bin/env bash
# Tune and benchmark a crate of marked kernels on a GPU machine (the kernelbench suite, the Llama
# layer), as BENCHMARKS.md records them.
#
#   suite.sh BIN OUT MANIFEST [BUDGET] [SECONDS_PER_KERNEL] [TUNE_TIMEOUT]
#
# BIN is a release cargo-kernelfoundry (no Rust toolchain needed on the GPU machine); OUT a
# directory for the results. Every kernel of MANIFEST is tuned at the attribute's shapes (the
# realistic ones) with the offline operators (qd, seed 1, BUDGET evaluations, default 16, and at
# most SECONDS_PER_KERNEL of search, default 8), the whole tune stopped after TUNE_TIMEOUT seconds
# (default 420; kernels it did not reach stay not-tuned and are counted so), then `bench` re-measures
# every kernel (baseline, tuned, hand-written reference) as JSON; OUT also gets the cache entries
# (entries.tar) and the run directories of these tunes (runs.tar.gz: every evaluation's report).
#
# KERNELS="GEMM GEMV …" restricts both steps to those kernels (one tune per kernel): the whole suite at realistic
# shapes does not fit one 10-minute GPU call (about 4 s per evaluation at these shapes), so run
# it in parts, e.g. the level-1 kernels in one call and the level-2 fusions in another.
#
# AGAINST=FILE passes `--against FILE` to bench: the kernels placed against reference times, such as
# torch_bench.py's output (run it first, in the same call).
#
# SHAPES=FILE tunes and benchmarks at other shapes than the attribute's: each line of FILE that is
# not blank or a `#` comment is one `--tune-shape`, `KERNEL:name=value,…` for that kernel only
# (or `name=value,…` for every kernel), passed to tune and bench; a kernel no line names keeps the
# attribute's shapes. Each command gets only the lines for the kernels it runs (and the
# unqualified ones). scripts/cpu-shapes.txt sizes the kernelbench suite for a CPU adapter
# (lavapipe), scripts/cpu-shapes-llama32-1b.txt the Llama layer.
set -u
BIN=$1
OUT=$2
MANIFEST=$3
BUDGET=${4:-16}
SECS=${5:-8}
TUNE_TIMEOUT=${6:-420}
SHAPE_LINES=()
if [ -n "${SHAPES:-}" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [ -n "$line" ] && SHAPE_LINES+=("$line")
  done <"$SHAPES" || exit 2
fi
# `--tune-shape` arguments for the kernels named in $* (every line when none is named).
shape_args() {
  SHAPE_ARGS=()
  local line
  for line in ${SHAPE_LINES[@]+"${SHAPE_LINES[@]}"}; do
    if [ $# -gt 0 ] && [[ $line == *:* ]]; then
      case " $* " in *" ${line%%:*} "*) ;; *) continue ;; esac
    fi
    SHAPE_ARGS+=(--tune-shape "$line")
  done
}
cd "$(dirname "$0")/../../.."
mkdir -p "$OUT"
SELECT=()
for k in ${KERNELS:-}; do SELECT+=(--kernel "$k"); done
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/log.txt"; }
[ -n "${SHAPES:-}" ] && log "shapes from $SHAPES: ${SHAPE_LINES[*]}"
touch "$OUT/.start"

# timeout signals its whole process group, so the evaluation worker stops with the tune.
if [ -z "${KERNELS:-}" ]; then
  log "tune $MANIFEST"
  shape_args
  timeout -k 30 "$TUNE_TIMEOUT" "$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --strategy qd --seed 1 \
    --budget "$BUDGET" --time "$SECS" --force --json "${SHAPE_ARGS[@]}" >"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
  log "tune exit $?"
else
  # `tune` takes one --kernel: one tune per kernel, one JSON line each, within TUNE_TIMEOUT in all.
  : >"$OUT/tune.jsonl"
  start=$(date +%s)
  for k in $KERNELS; do
    left=$((TUNE_TIMEOUT - ($(date +%s) - start)))
    if [ "$left" -le 0 ]; then log "tune $k: no time left"; continue; fi
    log "tune $k"
    shape_args "$k"
    timeout -k 30 "$left" "$BIN" kernelfoundry tune --manifest-path "$MANIFEST" --kernel "$k" --strategy qd \
      --seed 1 --budget "$BUDGET" --time "$SECS" --force --json "${SHAPE_ARGS[@]}" >>"$OUT/tune.jsonl" 2>>"$OUT/log.txt"
    log "tune $k exit $?"
  done
fi
log "bench"
shape_args ${KERNELS:-}
AGAINST_ARGS=()
[ -n "${AGAINST:-}" ] && AGAINST_ARGS=(--against "$AGAINST")
"$BIN" kernelfoundry bench --manifest-path "$MANIFEST" --samples 20 --json "${SELECT[@]}" "${SHAPE_ARGS[@]}" \
  ${AGAINST_ARGS[@]+"${AGAINST_ARGS[@]}"} >"$OUT/bench.json" 2>>"$OUT/log.txt"
log "bench exit $?"
dir=$(dirname "$MANIFEST")
tar cf "$OUT/entries.tar" "$dir/kernelfoundry" 2>>"$OUT/log.txt"
# The run directories of these tunes (every evaluation's report, failure logs included).
runs=()
for r in target/kernelfoundry/runs "$dir/target/kernelfoundry/runs"; do
  [ -d "$r" ] && while IFS= read -r d; do runs+=("$d"); done < <(find "$r" -mindepth 1 -maxdepth 1 -newer "$OUT/.start")
done
[ ${#runs[@]} -gt 0 ] && tar czf "$OUT/runs.tar.gz" "${runs[@]}" 2>>"$OUT/log.txt"
log "done"
