#!/usr/bin/env node
// `npm install` hook. A packed tarball ships the .node binary for the platform
// it was built on (see docs/NODE.md): then there is nothing to do. In the
// repository (or any checkout with the Rust sources next to this file) the
// addon is built from source with the napi CLI, release profile, into the
// shared cargo target dir.
'use strict'
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const { spawnSync } = require('node:child_process')
const { binaryPath } = require('../native.js')

const root = join(__dirname, '..')
if (process.env.ECHOMQ_SKIP_BUILD === '1') process.exit(0)
if (existsSync(binaryPath())) process.exit(0)

if (!existsSync(join(root, 'Cargo.toml')) || !existsSync(join(root, 'src', 'lib.rs'))) {
  console.error(
    `echomq: no prebuilt addon for ${process.platform}-${process.arch} in this package ` +
      `(expected ${binaryPath()}), and no Rust sources to build one. ` +
      'Pack the package on this platform (npm run build && npm pack) — see docs/NODE.md.'
  )
  process.exit(1)
}
const cli = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
if (!existsSync(cli)) {
  console.error('echomq: @napi-rs/cli is not installed; run `npm install` (with dev dependencies) first')
  process.exit(1)
}
console.error('echomq: building the native addon from source (cargo, release profile)…')
const r = spawnSync(process.execPath, [cli, 'build', '--platform', '--release', '--no-js', '--dts', 'native.d.ts'], {
  cwd: root,
  stdio: 'inherit',
})
process.exit(r.status === null ? 1 : r.status)
