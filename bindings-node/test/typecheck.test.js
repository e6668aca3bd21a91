// index.d.ts covers the surface: examples/node/typed.ts compiles with tsc --strict.
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const { join } = require('node:path')

test('tsc --noEmit --strict accepts examples/node/typed.ts against index.d.ts', () => {
  const tsc = join(__dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc')
  const project = join(__dirname, '..', '..', 'examples', 'node', 'tsconfig.json')
  const r = spawnSync(process.execPath, [tsc, '-p', project, '--noEmit', '--strict'], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})
