// Loads the compiled addon, `echomq.<platform>-<arch>[-<abi>].node` (the name
// `napi build --platform` gives it, e.g. echomq.linux-x64-gnu.node), from the
// first place that has it:
//   1. next to this file: built in the repository, or built from source by
//      scripts/install.js where no prebuilt package fits;
//   2. the platform package `echomq-<triple>` that npm installed from this
//      package's optionalDependencies (the napi-rs convention; only the one
//      matching this platform is installed). It must be this package's version.
'use strict'
const { existsSync } = require('node:fs')
const { dirname, join } = require('node:path')

function isMusl() {
  if (process.platform !== 'linux') return false
  try {
    const report = process.report && process.report.getReport()
    const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header
    return !(header && header.glibcVersionRuntime)
  } catch {
    return false
  }
}

function triple() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

/** Where a binary built in place lives. */
function binaryPath() {
  return join(__dirname, `echomq.${triple()}.node`)
}

/** The npm package that carries the prebuilt binary for this platform. */
function platformPackage() {
  return `echomq-${triple()}`
}

/** The platform package's version, or null when it is not installed. */
function platformPackageVersion() {
  try {
    return require(`${platformPackage()}/package.json`).version
  } catch {
    return null
  }
}

function loadError(message, cause) {
  const err = new Error(`echomq: ${message}`)
  if (cause) err.cause = cause
  return err
}

function load() {
  const local = binaryPath()
  if (existsSync(local)) {
    try {
      return require(local)
    } catch (e) {
      throw loadError(`cannot load the native addon ${local} (${e.message})`, e)
    }
  }
  const pkg = platformPackage()
  const found = platformPackageVersion()
  const wanted = require('./package.json').version
  if (found === null) {
    throw loadError(
      `no native addon for ${triple()}: neither ${local} nor the package ${pkg} is installed. ` +
        `Reinstall echomq (npm installs ${pkg} when it exists for this platform), or build ` +
        'from source with Rust installed (see docs/INSTALL.md).'
    )
  }
  if (found !== wanted) {
    throw loadError(`echomq ${wanted} needs ${pkg} ${wanted}, but ${found} is installed; reinstall both`)
  }
  try {
    return require(pkg)
  } catch (e) {
    throw loadError(`cannot load the native addon from ${pkg} (${e.message})`, e)
  }
}

/**
 * The `emq` executable (the operator's command, its own program: the addon
 * links no CLI code). Next to this file in a repository build
 * (scripts/node-build.sh puts it there) or built from source by
 * scripts/install.js; otherwise in the platform package beside its addon.
 * Null when neither has it.
 */
function emqPath() {
  const local = join(__dirname, 'emq')
  if (existsSync(local)) return local
  try {
    const pkgDir = dirname(require.resolve(`${platformPackage()}/package.json`))
    const shipped = join(pkgDir, 'emq')
    return existsSync(shipped) ? shipped : null
  } catch {
    return null
  }
}

module.exports = { binaryPath, emqPath, platformPackage, platformPackageVersion, triple, load }
