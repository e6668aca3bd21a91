#!/usr/bin/env bash
# Create (or refresh) a virtualenv with the echomq Python package installed
# the way a user installs it (`pip install ./bindings-python`: maturin builds
# the abi3 wheel in an isolated env, using the shared cargo target dir).
#
#   bash scripts/python-env.sh [--fresh] [--venv DIR] [PIP_PACKAGE...]
#
# Default DIR is $ROOT/.venv. --fresh deletes DIR first. Extra arguments are
# pip requirements to install alongside (e.g. pytest mypy redis). With
# EMQ_WHEEL=<path to a wheel> that wheel is installed instead of building one
# (scripts/test.sh hands the Python tests the wheel scripts/dist.sh built, so
# the suites test what ships and the core is not compiled twice). Progress goes
# to stderr; the venv's python path is the only line on stdout, so:
#   PY=$(bash scripts/python-env.sh) && "$PY" examples/polyglot/producer.py 100
#
# EMQ_SHARED_VENV=<dir> (set by scripts/test.sh) makes every call use that one
# venv whatever --venv says, and installs EMQ_WHEEL into it only once: the
# suites share one venv instead of each creating its own (minutes on 2 cores).
source "$(dirname "$0")/lib.sh"

venv="$ROOT/.venv"
fresh=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) fresh=1 ;;
    --venv) venv="$2"; shift ;;
    *) extra+=("$1") ;;
  esac
  shift
done
if [ -n "${EMQ_SHARED_VENV:-}" ]; then venv="$EMQ_SHARED_VENV"; fi

{
  if [ "$fresh" = 1 ]; then rm -rf "$venv"; fi
  ensure_venv "$venv" >/dev/null
  pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
  if [ -n "${EMQ_WHEEL:-}" ]; then
    stamp="$EMQ_WHEEL $(stat -c %Y "$EMQ_WHEEL")"
    if [ "$(cat "$venv/.emq-wheel" 2>/dev/null)" != "$stamp" ]; then
      say "python: pip install $EMQ_WHEEL (EMQ_WHEEL: the release wheel, no build)"
      "${pip[@]}" install --force-reinstall --no-deps --no-index "$EMQ_WHEEL"
      echo "$stamp" >"$venv/.emq-wheel"
    fi
  else
    rm -f "$venv/.emq-wheel"
    # The wheel's `emq` (its .data/scripts/; see pyproject.toml). The demo
    # (EMQ_SKIP_EMQ=1) builds none: it ships the one already built, if any.
    emq_dest="$ROOT/bindings-python/echomq._native.data/scripts/emq"
    if [ "${EMQ_SKIP_EMQ:-0}" != 1 ]; then
      stage_emq "$emq_dest"
    elif [ -x "$CARGO_TARGET_DIR/release/emq" ]; then
      install -D -m 755 "$CARGO_TARGET_DIR/release/emq" "$emq_dest"
    fi
    say "python: pip install ./bindings-python (maturin, release, CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
    "${pip[@]}" install --force-reinstall --no-deps "$ROOT/bindings-python"
  fi
  if [ ${#extra[@]} -gt 0 ]; then
    say "python: pip install ${extra[*]}"
    "${pip[@]}" install "${extra[@]}"
  fi
} >&2
echo "$venv/bin/python"
