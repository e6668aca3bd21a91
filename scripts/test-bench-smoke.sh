#!/usr/bin/env bash
# A tiny run of the benchmark harness (N=200, one round) so it cannot rot.
# Benchmarks are not tests; this only checks that every driver still runs.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# The Rust driver in debug: a smoke run checks that it runs, not how fast.
export EMQ_BENCH_PROFILE=debug
bash bench/build.sh
python3 bench/run.py --smoke
