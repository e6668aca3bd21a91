// Loads the compiled addon: `echomq.<platform>-<arch>[-<abi>].node`, the name
// `napi build --platform` gives it (e.g. echomq.linux-x64-gnu.node).
'use strict'
const { join } = require('node:path')

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

function binaryPath() {
  return join(__dirname, `echomq.${triple()}.node`)
}

function load() {
  const path = binaryPath()
  try {
    return require(path)
  } catch (e) {
    const err = new Error(
      `echomq: cannot load the native addon ${path} (${e.message}). ` +
        'Build it with `npm run build` inside bindings-node (needs Rust), or install a package packed on this platform.'
    )
    err.cause = e
    throw err
  }
}

module.exports = { binaryPath, triple, load }
