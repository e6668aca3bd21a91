#!/usr/bin/env bash
# The cluster suite (issue #15): every verb, the worker on three masters, the
# fence, durable writes, a live slot migration, and the failover drill, each on
# a loopback 3+3 cluster started by scripts/cluster.sh. The server binary is
# $EMQ_SERVER_BIN (default Debian's redis-server), so the same suite runs on
# Valkey with EMQ_SERVER_BIN=/path/to/valkey-server.
#
# Without arguments (as scripts/test.sh calls it, after `cargo test -p echomq`
# already ran tests/cluster.rs) it runs the drill; with --all, the cluster
# tests as well (e.g. EMQ_SERVER_BIN=…/valkey-server bash scripts/test-cluster.sh --all).
#
# The drill adds a Python producer process (through the same core) when
# $EMQ_DRILL_PYTHON names a python with echomq installed; otherwise this
# script builds one in a temporary virtualenv.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis

if [ -z "${EMQ_DRILL_PYTHON:-}" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  EMQ_DRILL_PYTHON="$(bash scripts/python-env.sh --venv "$work/venv")"
fi
export EMQ_DRILL_PYTHON

say "cluster: the failover drill${1:+ and the cluster tests} (server: ${EMQ_SERVER_BIN:-redis-server})"
"${EMQ_SERVER_BIN:-redis-server}" --version
tests=(--test drill)
[ "${1:-}" = --all ] && tests+=(--test cluster)
cargo test -p echomq "${tests[@]}" -- --include-ignored --nocapture
