#!/usr/bin/env node
// Stage and `npm pack` the two npm packages of a release (called by dist.sh):
//
//   echomq                 JS, index.d.ts + index.d.mts, the loader and install hook, and the
//                          Rust sources (rust/) for the build-from-source fallback;
//                          no binary. optionalDependencies name the platform
//                          package(s) at exactly this version.
//   echomq-linux-x64-gnu   the prebuilt addon and the `emq` executable (os/cpu/libc
//                          fields, so npm installs it only where it runs).
//
//   node scripts/dist-npm.js --version V --addon FILE.node --emq FILE --stage DIR --out DIST
'use strict'
const { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync, rmSync } = require('node:fs')
const { join, dirname } = require('node:path')
const { execFileSync } = require('node:child_process')

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), [])
)
for (const k of ['version', 'addon', 'emq', 'stage', 'out']) {
  if (!args[k]) throw new Error(`dist-npm.js: --${k} is required`)
}
const ROOT = join(__dirname, '..')
const NODE = join(ROOT, 'bindings-node')
// The platforms packed here; a release pipeline adds its rows (docs/INSTALL.md).
const PLATFORMS = [{ triple: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' }]
const LICENSES = ['LICENSE', 'LICENSE-MIT', 'LICENSE-APACHE']

const writeJson = (file, value) => writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
const copy = (from, to) => {
  mkdirSync(dirname(to), { recursive: true })
  cpSync(from, to, { recursive: true })
}
function pack(dir) {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', args.out], { cwd: dir, encoding: 'utf8' })
  const { filename, size, unpackedSize } = JSON.parse(out)[0]
  console.error(`npm: ${filename} (${size} bytes packed, ${unpackedSize} unpacked)`)
}

rmSync(args.stage, { recursive: true, force: true })

// ---- the main package ---------------------------------------------------------
const dev = JSON.parse(readFileSync(join(NODE, 'package.json'), 'utf8'))
if (dev.version !== args.version) {
  throw new Error(`bindings-node/package.json says ${dev.version}; the workspace version is ${args.version} (docs/INSTALL.md)`)
}
const main = join(args.stage, 'echomq')
// prom.js: promClientCollector() requires it (it was missing from the tarball).
for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'native.d.ts', 'native.js', 'prom.js', 'scripts/install.js', 'bin/emq.js', 'README.md']) {
  copy(join(NODE, f), join(main, f))
}
for (const f of LICENSES) copy(join(ROOT, f), join(main, f))
// The fallback's sources: the core and the addon crate in a two-member
// workspace that keeps the repository's package settings, profile and lock.
const rust = join(main, 'rust')
for (const f of ['Cargo.toml', 'src', 'lua']) copy(join(ROOT, 'core', f), join(rust, 'core', f))
for (const f of ['Cargo.toml', 'build.rs', 'src']) copy(join(NODE, f), join(rust, 'bindings-node', f))
// Built from source too where no platform package fits: the `emq` executable
// (scripts/install.js), so the CLI and the dashboard it serves come along.
for (const f of ['Cargo.toml', 'src']) copy(join(ROOT, 'cli', f), join(rust, 'cli', f))
for (const f of ['Cargo.toml', 'src', 'assets']) copy(join(ROOT, 'dashboard', f), join(rust, 'dashboard', f))
// The addon and the CLI depend on it (one feature set: workspace-hack/Cargo.toml).
for (const f of ['Cargo.toml', 'src']) copy(join(ROOT, 'workspace-hack', f), join(rust, 'workspace-hack', f))
copy(join(ROOT, 'Cargo.lock'), join(rust, 'Cargo.lock'))
const workspace = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').replace(
  /^members\s*=\s*\[[^\]]*\]/m,
  'members = ["core", "cli", "dashboard", "bindings-node", "workspace-hack"]'
)
writeFileSync(join(rust, 'Cargo.toml'), workspace)

const { devDependencies, scripts, files, ...kept } = dev
writeJson(join(main, 'package.json'), {
  ...kept,
  version: args.version,
  files: [
    'index.js',
    'index.mjs',
    'index.d.ts',
    'index.d.mts',
    'native.d.ts',
    'native.js',
    'prom.js',
    'scripts/install.js',
    'bin/emq.js',
    'rust/Cargo.toml',
    'rust/Cargo.lock',
    'rust/core/',
    'rust/cli/',
    'rust/dashboard/',
    'rust/workspace-hack/',
    'rust/bindings-node/',
    ...LICENSES,
  ],
  scripts: { install: scripts.install },
  optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`echomq-${p.triple}`, args.version])),
})
pack(main)

// ---- the platform package(s) ----------------------------------------------------
for (const p of PLATFORMS) {
  const name = `echomq-${p.triple}`
  const dir = join(args.stage, name)
  const binary = `echomq.${p.triple}.node`
  copy(args.addon, join(dir, binary))
  // The operator's command, its own executable (bin/emq.js in the main package runs it).
  copy(args.emq, join(dir, 'emq'))
  chmodSync(join(dir, 'emq'), 0o755)
  for (const f of LICENSES) copy(join(ROOT, f), join(dir, f))
  writeFileSync(
    join(dir, 'README.md'),
    `# ${name}\n\nThe prebuilt native addon of [echomq](https://www.npmjs.com/package/echomq) for ${p.triple}, and its \`emq\` executable.\n` +
      'Install `echomq`, not this package: npm picks this one through its optionalDependencies.\n'
  )
  writeJson(join(dir, 'package.json'), {
    name,
    version: args.version,
    description: `The ${p.triple} native addon and emq executable of echomq`,
    license: dev.license,
    main: binary,
    files: [binary, 'emq', ...LICENSES],
    os: [p.os],
    cpu: [p.cpu],
    ...(p.libc ? { libc: [p.libc] } : {}),
    engines: dev.engines,
  })
  pack(dir)
}
