#!/usr/bin/env bash
# The C suite: the release library, the Rust-side checks of the C ABI (header
# drift, struct layouts, API parity, boundary rules), the C test program and the
# C++ wrapper's test program against a throwaway redis-server (plain and under
# valgrind), the C/C++ examples, the
# installed pkg-config file, and a smoke run of the demo's C worker and summary.
# One test_ffi test follows a Python worker, so this makes a Python venv too.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
for tool in gcc:gcc g++:g++ make:make pkg-config:pkg-config; do
  command -v "${tool%%:*}" >/dev/null || apt_install "${tool#*:}"
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_redis EMQ_URL
  rm -rf "$work"
}
trap cleanup EXIT

CWARN=(-Wall -Wextra -Werror -pedantic)
if [ -n "${EMQ_C_PREFIX:-}" ]; then
  # Under scripts/test.sh: the library dist.sh built, from its C tarball.
  LIB="$EMQ_C_PREFIX/lib"
  say "c: the library from dist.sh's C tarball ($EMQ_C_PREFIX)"
else
  LIB="$CARGO_TARGET_DIR/release"
  say "c: cargo build --release -p echomq-ffi"
  cargo build --release -p echomq-ffi
fi
LINK=(-L"$LIB" -Wl,-rpath,"$LIB" -lechomq -lpthread)
ls -l "$LIB/libechomq.so" "$LIB/libechomq.a"
# The Makefiles below take the library from LIBDIR; `CARGO=:` keeps the demo's
# from building one (the library above is the one under test).
MAKE_LIB=(LIBDIR="$LIB")
if [ -n "${EMQ_C_PREFIX:-}" ]; then MAKE_LIB+=(CARGO=:); fi

say "c: cargo test -p echomq-ffi (header drift, layouts, API parity, boundary rules)"
cargo test -p echomq-ffi

say "c: compile (header as C11 and C++17, the test, the examples, the demo pieces)"
printf '#include "echomq.h"\nint main(void) { return emq_protocol_version() == 0; }\n' >"$work/h.c"
cp "$work/h.c" "$work/h.cpp"
gcc -std=c11 "${CWARN[@]}" -Iinclude "$work/h.c" -o "$work/h_c" "${LINK[@]}"
g++ -std=c++17 "${CWARN[@]}" -Iinclude "$work/h.cpp" -o "$work/h_cpp" "${LINK[@]}"
gcc -std=c11 "${CWARN[@]}" -g -Iinclude ffi-c/tests/c/test_ffi.c -o "$work/test_ffi" "${LINK[@]}"
g++ -std=c++17 "${CWARN[@]}" -g -Iinclude ffi-c/tests/c/test_cpp.cpp -o "$work/test_cpp" "${LINK[@]}"
# C++20 adds the std::span inputs (run once, below).
g++ -std=c++20 "${CWARN[@]}" -g -Iinclude ffi-c/tests/c/test_cpp.cpp -o "$work/test_cpp20" "${LINK[@]}"
gcc -std=c11 "${CWARN[@]}" -Iinclude ffi-c/tests/c/demo_orders.c -o "$work/demo_orders" "${LINK[@]}"
make -s -C examples/c clean all "${MAKE_LIB[@]}"
make -s -C examples/polyglot clean-c c "${MAKE_LIB[@]}"

if [ -n "${EMQ_C_PREFIX:-}" ]; then
  # The tarball is an installed tree with its own pkg-config file.
  say "c: build against the tarball's pkg-config file (shared and static)"
  prefix="$EMQ_C_PREFIX"
else
  say "c: make install PREFIX=... and build against pkg-config (shared and static)"
  make -s -C ffi-c install PREFIX="$work/prefix"
  prefix="$work/prefix"
fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --modversion echomq
# shellcheck disable=SC2046
gcc -std=c11 "${CWARN[@]}" examples/c/producer.c -o "$work/producer_pc" $(pkg-config --cflags --libs echomq)
# shellcheck disable=SC2046
gcc -std=c11 "${CWARN[@]}" examples/c/producer.c -o "$work/producer_static" \
  $(pkg-config --cflags echomq) "$prefix/lib/libechomq.a" $(pkg-config --static --libs-only-l echomq | sed 's/-lechomq//')
if ldd "$work/producer_static" | grep -q libechomq; then
  echo "producer_static links libechomq.so dynamically" >&2; exit 1
fi

# test_ffi's cross-runtime test follows a Python worker (tests/cross/): a venv
# with the package (the release wheel under scripts/test.sh, no build).
EMQ_TEST_PYTHON=$(bash scripts/python-env.sh --venv "$work/venv")
export EMQ_TEST_PYTHON

start_redis EMQ_URL
export EMQ_URL
say "c: test_ffi against $EMQ_URL"
"$work/test_ffi"

say "c++: test_cpp (include/echomq.hpp) against $EMQ_URL"
redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
"$work/test_cpp"
redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
"$work/test_cpp20"

# test_ffi and test_cpp again on Valkey (docs/SERVERS.md; once, no valgrind):
# start_redis and the tests' own servers start $EMQ_TEST_SERVER.
ensure_valkey
say "c: test_ffi and test_cpp against $(server_version "$VALKEY_SERVER") (EMQ_TEST_SERVER)"
(
  export EMQ_TEST_SERVER="$VALKEY_SERVER"
  start_redis VALKEY_URL
  trap 'stop_redis VALKEY_URL' EXIT
  EMQ_URL="$VALKEY_URL" "$work/test_ffi"
  redis-cli -u "$VALKEY_URL" FLUSHALL >/dev/null
  EMQ_URL="$VALKEY_URL" "$work/test_cpp"
)

say "c: examples (shared, pkg-config, static, C++)"
redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
examples/c/producer 20
timeout 60 examples/c/consumer 20
LD_LIBRARY_PATH="$prefix/lib" "$work/producer_pc" 3
"$work/producer_static" 3
examples/c/hello_cpp

say "c: demo pieces (2 C workers, summary progress/report, SIGTERM and SIGINT)"
redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
examples/polyglot/worker-c >"$work/w1.out" 2>"$work/w1.err" & pids+=($!)
examples/polyglot/worker-c >"$work/w2.out" 2>"$work/w2.err" & pids+=($!)
"$work/demo_orders" 400
timeout 120 examples/polyglot/summary progress 400
kill -TERM "${pids[0]}"; kill -INT "${pids[1]}"
wait "${pids[0]}"; wait "${pids[1]}"
pids=()
cat "$work/w1.out" "$work/w2.out"
for f in w1 w2; do
  grep -Eq '^c worker: processed=[0-9]+ retried=[0-9]+ dead=0$' "$work/$f.out" \
    || { echo "unexpected worker output: $(cat "$work/$f.out")" >&2; exit 1; }
  [ "$(wc -l <"$work/$f.out")" = 1 ] || { echo "worker printed more than one line" >&2; exit 1; }
done
examples/polyglot/summary report 400 | tee "$work/report.out"
grep -q '^ALL 400 ORDERS PROCESSED$' "$work/report.out"
grep -Eq '^c +400 +20$' "$work/report.out"

# Both programs under valgrind; scripts/test.sh runs this on its own, beside
# the Python suite (EMQ_VALGRIND_APART=1).
if [ "${EMQ_VALGRIND_APART:-0}" != 1 ]; then bash scripts/test-valgrind.sh; fi

say "c: all passed"
