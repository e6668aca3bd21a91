#!/usr/bin/env node
// `emq`, the operator's command (`npx emq --help`): the same Rust program as
// `cargo install --path cli`. It is an executable of its own, shipped in the
// platform package beside the addon (the addon links no CLI, terminal or HTTP
// code); this file only finds it and runs it with this process's arguments.
'use strict'
const { spawn } = require('node:child_process')
const { emqPath, platformPackage } = require('../native.js')

const bin = emqPath()
if (bin === null) {
  console.error(
    `emq: the emq executable is not installed (it ships in the package ${platformPackage()}). ` +
      'In a repository checkout run `bash scripts/node-build.sh`; anywhere with Rust, ' +
      '`cargo install --path cli` installs it too.'
  )
  process.exit(127)
}
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' })
// A terminal's Ctrl-C reaches the whole process group, emq included; a signal
// sent to this process alone (a supervisor's SIGTERM) is passed on. Either
// way this process waits for emq's own graceful exit instead of dying first.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (child.exitCode === null) child.kill(sig)
  })
}
child.on('error', (e) => {
  console.error(`emq: cannot start ${bin} (${e.message})`)
  process.exit(126)
})
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal, so a caller sees what killed emq.
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  } else {
    process.exit(code)
  }
})
