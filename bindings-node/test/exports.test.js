// The CommonJS (`require`) and ES module (`import`) entries export exactly the
// same names, and both declaration files declare exactly those (issue #33:
// `import { defaults } from 'echomq'` type-checked and failed at run time).
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { pathToFileURL } = require('node:url')
const { PKG } = require('./helpers')

const cjs = require('..')
const runtimeNames = Object.keys(cjs).sort()

/** The value exports a declaration file declares (`export declare function|const|class X`). */
function declaredValues(file) {
  const text = readFileSync(join(PKG, file), 'utf8')
  return [...text.matchAll(/^export declare (?:function|const|class) (\w+)/gm)].map((m) => m[1])
}

test('require and import of the package export the same names', async () => {
  // Through the package's own `exports` map (a self-reference), as a user imports it.
  const esm = await import('echomq')
  const esmNames = Object.keys(esm).filter((k) => k !== 'default').sort()
  assert.deepEqual(esmNames, runtimeNames)
  assert.equal(esm.default, cjs)
  for (const name of runtimeNames) assert.equal(esm[name], cjs[name], name)
})

test('a static `import { defaults, optionSchema }` links and answers the core defaults', () => {
  const url = pathToFileURL(join(PKG, 'index.mjs')).href
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { defaults, optionSchema } from ${JSON.stringify(url)}
       console.log(JSON.stringify([defaults().wakeFallbackMs, optionSchema().length]))`,
    ],
    { encoding: 'utf8', timeout: 30000 }
  )
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), [cjs.defaults().wakeFallbackMs, cjs.optionSchema().length])
})

test('index.d.ts declares exactly the runtime exports; index.d.mts re-exports them as ESM', () => {
  assert.deepEqual([...new Set(declaredValues('index.d.ts'))].sort(), runtimeNames)
  // The ESM declarations are index.d.ts's, re-exported, plus the default
  // export index.mjs has: nothing to drift from index.d.ts.
  const mts = readFileSync(join(PKG, 'index.d.mts'), 'utf8')
  assert.match(mts, /^export \* from '\.\/index\.js'$/m)
  assert.match(mts, /^export default echomq$/m)
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'))
  const root = pkg.exports['.']
  assert.deepEqual(root.import, { types: './index.d.mts', default: './index.mjs' })
  assert.deepEqual(root.require, { types: './index.d.ts', default: './index.js' })
  for (const f of ['index.d.ts', 'index.d.mts', 'index.js', 'index.mjs']) assert.ok(pkg.files.includes(f), f)
  // What the declarations import ships with them (index.d.ts derives Client
  // and Queue from the napi declarations, native.d.ts).
  for (const f of ['index.d.ts', 'index.d.mts']) {
    const text = readFileSync(join(PKG, f), 'utf8')
    for (const [, spec] of text.matchAll(/^(?:import|export)\b.* from '(\.\/[^']+)'$/gm)) {
      const file = spec.replace(/\.js$/, '') + '.d.ts'
      assert.ok(pkg.files.includes(file.slice(2)), `${f} imports ${spec}: ${file.slice(2)} is in package.json files`)
    }
  }
})

test('tsc resolves an ES module importing echomq to the ESM declarations', () => {
  const tsc = join(PKG, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--module',
      'node16',
      '--moduleResolution',
      'node16',
      '--target',
      'es2022',
      '--types',
      'node',
      '--traceResolution',
      join(PKG, 'test', 'fixtures', 'esm-types.mts'),
    ],
    { encoding: 'utf8', cwd: PKG }
  )
  assert.equal(r.status, 0, r.stdout.split('\n').filter((l) => l.includes('error')).join('\n'))
  assert.match(r.stdout, /Module name 'echomq' was successfully resolved to '[^']*index\.d\.mts'/)
})
