#!/usr/bin/env bash
# Every code block of README.md and the language guides (docs/{PYTHON,NODE,C,API,
# GETTING-STARTED}.md), and every examples/*/quickstart* file, run against a
# throwaway redis-server: Python run, Node run as CommonJS (```js) and as an ES
# module (```mjs), C and C++ compiled, linked with the built library and run,
# Rust built as binaries of a scratch crate and run. The convention (fence tags,
# the skip/compile-only/until-sigterm markers, the URL rewrite) is in
# scripts/snippets.py and docs/CONTRIBUTING.md.
#
#   bash scripts/test-snippets.sh [--list] [FILE.md ...]
#
# The bindings are built (or found up to date) first: the release C library,
# the Node addon (npm run build), and the Python package in a venv — the one
# $EMQ_SNIPPET_PYTHON names, else scripts/python-env.sh's (the release wheel
# $EMQ_WHEEL under scripts/test.sh, no build).
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ "${1:-}" = --list ]; then exec python3 scripts/snippets.py "$@"; fi
ensure_redis
for tool in gcc:gcc g++:g++; do
  command -v "${tool%%:*}" >/dev/null || apt_install "${tool#*:}"
done

say "snippets: the C library, the Node addon, the Python package"
if [ -n "${EMQ_C_PREFIX:-}" ]; then
  export EMQ_C_LIBDIR="$EMQ_C_PREFIX/lib"  # dist.sh's (scripts/test.sh)
else
  cargo build --release --quiet -p echomq-ffi
fi
if [ "${EMQ_NODE_PREBUILT:-0}" = 1 ] || [ ! -d bindings-node/node_modules ]; then
  bash scripts/node-build.sh
else
  (cd bindings-node && npm run --silent build >/dev/null)
fi
if [ -z "${EMQ_SNIPPET_PYTHON:-}" ]; then
  EMQ_SNIPPET_PYTHON=$(bash scripts/python-env.sh)
fi
export EMQ_SNIPPET_PYTHON

trap 'stop_redis EMQ_URL' EXIT
start_redis EMQ_URL
export EMQ_URL
say "snippets: every code block against $EMQ_URL"
python3 scripts/snippets.py "$@"
