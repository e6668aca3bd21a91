#!/usr/bin/env bash
# The Python suite. Installs the package into a fresh virtualenv the way a user
# would (`pip install ./bindings-python`: maturin builds the abi3 wheel, release,
# in the shared cargo target dir; or, under scripts/test.sh, the release wheel
# of scripts/dist.sh given as EMQ_WHEEL), type-checks the examples and the package
# (stubs included) with mypy --strict, then runs pytest; the tests start and
# stop their own redis-server on a free port. It also runs the Rust side's
# cross-runtime test, which needs this Python: a Rust subscriber following a
# Python worker (the C one is in scripts/test-c.sh).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PY=$(bash scripts/python-env.sh --venv "$work/venv" pytest pytest-timeout redis mypy prometheus_client)

say "python: mypy --strict (examples, the installed package and its stubs)"
"$PY" -m mypy --strict --cache-dir "$work/mypy" examples/python
"$PY" -m mypy --strict --cache-dir "$work/mypy" examples/polyglot
"$PY" -m mypy --strict --cache-dir "$work/mypy" -p echomq
"$PY" -m mypy --strict --cache-dir "$work/mypy" tests/cross

say "python: a Rust subscriber and wait_for follow a Python worker (core/tests/observability.rs, ignored without EMQ_TEST_PYTHON)"
EMQ_TEST_PYTHON="$PY" cargo test -p echomq --test observability -- --ignored

say "python: pytest (against a real redis-server)"
set +e
"$PY" -m pytest -p no:cacheprovider --timeout 300 -q -rfE bindings-python/tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "python: pytest collected no tests; failing instead of passing silently" >&2
  exit 1
fi
[ "$rc" -eq 0 ] || exit "$rc"

# The wire-facing files again on Valkey (docs/SERVERS.md): the fixtures start
# $EMQ_TEST_SERVER. The slow process and thread tests run on Redis only.
ensure_valkey
say "python: pytest (the wire-facing files) against $(server_version "$VALKEY_SERVER") (EMQ_TEST_SERVER)"
EMQ_TEST_SERVER="$VALKEY_SERVER" "$PY" -m pytest -p no:cacheprovider --timeout 300 -q -rfE \
  bindings-python/tests/test_{client,async,admin,job_features,repeat,progress_results,durable,error_kinds,enqueue_options}.py
