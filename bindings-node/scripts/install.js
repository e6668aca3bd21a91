#!/usr/bin/env node
// `npm install` hook: make sure a native addon is there for this platform.
//
//   1. A binary next to native.js (a repository build) or the platform package
//      `echomq-<triple>` from optionalDependencies (the published layout, see
//      docs/INSTALL.md): nothing to do. This is the path that needs no Rust.
//   2. Otherwise build it from the Rust sources: the repository's crate (with
//      the napi CLI of the dev dependencies), or the sources the published
//      package carries in rust/ (plain cargo, release profile). Without cargo
//      this stops with a message saying what to install.
'use strict'
const { chmodSync, copyFileSync, existsSync, rmSync } = require('node:fs')
const { join } = require('node:path')
const { spawnSync } = require('node:child_process')
const { binaryPath, platformPackage, platformPackageVersion, triple } = require('../native.js')

const root = join(__dirname, '..')
const version = require('../package.json').version
if (process.env.ECHOMQ_SKIP_BUILD === '1') process.exit(0)
if (existsSync(binaryPath()) || platformPackageVersion() === version) process.exit(0)

function fail(message) {
  console.error(`echomq: ${message}`)
  process.exit(1)
}

const repoCrate = existsSync(join(root, 'Cargo.toml')) && existsSync(join(root, 'src', 'lib.rs'))
const packedWorkspace = join(root, 'rust')
if (!repoCrate && !existsSync(join(packedWorkspace, 'Cargo.toml'))) {
  fail(
    `no prebuilt addon for ${triple()} (the package ${platformPackage()} is not installed) ` +
      'and no Rust sources in this package to build one.'
  )
}

const cargo = process.env.CARGO || 'cargo'
if (spawnSync(cargo, ['--version'], { stdio: 'ignore' }).status !== 0) {
  const found = platformPackageVersion()
  const why =
    found === null
      ? 'is not installed (no prebuilt package exists for this platform, or optional dependencies were skipped)'
      : `is installed at version ${found}`
  fail(
    `no prebuilt addon for ${triple()}: the package ${platformPackage()}@${version} ${why}, ` +
      `and \`${cargo}\` was not found to build it from source. Either install on a ` +
      'platform with a prebuilt package (linux-x64-gnu), or install Rust (https://rustup.rs) ' +
      'and run `npm install` again.'
  )
}

const napiCli = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
if (repoCrate) {
  if (!existsSync(napiCli)) fail('@napi-rs/cli is not installed; run `npm install` (with dev dependencies) first')
  console.error('echomq: building the native addon from source (napi build, release profile)…')
  const r = spawnSync(process.execPath, [napiCli, 'build', '--platform', '--release', '--no-js', '--dts', 'native.d.ts'], {
    cwd: root,
    stdio: 'inherit',
  })
  process.exit(r.status === null ? 1 : r.status)
}

// The published package: build the cdylib with cargo and copy it into place,
// which is all `napi build` does on these platforms.
console.error(`echomq: no prebuilt addon for ${triple()}; building it from source with cargo (release profile)…`)
const ownTarget = !process.env.CARGO_TARGET_DIR
// The addon and the `emq` executable in one cargo run (the platform package
// would have carried both).
const r = spawnSync(
  cargo,
  ['build', '--release', '-p', 'echomq-node', '-p', 'echomq-cli', '--bin', 'emq', '--lib', '--message-format=json-render-diagnostics'],
  { cwd: packedWorkspace, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 256 << 20 }
)
if (r.status !== 0) fail(`cargo build failed (exit ${r.status}); see the output above`)
const artifacts = r.stdout
  .split('\n')
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line))
  .filter((m) => m.reason === 'compiler-artifact' && m.target)
const built = artifacts
  .filter((m) => m.target.name === 'echomq_node')
  .flatMap((m) => m.filenames)
  .find((f) => /\.(so|dylib|dll)$/.test(f))
if (!built) fail('cargo finished but produced no echomq_node library')
const emq = artifacts.filter((m) => m.target.name === 'emq').map((m) => m.executable).find(Boolean)
if (!emq) fail('cargo finished but produced no emq executable')
copyFileSync(built, binaryPath())
copyFileSync(emq, join(root, 'emq'))
chmodSync(join(root, 'emq'), 0o755)
if (ownTarget) rmSync(join(packedWorkspace, 'target'), { recursive: true, force: true })
console.error(`echomq: built ${binaryPath()}`)
