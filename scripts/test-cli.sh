#!/usr/bin/env bash
# The `emq` suite: install the Python package into a fresh virtualenv the way a
# user does (the console script `emq` must work from there), then run the
# CLI's integration tests — the built binary against real redis-servers, on
# queues filled by that Python package (cli/tests/fill.py).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PY=$(bash scripts/python-env.sh --venv "$work/venv")

# Under scripts/test.sh the venv is the shared one (EMQ_SHARED_VENV), so the
# console script lives beside the interpreter python-env.sh printed.
say "cli: emq --version from the venv pip installed ./bindings-python into"
"$(dirname "$PY")/emq" --version

say "cli: cargo test -p echomq-cli (the emq binary against real redis-servers)"
EMQ_TEST_PYTHON="$PY" cargo test -p echomq-cli

# Again on Valkey (docs/SERVERS.md): the harness starts $EMQ_TEST_SERVER. The
# doctor tests configure a redis-server of their own and ran above.
ensure_valkey
say "cli: cargo test -p echomq-cli against $(server_version "$VALKEY_SERVER") (EMQ_TEST_SERVER)"
EMQ_TEST_SERVER="$VALKEY_SERVER" EMQ_TEST_PYTHON="$PY" cargo test -p echomq-cli -- --skip doctor_
