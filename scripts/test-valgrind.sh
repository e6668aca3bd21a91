#!/usr/bin/env bash
# test_ffi (C) and test_cpp (C++) under valgrind against a throwaway
# redis-server: definite and indirect leaks and memory errors fail. The tokio
# runtime's threads live as long as the process, so their thread stacks/TLS
# show up as "possibly lost"/"still reachable": those kinds are reported but
# are not errors. No suppression file is needed.
#
#   bash scripts/test-valgrind.sh
#
# scripts/test-c.sh ends with it. scripts/test.sh runs it on its own, beside
# the Python suite: valgrind runs the program's threads one at a time, so for
# its ~3 minutes it keeps one core busy and the other free, and the Python
# suite, mostly waiting on its servers, fits there.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
ensure_redis
for tool in gcc:gcc g++:g++ valgrind:valgrind; do
  command -v "${tool%%:*}" >/dev/null || apt_install "${tool#*:}"
done

work=$(mktemp -d)
cleanup() { stop_redis EMQ_URL; rm -rf "$work"; }
trap cleanup EXIT

if [ -n "${EMQ_C_PREFIX:-}" ]; then
  LIB="$EMQ_C_PREFIX/lib"  # dist.sh's C tarball (scripts/test.sh)
else
  cargo build --release -q -p echomq-ffi
  LIB="$CARGO_TARGET_DIR/release"
fi
CWARN=(-Wall -Wextra -Werror -pedantic)
LINK=(-L"$LIB" -Wl,-rpath,"$LIB" -lechomq -lpthread)
gcc -std=c11 "${CWARN[@]}" -g -Iinclude ffi-c/tests/c/test_ffi.c -o "$work/test_ffi" "${LINK[@]}"
g++ -std=c++17 "${CWARN[@]}" -g -Iinclude ffi-c/tests/c/test_cpp.cpp -o "$work/test_cpp" "${LINK[@]}"
# test_ffi's cross-runtime test follows a Python worker (tests/cross/).
EMQ_TEST_PYTHON=$(bash scripts/python-env.sh --venv "$work/venv")
export EMQ_TEST_PYTHON

start_redis EMQ_URL
export EMQ_URL
grind() {
  redis-cli -u "$EMQ_URL" FLUSHALL >/dev/null
  valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=1 "$@"
}
say "valgrind: test_ffi against $EMQ_URL"
grind "$work/test_ffi"
say "valgrind: test_cpp against $EMQ_URL"
grind "$work/test_cpp"
say "valgrind: passed"
