// index.js derives Client's methods from the native class (and Queue's from
// Client's), while index.d.ts is written by hand: these tests fail when the
// two drift apart, in either direction, and check index.d.ts against the
// declarations napi generates from the Rust methods (native.d.ts, written
// by `npm run build`). A new verb is its napi method in src/ and its lines
// in index.d.ts; these tests name whichever is missing.
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { existsSync, readFileSync } = require('node:fs')
const { join } = require('node:path')
const { PKG } = require('./helpers')
const emq = require('..')

/** The body of `export declare class <name> ... {` in a declaration file. */
function classBody(text, name) {
  const start = text.search(new RegExp(`^export declare class ${name}\\b[^{]*\\{`, 'm'))
  assert.ok(start >= 0, `declares class ${name}`)
  const open = text.indexOf('{', start)
  return text.slice(open + 1, text.indexOf('\n}', open))
}

/** Split `a: X, b: Y<Z, W>` at its top-level commas. */
function params(list) {
  const out = []
  let depth = 0
  let current = ''
  for (const ch of list) {
    if ('(<{['.includes(ch)) depth++
    if (')>}]'.includes(ch) && !(ch === '>' && current.endsWith('='))) depth--
    if (ch === ',' && depth === 0) {
      out.push(current.trim())
      current = ''
    } else current += ch
  }
  if (current.trim()) out.push(current.trim())
  return out
}

/** Every method declaration of a class body: `name` → [parameter lists, one per overload]. */
function methods(body) {
  const found = new Map()
  const head = /^ {2}(\w+|\[Symbol\.\w+\])\(/gm
  for (let m; (m = head.exec(body)); ) {
    let depth = 1
    let i = head.lastIndex
    for (; depth > 0; i++) {
      if (body[i] === '(') depth++
      else if (body[i] === ')') depth--
    }
    const list = params(body.slice(head.lastIndex, i - 1))
    if (!found.has(m[1])) found.set(m[1], [])
    found.get(m[1]).push(list)
  }
  found.delete('constructor')
  return found
}

/** The methods a class's instances have at run time (getters are not methods). */
function runtimeMethods(cls) {
  const names = Object.getOwnPropertyNames(cls.prototype).filter(
    (n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(cls.prototype, n).value === 'function'
  )
  if (typeof cls.prototype[Symbol.asyncDispose] === 'function') names.push('[Symbol.asyncDispose]')
  return names.sort()
}

const DTS = readFileSync(join(PKG, 'index.d.ts'), 'utf8')
const declared = { Client: methods(classBody(DTS, 'Client')), Queue: methods(classBody(DTS, 'Queue')) }

/** `missing` and `extra` of `actual` against `wanted`, for a readable failure. */
function sameNames(actual, wanted, what) {
  const a = new Set(actual)
  const w = new Set(wanted)
  assert.deepEqual(
    { missing: [...w].filter((n) => !a.has(n)), extra: [...a].filter((n) => !w.has(n)) },
    { missing: [], extra: [] },
    what
  )
}

test("index.d.ts declares exactly Client's run-time methods", () => {
  sameNames(runtimeMethods(emq.Client), [...declared.Client.keys()], 'Client: run time (actual) vs index.d.ts (wanted)')
})

test("index.d.ts declares exactly Queue's run-time methods", () => {
  sameNames(runtimeMethods(emq.Queue), [...declared.Queue.keys()], 'Queue: run time (actual) vs index.d.ts (wanted)')
})

test("every Queue method is the Client's without the queue (worker aside)", () => {
  for (const [name, [queueParams]] of declared.Queue) {
    if (name === 'worker') continue
    const client = declared.Client.get(name)
    assert.ok(client, `Client.${name}`)
    const [first, ...rest] = client[0]
    assert.match(first, /^queue: string$/, `Client.${name}'s first parameter`)
    assert.equal(rest.length, queueParams.length, `Queue.${name} takes Client.${name}'s parameters after the queue`)
  }
})

/** Native methods the wrapper uses without making them verbs of their own. */
const NATIVE_ONLY = ['nodeId', 'worker', 'retryWith']
/** Verbs whose JS form takes other arguments than the native method (written out in index.js). */
const RESHAPED = ['upsertRepeat', 'subscribe']

test('index.d.ts matches the napi declarations of the native client (native.d.ts)', () => {
  const file = join(PKG, 'native.d.ts')
  assert.ok(existsSync(file), 'npm run build writes native.d.ts')
  const native = methods(classBody(readFileSync(file, 'utf8'), 'NativeClient'))
  const verbs = [...native.keys()].filter((n) => !NATIVE_ONLY.includes(n))
  // The JS-only methods: the queue handle and `await using`.
  const jsOnly = ['queue', '[Symbol.asyncDispose]']
  sameNames(
    [...declared.Client.keys()].filter((n) => !jsOnly.includes(n)),
    verbs,
    'Client in index.d.ts (actual) vs NativeClient in native.d.ts (wanted)'
  )
  // A forwarded verb takes the native method's arguments: one parameter each.
  for (const name of verbs) {
    const overloads = declared.Client.get(name)
    if (RESHAPED.includes(name) || overloads.length > 1) continue
    assert.equal(
      overloads[0].length,
      native.get(name)[0].length,
      `Client.${name}: index.d.ts (${overloads[0].join(', ')}) vs native.d.ts (${native.get(name)[0].join(', ')})`
    )
  }
})
