#!/usr/bin/env bash
# Build the Node addon (release, shared cargo target dir): bindings-node/echomq.*.node,
# and the emq executable beside it (bindings-node/emq). Under scripts/test.sh
# (EMQ_NODE_PREBUILT=1) both are dist.sh's, already staged: only the dev tools
# are installed, once.
source "$(dirname "$0")/lib.sh"
cd "$ROOT/bindings-node"
if [ "${EMQ_NODE_PREBUILT:-0}" = 1 ]; then
  if [ ! -d node_modules/@napi-rs/cli ]; then
    say "node: npm ci (the addon is dist.sh's)"
    ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error
  fi
  exit 0
fi
say "node: npm ci + napi build --release"
# ECHOMQ_SKIP_BUILD: the install hook would build the addon once and `npm run
# build` again (both whole-tree builds); the build below is the one.
ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
# bin/emq.js runs the `emq` executable it finds next to the addon.
stage_emq "$ROOT/bindings-node/emq"
