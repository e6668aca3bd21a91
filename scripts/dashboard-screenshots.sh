#!/usr/bin/env bash
# Re-take the dashboard screenshots in docs/ (shown in the README and
# docs/DASHBOARD.md) from a busy throwaway deployment. Runs ~90 s; not a test.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
apt_install chromium chromium-driver
cargo build -p echomq-dashboard --bin emq-dashboard --quiet
PY=$(bash scripts/python-env.sh selenium)
cd dashboard/tests/browser
"$PY" screenshots.py --out "$ROOT/docs" "$@"
