#!/usr/bin/env bash
# Installs the peer systems for the benchmark: a venv at bench/peers/.venv with the pinned
# Python packages (requirements-peers.txt) and node_modules from package-lock.json.
# Idempotent and non-interactive; re-runs are fast when nothing changed.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
VENV=.venv
REQ=requirements-peers.txt
stamp_py="$VENV/.req-stamp"
want_py=$(sha256sum "$REQ" | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "setup.sh: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
if [ "$(cat "$stamp_py" 2>/dev/null)" != "$want_py" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"; then
    # chasquimq ships one native wheel; if it is unavailable here, install the rest
    # (its driver then reports every workload unsupported).
    echo "setup.sh: full install failed; retrying without chasquimq" >&2
    grep -v '^chasquimq' "$REQ" > "$VENV/req-no-chasquimq.txt"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$VENV/req-no-chasquimq.txt"
  fi
  echo "$want_py" > "$stamp_py"
fi

if [ -f package-lock.json ]; then
  want_js=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ "$(cat node_modules/.lock-stamp 2>/dev/null)" != "$want_js" ]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    echo "$want_js" > node_modules/.lock-stamp
  fi
else
  npm install --no-audit --no-fund --loglevel=error >/dev/null
fi

"$VENV/bin/python" - <<'PY'
from importlib import metadata
vs = []
for p in ("bullmq", "rq", "chasquimq", "redis", "matplotlib"):
    try:
        vs.append(f"{p} {metadata.version(p)}")
    except metadata.PackageNotFoundError:
        vs.append(f"{p} (missing)")
print("peers (python):", ", ".join(vs))
PY
node -e 'const v=(p)=>require(p+"/package.json").version; console.log(`peers (node): bullmq ${v("bullmq")}, ioredis ${v("ioredis")}`)'
