#!/usr/bin/env bash
# Build every benchmark driver that can be built here: the Rust driver, the C
# driver (when the C ABI is present), and the peers' environments.
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
ensure_redis
say "bench: building the Rust driver (release)"
cargo build --release -q -p echomq-bench
if [ -f bench/drivers/build-c.sh ]; then bash bench/drivers/build-c.sh; fi
if [ -f scripts/python-env.sh ]; then bash scripts/python-env.sh >/dev/null; fi
if [ -f scripts/node-build.sh ]; then bash scripts/node-build.sh >/dev/null; fi
if [ -f bench/peers/setup.sh ]; then say "bench: peers (BullMQ, RQ, chasquimq)"; bash bench/peers/setup.sh; fi
