#!/usr/bin/env bash
# Retunes the kernelbench kernels whose operators changed since their entries were measured, then
# times the whole suite beside torch in the same call.
#
#   retune-new-operators.sh BIN OUT
#
# BIN is a release cargo-kernelfoundry; OUT a directory for the results. The kernels and their
# search seconds: ATTENTION_HEAD (flash-attention's register-resident query and prefetched tiles),
# GEMM_DIVIDE_SUM and GEMM_SIGMOID_LOGSUMEXP (tile-split-k over a rows-form GEMM), SILU_AND_MUL
# (widen under the spec's new constraint), TRANSPOSE (transpose-tile). Offline operators only,
# qd, seed 1, evaluations capped at 400. Then torch_bench.py over the suite and `bench --against`
# its times; BENCHMARKS.md quotes these files.
set -u
BIN=$1
OUT=$2
cd "$(dirname "$0")/../../.."
. examples/kernelbench/scripts/common.sh

tune ATTENTION_HEAD 60
tune GEMM_DIVIDE_SUM 50
tune GEMM_SIGMOID_LOGSUMEXP 50
tune SILU_AND_MUL 30
tune TRANSPOSE 30

torch_and_bench
