// API parity: every Node name in docs/API.md exists on the module / Client /
// Worker, the d.ts declares it, and nothing public is undocumented.
'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const emq = require('..')
const { load } = require('./typings')

const API = readFileSync(join(__dirname, '..', '..', 'docs', 'API.md'), 'utf8')
const DTS = readFileSync(join(__dirname, '..', 'index.d.ts'), 'utf8')
// Client and Queue as TypeScript reads index.d.ts (their plain verbs are
// derived from native.d.ts, so they are not in its text).
const typings = load()
const declared = { Client: typings.members('Client'), Queue: typings.members('Queue') }

/** The table rows (`| \`...`) of one `## Section`, as [rust, node] name pairs. */
function rows(section) {
  const start = API.indexOf(`## ${section}`)
  assert.ok(start >= 0, `docs/API.md has a "## ${section}" section`)
  const end = API.indexOf('\n## ', start + 3)
  const body = API.slice(start, end < 0 ? undefined : end)
  // An option table lists options, not verbs (optionNames reads those).
  let inOptions = false
  return body
    .split('\n')
    .filter((l) => {
      if (l.startsWith('| option | default | range | meaning |')) inOptions = true
      else if (!l.startsWith('|')) inOptions = false
      return !inOptions && l.startsWith('| `')
    })
    .map((l) => {
      const cells = l.split('|').map((c) => c.trim())
      const name = (cell) => /`(?:new\s+)?([A-Za-z_][A-Za-z0-9_]*)/.exec(cell)[1]
      return [name(cells[1]), name(cells[2])]
    })
}

const camel = (snake) => snake.replace(/_([a-z])/g, (_, c) => c.toUpperCase())

/** The option names of the marked option table of `group` (connect or worker); the
 * schema tests (option-schema.test.js) check the tables against the core's schema. */
function optionNames(group) {
  const lines = API.split('\n')
  const start = lines.findIndex((l) => l.startsWith(`<!-- option-table: ${group} `))
  assert.ok(start >= 0, `docs/API.md has the ${group} option table`)
  const names = []
  for (const row of lines.slice(start + 3)) {
    if (!row.startsWith('|')) break
    names.push(/`([a-z_]+)`/.exec(row.split('|')[1])[1])
  }
  return names
}

test('client verbs: connect on the module, every other verb a Client method returning a Promise', () => {
  const verbs = rows('Client verbs')
  assert.ok(verbs.length >= 25)
  for (const [rust, node] of verbs) {
    assert.equal(node, camel(rust), `${rust} is ${camel(rust)} in Node`)
    if (node === 'connect') {
      assert.equal(typeof emq.connect, 'function')
      assert.match(DTS, /export declare function connect\(/)
    } else if (node === 'queue') {
      assert.equal(typeof emq.Client.prototype.queue, 'function')
      assert.deepEqual(
        declared.Client.get('queue').signatures.map((s) => s.returns),
        ['Queue'],
        'index.d.ts declares Client.queue(name): Queue'
      )
    } else {
      assert.equal(typeof emq.Client.prototype[node], 'function', `Client.${node}`)
      const sigs = declared.Client.get(node)?.signatures ?? []
      assert.ok(sigs.length > 0, `index.d.ts declares Client.${node}`)
      for (const s of sigs) assert.match(s.returns, /^Promise</, `index.d.ts declares Client.${node} → Promise`)
    }
  }
  // Nothing public on Client that the docs do not list.
  const documented = new Set(verbs.map(([, n]) => n))
  const extra = Object.getOwnPropertyNames(emq.Client.prototype).filter(
    (n) => n !== 'constructor' && n !== 'nodeId' && !documented.has(n)
  )
  assert.deepEqual(extra, [])
})

test('queue handles: every per-queue verb on Queue, declared in index.d.ts, and nothing else', () => {
  const verbs = rows('Queue handles')
  assert.equal(verbs[0][1], 'queue')
  for (const [rust, node] of verbs.slice(1)) {
    assert.equal(node, camel(rust), `${rust} is ${camel(rust)} in Node`)
    assert.equal(typeof emq.Queue.prototype[node], 'function', `Queue.${node}`)
    assert.ok(declared.Queue.get(node)?.signatures.length > 0, `index.d.ts declares Queue.${node}`)
  }
  const documented = new Set(verbs.map(([, n]) => n))
  const extra = Object.getOwnPropertyNames(emq.Queue.prototype).filter(
    (n) => !['constructor', 'name', 'client'].includes(n) && !documented.has(n)
  )
  assert.deepEqual(extra, [])
})

test('pure helpers are plain module functions, declared in index.d.ts', () => {
  const helpers = rows('Pure helpers')
  assert.equal(helpers.length, 11)
  for (const [rust, node] of helpers) {
    assert.equal(node, camel(rust))
    assert.equal(typeof emq[node], 'function', node)
    assert.match(DTS, new RegExp(`export declare function ${node}\\(`), node)
  }
})

test('worker: new Worker(...), run() / close() / stats()', () => {
  const worker = rows('Worker')
  assert.deepEqual(
    worker.map(([, n]) => n),
    ['Worker', 'run', 'close', 'stats']
  )
  assert.equal(typeof emq.Worker, 'function')
  for (const [, n] of worker.slice(1)) assert.equal(typeof emq.Worker.prototype[n], 'function', n)
  assert.equal(typeof emq.UnrecoverableError, 'function')
  assert.ok(new emq.UnrecoverableError('x') instanceof Error)
  // Stats keys: the docs' names in camelCase.
  const para = /`stats\(\)` \| `stats\(\)` \| `\{([^}]*)\}`/.exec(API)[1]
  const keys = para.split(',').map((k) => camel(k.trim()))
  for (const k of keys) assert.match(DTS, new RegExp(`\\n  ${k}: number`), k)
})

test('connect and worker options: the docs names in camelCase, and nothing else', () => {
  const connectOpts = optionNames('connect').map(camel)
  assert.deepEqual(connectOpts.sort(), [
    'clientName', 'connectTimeoutMs', 'maxPayload', 'nodeId', 'publishEvents', 'responseTimeoutMs', 'strictBundle',
    'waitReplicas', 'waitTimeoutMs', 'wireVersion',
  ])
  const workerOpts = optionNames('worker').map(camel)
  assert.deepEqual(workerOpts.sort(), [
    'backoff', 'backoffBaseMs', 'backoffCapMs', 'concurrency', 'deadMaxAgeMs', 'deadMaxLen', 'handlerBatch',
    'idleMaxMs', 'keepResultMs', 'leaseMs', 'maxAttempts', 'maxStalls', 'prefetch', 'pumpIntervalMs',
    'shutdownGraceMs', 'wakeFallbackMs',
  ])
  for (const o of [...connectOpts, ...workerOpts]) assert.match(DTS, new RegExp(`\\n  ${o}\\?: `), o)
})

test('error codes: the Node column of the error table is exactly ErrorCode', () => {
  const start = API.indexOf('## Errors')
  const codes = API.slice(start)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| kind |') && !l.startsWith('|---'))
    .map((l) => /`(EMQ[A-Z_]*)`/.exec(l.split('|')[4])[1])
  assert.deepEqual(codes, Object.values(emq.ErrorCode))
})
