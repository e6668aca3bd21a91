#!/usr/bin/env bash
# The dashboard suite: its Rust unit tests, then the browser tests — headless
# Chromium (Debian's chromium + chromium-driver) driven by Selenium (PyPI),
# against a real redis-server that the tests start, filled by the echomq
# Python package, talking to the dashboard binary on a free port.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
apt_install chromium chromium-driver

say "dashboard: unit tests and the binary"
cargo test -p echomq-dashboard --quiet
cargo build -p echomq-dashboard --bin emq-dashboard --quiet

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PY=$(bash scripts/python-env.sh --venv "$work/venv" selenium pytest pytest-timeout)

say "dashboard: browser tests (headless chromium $(chromium --version 2>/dev/null | awk '{print $2}'))"
set +e
"$PY" -m pytest -p no:cacheprovider --timeout 120 -q -rfE dashboard/tests/browser
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "dashboard: pytest collected no tests; failing instead of passing silently" >&2
  exit 1
fi
exit "$rc"
