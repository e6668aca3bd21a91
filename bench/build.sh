#!/usr/bin/env bash
# Build every benchmark driver that can be built here: the Rust driver, the C
# driver (when the C ABI is present), and the peers' environments.
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
ensure_redis
# EMQ_BENCH_PROFILE=debug (the test command's smoke run, which only checks that
# every driver runs) skips a release build of the driver; figures use release.
if [ "${EMQ_BENCH_PROFILE:-release}" = debug ]; then
  say "bench: building the Rust driver (debug: a smoke run)"
  cargo build -q -p echomq-bench
else
  say "bench: building the Rust driver (release)"
  cargo build --release -q -p echomq-bench
fi
if [ -f bench/drivers/build-c.sh ]; then bash bench/drivers/build-c.sh; fi
if [ -f scripts/python-env.sh ]; then bash scripts/python-env.sh >/dev/null; fi
if [ -f scripts/node-build.sh ]; then bash scripts/node-build.sh >/dev/null; fi
if [ -f bench/peers/setup.sh ]; then say "bench: peers (BullMQ, RQ, chasquimq)"; bash bench/peers/setup.sh; fi
