#!/usr/bin/env bash
# Fuzz the core's parsers with cargo-fuzz (libFuzzer): branded ids, the key
# grammar, and every reply decoder (fuzz/fuzz_targets/). See docs/FUZZING.md.
#
#   bash scripts/fuzz.sh [--smoke] [--seconds N] [TARGET...]
#
# Default: every target for 120 s (--seconds N to change), growing the
# committed corpus fuzz/corpus/<target>/, then minimising it (cargo fuzz cmin)
# so it stays small; commit what changed. --smoke (the test command's step):
# 5 s per target; the committed corpus and the hand-written seeds are replayed
# first, so every past finding is re-checked, and new inputs go to a throwaway
# folder. A crash stops the run with the input in fuzz/artifacts/<target>/;
# replay it with `cargo fuzz run <target> <file>` from fuzz/ (toolchain below).
source "$(dirname "$0")/lib.sh"

smoke=0
seconds=120
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; seconds=5 ;;
    --seconds) seconds="$2"; shift ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
cd "$ROOT/fuzz"
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls fuzz_targets | sed 's/\.rs$//')

# The nightly toolchain when one is installed (cargo-fuzz's home ground);
# else the default one: with `-s none` the build needs no unstable flag, and no
# other toolchain can be fetched on a fresh machine.
toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then toolchain=(+nightly); fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  say "installing cargo-fuzz (cargo install, crates.io)"
  cargo install cargo-fuzz --locked --quiet
fi

# -s none: the targets' code is safe Rust, so what they hunt is panics (and,
# with -a, arithmetic overflow), not memory errors; skipping AddressSanitizer
# keeps the build and every run several times faster.
flags=(-O -a -s none)
say "fuzz: building ${targets[*]} ($(cargo "${toolchain[@]}" --version))"
cargo "${toolchain[@]}" fuzz build "${flags[@]}"

# Short inputs are enough for every parser here (an id is 14 bytes, a key under
# 200, a reply of a few items reaches every decoder branch) and keep the
# committed corpus small.
max_len=512
scratch=""
trap '[ -n "$scratch" ] && rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  dict=(); [ -f "dict/$t.dict" ] && dict=(-dict="dict/$t.dict")
  if [ "$smoke" = 1 ]; then
    scratch=$(mktemp -d)
    say "fuzz smoke: $t for ${seconds}s (corpus replayed first)"
    mkdir "$scratch/new"
    if ! cargo "${toolchain[@]}" fuzz run "${flags[@]}" "$t" "$scratch/new" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$seconds" -max_len="$max_len" -print_final_stats=1 "${dict[@]}" >"$scratch/log" 2>&1; then
      tail -n 40 "$scratch/log" >&2
      echo "fuzz target $t failed: the input is in fuzz/artifacts/$t/" >&2
      exit 1
    fi
    grep -E '^stat::(number_of_executed_units|new_units_added)' "$scratch/log" | tr '\n' ' '; echo
    rm -rf "$scratch"; scratch=""
  else
    say "fuzz: $t for ${seconds}s"
    cargo "${toolchain[@]}" fuzz run "${flags[@]}" "$t" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$seconds" -max_len="$max_len" -print_final_stats=1 "${dict[@]}"
    say "fuzz: minimising corpus/$t"
    cargo "${toolchain[@]}" fuzz cmin "${flags[@]}" "$t" "corpus/$t" -- -max_len="$max_len" >/dev/null 2>&1
    echo "corpus/$t: $(ls "corpus/$t" | wc -l) inputs, $(du -sh "corpus/$t" | cut -f1)"
  fi
done
say "fuzz: ${targets[*]} ran ${seconds}s each without a finding"
