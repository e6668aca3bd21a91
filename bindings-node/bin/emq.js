#!/usr/bin/env node
// `emq`, the operator's command (`npx emq --help`): the same Rust program as
// `cargo install --path cli`, run through this package's native addon.
'use strict'
const native = require('../native.js').load()

process.exitCode = native.cliMain(['emq', ...process.argv.slice(2)])
