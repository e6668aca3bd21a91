#!/usr/bin/env bash
# Build the C benchmark driver against the release libechomq.a.
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"
cargo build --release -q -p echomq-ffi
mkdir -p bench/build
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude bench/drivers/echomq_c_bench.c \
  "$CARGO_TARGET_DIR/release/libechomq.a" -lpthread -ldl -lm -o bench/build/echomq_c_bench
