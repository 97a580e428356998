#!/usr/bin/env bash
# Moved to benchmarks/gpu_check.sh (test suite on cuda:0, graph capture of a full RL step, run_all.py).
# Kept as a thin wrapper for old callers: OUT=/some/dir bash tools/gpu_check.sh [quick]
exec bash "$(dirname "$0")/../benchmarks/gpu_check.sh" "${OUT:-gpu_out}" "$@"
