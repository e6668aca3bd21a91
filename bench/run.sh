#!/usr/bin/env bash
# The full benchmark: build every driver, then run bench/run.py (≈23 min on 2 cores).
# Writes bench/results/<date>.md, .json (every run) and .png (the chart).
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
bash bench/build.sh
# The peers' virtualenv has matplotlib for the chart; plain python3 works without it.
py=python3
[ -x bench/peers/.venv/bin/python ] && py=bench/peers/.venv/bin/python
"$py" bench/run.py "$@"
