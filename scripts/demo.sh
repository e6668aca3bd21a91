#!/usr/bin/env bash
# The cross-runtime demo: a Python producer feeds one queue; workers in Node,
# Python and C consume it at the same time through the same Rust core; a C tool
# reads the queue and proves every order was processed, and `emq` (the
# operator's command) closes with the queues' counts when it has been built.
#
#   bash scripts/demo.sh            # throwaway redis-server on a free port
#   EMQ_URL=redis://host:6379/ bash scripts/demo.sh
#   ORDERS=5000 bash scripts/demo.sh
#
# On a fresh machine it installs what is missing (redis-server, the Python
# venv with the package, the Node addon, the C library) before it starts.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ORDERS="${ORDERS:-3000}"

say "set-up: redis-server, the core and three bindings (first run builds; later runs are quick)"
ensure_redis
command -v node >/dev/null || apt_install nodejs
build_native "$(ensure_venv "$ROOT/.venv")" >&2
PY=$(EMQ_SKIP_EMQ=1 bash scripts/python-env.sh)
make -s -C examples/polyglot c >&2

started_here=0
if [ -z "${EMQ_URL:-}" ]; then
  start_redis EMQ_URL
  started_here=1
  say "started a throwaway redis-server at $EMQ_URL"
else
  say "using EMQ_URL=$EMQ_URL; clearing the demo's own queues (orders, orders.receipts)"
  for q in orders orders.receipts; do
    redis-cli -u "$EMQ_URL" --scan --pattern "emq:{$q}:*" | xargs -r redis-cli -u "$EMQ_URL" DEL >/dev/null
  done
fi
export EMQ_URL

pids=()
logs=$(mktemp -d)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "$started_here" = 1 ]; then stop_redis EMQ_URL; fi
  rm -rf "$logs"
}
trap cleanup EXIT

# What an operator sees: every transition of the queue, one JSON message each.
redis-cli -u "$EMQ_URL" SUBSCRIBE 'emq:{orders}:events' >"$logs/events.out" 2>/dev/null & pids+=($!)

say "starting workers: node, python, c (queue: orders)"
node examples/polyglot/worker.js >"$logs/node.out" 2>"$logs/node.err" & pids+=($!)
"$PY" examples/polyglot/worker.py >"$logs/python.out" 2>"$logs/python.err" & pids+=($!)
examples/polyglot/worker-c >"$logs/c.out" 2>"$logs/c.err" & pids+=($!)

say "python producer: $ORDERS orders (every 20th fails once and succeeds on retry)"
"$PY" examples/polyglot/producer.py "$ORDERS"

say "progress"
examples/polyglot/summary progress "$ORDERS"

say "stopping the workers gracefully (SIGTERM)"
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
for w in node python c; do
  cat "$logs/$w.out"
  if [ -s "$logs/$w.err" ] && grep -qiE "error|panic|traceback" "$logs/$w.err"; then
    echo "--- $w worker stderr:"; tail -5 "$logs/$w.err"
  fi
done

say "summary (C tool reading the queue)"
examples/polyglot/summary report "$ORDERS"

say "queue events seen by redis-cli SUBSCRIBE 'emq:{orders}:events' (at-most-once)"
grep -o '"event":"[a-z_]*"' "$logs/events.out" | sort | uniq -c || echo "(none)"
grep -m 3 '^{' "$logs/events.out" || true
# `emq` is not part of the demo's build (scripts/lib.sh, build_native): shown
# when an earlier build made it, else named.
if [ -x "$CARGO_TARGET_DIR/release/emq" ]; then
  say "summary (emq stats, the operator's command)"
  "$CARGO_TARGET_DIR/release/emq" stats orders orders.receipts
else
  say "the operator's command: \`cargo build --release -p echomq-cli\` builds \`emq\` (2-3 more minutes the first time), then"
  echo "  target/release/emq stats orders orders.receipts    # counts per state"
  echo "  target/release/emq dashboard                       # the web dashboard"
fi
