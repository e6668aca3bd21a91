#!/usr/bin/env bash
# The Node suite: build the napi addon from source (release profile, shared
# cargo target dir) and run `node --test` against real redis-servers that the
# tests start and stop themselves (test/helpers.js).
source "$(dirname "$0")/lib.sh"
cd "$ROOT/bindings-node"
ensure_redis
command -v node >/dev/null || apt_install nodejs npm

say "node: $(node --version), npm $(npm --version)"
if [ "${EMQ_NODE_PREBUILT:-0}" = 1 ]; then
  # Under scripts/test.sh: dist.sh's addon and emq are staged, and dist.sh
  # checked the committed native.d.ts against that addon's declarations.
  say "node: the addon and emq from dist.sh; npm ci for the dev tools"
  ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error
else
  # `npm ci` installs the locked dev tools (@napi-rs/cli, typescript); the
  # build below is the one (the install hook would build the addon too).
  ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund
  say "node: build the addon (napi build --platform --release)"
  npm run build
  # native.d.ts is committed (index.d.ts derives the verbs from it, and the npm
  # package ships it): the build just regenerated it from the #[napi] methods,
  # so a difference is a verb whose declarations were not committed.
  if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$ROOT" diff --exit-code -- bindings-node/native.d.ts \
      || { echo "bindings-node/native.d.ts differs from the build's: commit the regenerated file" >&2; exit 1; }
  fi
  # bin/emq.js runs the emq executable beside the addon (pack.test.js checks it).
  stage_emq "$ROOT/bindings-node/emq"
fi
# The cross-runtime observability tests run Python processes next to Node
# (test/observe.test.js): the package as a user installs it (the wheel build
# reuses the target dir the Python suite filled).
say "node: the Python package for the cross-runtime tests"
export EMQ_TEST_PYTHON; EMQ_TEST_PYTHON="$(bash "$ROOT/scripts/python-env.sh")"
say "node: tests"
# Each test file starts its own redis-server and stops it; they also record
# their pids here so that none outlives a crashed run.
export EMQ_TEST_PIDFILE; EMQ_TEST_PIDFILE="$(mktemp)"
cleanup() {
  while read -r pid; do
    case "$(ps -o comm= -p "$pid" 2>/dev/null)" in  # only if still one of our servers
      redis-server | valkey-server) kill "$pid" 2>/dev/null || true ;;
    esac
  done <"$EMQ_TEST_PIDFILE"
  rm -f "$EMQ_TEST_PIDFILE"
}
trap cleanup EXIT
# --ignore-scripts: not its pretest (`npm run build`); the addon is in place.
npm test --ignore-scripts
# The wire-facing files again on Valkey (docs/SERVERS.md): test/helpers.js
# starts $EMQ_TEST_SERVER. The slow process and lifecycle files run on Redis only.
ensure_valkey
say "node: the wire-facing tests against $(server_version "$VALKEY_SERVER") (EMQ_TEST_SERVER)"
EMQ_TEST_SERVER="$VALKEY_SERVER" node --test --test-concurrency=1 --test-timeout=300000 \
  test/{core,admin,job-features,repeat,progress,durable,error-kinds,enqueue}.test.js
