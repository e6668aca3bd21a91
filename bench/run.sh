#!/usr/bin/env bash
# The full benchmark: build every driver, then run bench/run.py (≈15 min on 2 cores).
# Writes bench/results/<date>.md and .png.
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
bash bench/build.sh
python3 bench/run.py "$@"
