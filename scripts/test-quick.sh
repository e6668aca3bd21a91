#!/usr/bin/env bash
# The contributor's loop (`bash scripts/test.sh --quick`): after a first build,
# the checks that catch most mistakes in a few minutes on 2 cores.
#
#   format and lints          cargo fmt --check, clippy -D warnings
#   the core                  its unit and integration tests against redis-server
#                             only: no Valkey pass, no loopback cluster, no drill
#   C                         cargo test -p echomq-ffi (header drift, layouts, parity),
#                             test_ffi.c and test_cpp.cpp once (no valgrind)
#   Python                    pytest, without the slow files listed below
#   Node                      node --test, without the slow files listed below
#   the CLI, the dashboard    their unit tests (emq against real servers and the
#                             browser tests: scripts/test-cli.sh, test-dashboard.sh)
#   snippets                  every code block of the docs (scripts/test-snippets.sh)
#
# Left to the full command (scripts/test.sh): the Valkey pass, fuzz, dist and
# test-dist, valgrind, the C examples and demo pieces, mypy, the browser tests,
# the cluster tests and the failover drill, bench smoke, and the slow files below.
# A FAIL here is a FAIL there; a pass here is not a pass there.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
command -v openssl >/dev/null || apt_install openssl  # core/tests/tls.rs mints certificates

# Files left to the full command, chosen by what they do (processes, packing,
# storms, a compiler): fork children; the demo's producer and worker processes;
# threads sharing a client. npm pack + install; 5000-call storms; tsc.
PY_SLOW=(test_fork.py test_demo.py test_threads.py)
NODE_SLOW=(pack.test.js concurrency.test.js typecheck.test.js)

start=$SECONDS
lap() { say "$* (+$((SECONDS - start))s)"; }

lap "rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

lap "rust: the core against $(server_version redis-server) (no Valkey pass, no cluster, no drill)"
tests=()
for f in core/tests/*.rs; do
  case "$(basename "$f" .rs)" in cluster | drill) ;; *) tests+=(--test "$(basename "$f" .rs)") ;; esac
done
cargo test -q -p echomq --lib "${tests[@]}"

lap "bindings: the release C library, the Node addon, the Python package (incremental)"
# One cargo build for the three (scripts/lib.sh, build_native): after the first
# run it finds nothing to do unless a source changed. (`npm run build` would
# relink the addon every time: napi forces it, to regenerate native.d.ts —
# the full command checks that file.) A venv kept in the target dir, so pytest
# is installed once, not per run.
build_native "$(ensure_venv "$CARGO_TARGET_DIR/quick-venv")" >/dev/null
[ -d bindings-node/node_modules ] || (cd bindings-node && ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error)
PY=$(EMQ_SKIP_EMQ=1 bash scripts/python-env.sh --venv "$CARGO_TARGET_DIR/quick-venv" pytest pytest-timeout redis prometheus_client)
export EMQ_TEST_PYTHON="$PY"

work=$(mktemp -d)
cleanup() { stop_redis EMQ_URL; rm -rf "$work"; }
trap cleanup EXIT

lap "c: cargo test -p echomq-ffi, then test_ffi.c and test_cpp.cpp against a redis-server"
cargo test -q -p echomq-ffi
LIB="$CARGO_TARGET_DIR/release"
LINK=(-L"$LIB" -Wl,-rpath,"$LIB" -lechomq -lpthread)
CWARN=(-Wall -Wextra -Werror -pedantic)
gcc -std=c11 "${CWARN[@]}" -Iinclude ffi-c/tests/c/test_ffi.c -o "$work/test_ffi" "${LINK[@]}"
g++ -std=c++17 "${CWARN[@]}" -Iinclude ffi-c/tests/c/test_cpp.cpp -o "$work/test_cpp" "${LINK[@]}"
start_redis EMQ_URL
EMQ_URL="$EMQ_URL" "$work/test_ffi"
redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
EMQ_URL="$EMQ_URL" "$work/test_cpp"
stop_redis EMQ_URL

lap "python: pytest (without ${PY_SLOW[*]})"
ignores=()
for f in "${PY_SLOW[@]}"; do ignores+=(--ignore "bindings-python/tests/$f"); done
"$PY" -m pytest -p no:cacheprovider --timeout 300 -q -x "${ignores[@]}" bindings-python/tests

lap "node: node --test (without ${NODE_SLOW[*]})"
files=()
for f in bindings-node/test/*.test.js; do
  skip=0
  for s in "${NODE_SLOW[@]}"; do [ "$(basename "$f")" = "$s" ] && skip=1; done
  [ "$skip" = 0 ] && files+=("${f#bindings-node/}")
done
(cd bindings-node && node --test --test-concurrency=1 "${files[@]}")

# emq's integration tests (cli/tests/cli.rs, ~100 s: the binary against real
# servers) run in scripts/test-cli.sh; here its unit tests and the dashboard's.
lap "cli and dashboard: unit tests (no browser; emq's integration tests: scripts/test-cli.sh)"
cargo test -q -p echomq-cli --lib --bins
cargo test -q -p echomq-dashboard

lap "snippets"
# The addon build_native staged is the one (no napi relink).
EMQ_NODE_PREBUILT=1 EMQ_SNIPPET_PYTHON="$PY" bash scripts/test-snippets.sh

lap "quick: all passed"
