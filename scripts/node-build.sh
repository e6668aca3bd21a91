#!/usr/bin/env bash
# Build the Node addon (release, shared cargo target dir): bindings-node/echomq.*.node,
# and the emq executable beside it (bindings-node/emq).
source "$(dirname "$0")/lib.sh"
cd "$ROOT/bindings-node"
say "node: npm ci + napi build --release"
# ECHOMQ_SKIP_BUILD: the install hook would build the addon once and `npm run
# build` again (both whole-tree builds); the build below is the one.
ECHOMQ_SKIP_BUILD=1 npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
# bin/emq.js runs the `emq` executable it finds next to the addon.
stage_emq "$ROOT/bindings-node/emq"
