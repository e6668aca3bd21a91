#!/usr/bin/env bash
# Build the C benchmark driver against the release libechomq.a.
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"
# Under scripts/test.sh the library is dist.sh's (EMQ_C_PREFIX, its C tarball).
if [ -n "${EMQ_C_PREFIX:-}" ]; then
  lib="$EMQ_C_PREFIX/lib"
else
  cargo build --release -q -p echomq-ffi
  lib="$CARGO_TARGET_DIR/release"
fi
mkdir -p bench/build
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude bench/drivers/echomq_c_bench.c \
  "$lib/libechomq.a" -lpthread -ldl -lm -o bench/build/echomq_c_bench
