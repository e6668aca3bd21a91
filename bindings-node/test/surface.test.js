// index.js derives Client's methods from the native class (and Queue's from
// Client's); index.d.ts derives their types the same way from the
// declarations napi generates from the Rust methods (native.d.ts, written by
// `npm run build`), and writes out only what index.js writes out or reshapes.
// These tests read the types as TypeScript does (test/typings.js) and fail
// when they and the run time drift apart, in either direction, or when a verb
// is typed `object` / `any` (a napi method that builds its Promise by hand
// without `promise(...)`'s typed `PromiseRaw`). A new plain verb is its napi
// method in src/ and nothing else; these tests name what is missing.
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { existsSync, readFileSync } = require('node:fs')
const { join } = require('node:path')
const { PKG } = require('./helpers')
const { load } = require('./typings')
const emq = require('..')

const typings = load()
const declared = { Client: typings.members('Client'), Queue: typings.members('Queue') }
const nativeFile = join(PKG, 'native.d.ts')
const nativeTypes = existsSync(nativeFile) ? load(nativeFile) : null
const INDEX_JS = readFileSync(join(PKG, 'index.js'), 'utf8')

/** The methods a class's instances have at run time (getters are not methods). */
function runtimeMethods(cls) {
  const names = Object.getOwnPropertyNames(cls.prototype).filter(
    (n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(cls.prototype, n).value === 'function'
  )
  if (typeof cls.prototype[Symbol.asyncDispose] === 'function') names.push('[Symbol.asyncDispose]')
  return names.sort()
}

/** The members TypeScript sees as methods (callable). */
const typedMethods = (members) => [...members].filter(([, m]) => m.signatures.length > 0).map(([n]) => n)

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

const show = (sig) => `(${sig.params.map((p) => `${p.name}${p.optional ? '?' : ''}: ${p.type}`).join(', ')}): ${sig.returns}`

/** A type that says nothing: what napi writes for a hand-built Promise (`object`), or worse. */
const LOOSE = /^(object|any|unknown|never|Object|\{\})$|\bany\b/

/** The answer type of `Promise<T>`, or null. */
function answer(returns) {
  const m = /^Promise<(.*)>$/s.exec(returns)
  return m ? m[1] : null
}

/** A name list of index.js: `const NAME = new Set([...])`, or the keys of `const NAME = {...}`. */
function indexJsNames(name) {
  const set = new RegExp(`^const ${name} = new Set\\(\\[([^\\]]*)\\]\\)`, 'm').exec(INDEX_JS)
  if (set) return [...set[1].matchAll(/'(\w+)'/g)].map((m) => m[1])
  const object = new RegExp(`^const ${name} = \\{\\n([\\s\\S]*?)\\n\\}`, 'm').exec(INDEX_JS)
  assert.ok(object, `index.js defines ${name}`)
  return [...object[1].matchAll(/^ {2}(\w+):/gm)].map((m) => m[1])
}

/** The methods a class body of index.js writes out (`  name(...) {`). */
function indexJsClassMethods(className) {
  const start = INDEX_JS.search(new RegExp(`^class ${className} \\{`, 'm'))
  assert.ok(start >= 0, `index.js has class ${className}`)
  const body = INDEX_JS.slice(start, INDEX_JS.indexOf('\n}\n', start))
  return [...body.matchAll(/^ {2}(\w+)\([^)]*\) \{$/gm)].map((m) => m[1]).filter((n) => n !== 'constructor')
}

test('index.d.ts type-checks (strict, with native.d.ts and @types/node)', () => {
  assert.ok(existsSync(nativeFile), 'npm run build writes native.d.ts')
  assert.deepEqual(typings.diagnostics, [])
})

test("index.d.ts declares exactly Client's run-time methods", () => {
  sameNames(runtimeMethods(emq.Client), typedMethods(declared.Client), 'Client: run time (actual) vs index.d.ts (wanted)')
})

test("index.d.ts declares exactly Queue's run-time methods", () => {
  sameNames(runtimeMethods(emq.Queue), typedMethods(declared.Queue), 'Queue: run time (actual) vs index.d.ts (wanted)')
})

test('every verb of Client and Queue is typed: a Promise of a real type, never object / any', () => {
  for (const cls of ['Client', 'Queue']) {
    for (const [name, member] of declared[cls]) {
      if (member.signatures.length === 0 || name === 'queue' || name === 'worker') continue
      for (const sig of member.signatures) {
        const what = `${cls}.${name}${show(sig)} (from ${member.from})`
        const value = answer(sig.returns)
        assert.ok(value !== null, `${what}: returns a Promise`)
        assert.doesNotMatch(value, LOOSE, `${what}: the Promise's value is typed`)
        for (const p of sig.params) {
          // `updateProgress`'s value is any JSON value: unknown on purpose (written out).
          if (member.from === 'index.d.ts' && p.type === 'unknown') continue
          assert.doesNotMatch(p.type, LOOSE, `${what}: parameter ${p.name} is typed`)
        }
      }
    }
  }
})

/** Native methods the wrapper uses without making them verbs of their own. */
const NATIVE_ONLY = indexJsNames('NATIVE_ONLY').filter((n) => n !== 'constructor')

test('every native verb reaches Client: derived from native.d.ts unless index.js writes it out or reshapes it', () => {
  const native = nativeTypes.members('NativeClient')
  const verbs = [...native.keys()].filter((n) => !NATIVE_ONLY.includes(n))
  // The JS-only methods: the queue handle and `await using`.
  const jsOnly = ['queue', '[Symbol.asyncDispose]']
  sameNames(
    typedMethods(declared.Client).filter((n) => !jsOnly.includes(n)),
    verbs,
    'Client in index.d.ts (actual) vs NativeClient in native.d.ts (wanted)'
  )
  // Written out in index.d.ts: exactly what index.js writes out (its class
  // body) or reshapes (`SHAPE`); every other verb's type is native.d.ts's.
  const own = [...indexJsClassMethods('Client'), ...indexJsNames('SHAPE')].filter((n) => !jsOnly.includes(n))
  const handWritten = typedMethods(declared.Client).filter(
    (n) => declared.Client.get(n).from === 'index.d.ts' && !jsOnly.includes(n)
  )
  sameNames(handWritten, own, 'Client verbs typed by hand in index.d.ts (actual) vs written out / SHAPE in index.js (wanted)')
  for (const name of verbs.filter((n) => !own.includes(n))) {
    assert.equal(declared.Client.get(name).from, 'native.d.ts', `Client.${name} is derived from native.d.ts`)
  }
})

test('native.d.ts types every method of the native classes (no `object` / `any` answers)', () => {
  for (const cls of ['NativeClient', 'NativeWorker', 'NativeSubscription']) {
    for (const [name, member] of nativeTypes.members(cls)) {
      for (const sig of member.signatures) {
        const value = answer(sig.returns) ?? sig.returns
        assert.doesNotMatch(value, LOOSE, `${cls}.${name}${show(sig)}: the answer is typed (a napi method building its Promise by hand declares \`object\`)`)
      }
    }
  }
})

/** Verbs whose JS form takes other arguments than the native method (written out in index.js). */
const RESHAPED = ['upsertRepeat', 'subscribe']

test("a written-out Client verb takes the native method's arguments (reshaped and overloaded ones aside)", () => {
  const native = nativeTypes.members('NativeClient')
  for (const [name, member] of declared.Client) {
    if (member.from !== 'index.d.ts' || !native.has(name) || RESHAPED.includes(name) || member.signatures.length !== 1) continue
    const ours = member.signatures[0].params.map((p) => p.name)
    const theirs = native.get(name).signatures[0].params.map((p) => p.name)
    assert.equal(ours.length, theirs.length, `Client.${name}: index.d.ts (${ours.join(', ')}) vs native.d.ts (${theirs.join(', ')})`)
  }
})

test("every Queue verb is the Client's without the queue (worker aside)", () => {
  for (const [name, member] of declared.Queue) {
    if (member.signatures.length === 0 || name === 'worker') continue
    const client = declared.Client.get(name)
    assert.ok(client, `Client.${name}`)
    const forms = client.signatures.map((sig) => {
      assert.deepEqual(sig.params[0] && [sig.params[0].name, sig.params[0].type], ['queue', 'string'], `Client.${name}'s first parameter`)
      return show({ ...sig, params: sig.params.slice(1) })
    })
    for (const sig of member.signatures) {
      assert.ok(forms.includes(show(sig)), `Queue.${name}${show(sig)} is one of Client.${name}'s forms without the queue: ${forms.join(' | ')}`)
    }
  }
})

test("derived verbs carry the Rust methods' doc comments", () => {
  // `exists` is documented on its #[napi] method only: the doc reaches both classes.
  for (const cls of ['Client', 'Queue']) {
    const exists = declared[cls].get('exists')
    assert.equal(exists.from, 'native.d.ts', `${cls}.exists is derived`)
    assert.match(exists.doc, /row exists/, `${cls}.exists keeps its doc comment`)
  }
})
