// Issue #33: the core's options schema is the one list of connect and worker
// options. This fails when Node accepts, lacks, defaults or documents an
// option differently: `defaults()`, the allow-list of index.js (by
// behaviour, against a real server), the napi option structs (native.d.ts),
// the option interfaces of index.d.ts, and the tables of docs/NODE.md.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { startRedis, uniqueQueue, waitFor, PKG } = require('./helpers')
const emq = require('..')

const SCHEMA = emq.optionSchema()
const GROUPS = ['connect', 'worker']
const names = (group) => SCHEMA.filter((o) => o.group === group).map((o) => o.jsName)
/** Options the JS layer adds to the core's (handled in index.js). */
const JS_ONLY = { connect: [], worker: ['handleSignals'] }

let server, client
before(async () => {
  server = await startRedis()
  client = await emq.connect(server.url)
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

test('the schema: connect and worker options, camelCase by one rule', () => {
  assert.ok(names('connect').length >= 10 && names('worker').length >= 16)
  for (const o of SCHEMA) {
    assert.ok(GROUPS.includes(o.group), o.name)
    assert.equal(o.jsName, o.name.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), o.name)
    assert.ok(['int', 'ms', 'bytes', 'bool', 'string', 'enum'].includes(o.type), o.name)
    assert.equal(typeof o.doc, 'string')
    assert.ok(Object.isFrozen(o))
  }
  assert.ok(Object.isFrozen(SCHEMA))
})

test('defaults() is every option default of the schema (null when unset), plus the verb limits', () => {
  const d = emq.defaults()
  const want = Object.fromEntries(SCHEMA.map((o) => [o.jsName, o.default]))
  const { browseLimit, pumpLimit, ...options } = d
  assert.deepEqual(options, want)
  assert.equal(typeof browseLimit, 'number')
  assert.equal(typeof pumpLimit, 'number')
  assert.equal(d.prefetch, null)
  assert.equal(d.wakeFallbackMs, 5000)
})

/** A value the core accepts for `o`: its default, else the bottom of its range. */
function validValue(o) {
  if (o.default !== null) return o.default
  if (o.type === 'string') return 'schema-test'
  return o.min ?? 1
}

test('every worker option of the schema is accepted, and nothing else', async () => {
  const q = uniqueQueue('schema')
  for (const o of SCHEMA.filter((o) => o.group === 'worker')) {
    const w = new emq.Worker(client, q, async () => {}, { [o.jsName]: validValue(o) })
    await w.close()
  }
  assert.throws(
    () => new emq.Worker(client, q, async () => {}, { leaseMS: 1000 }),
    (e) => e instanceof emq.EchoMQError && e.code === emq.ErrorCode.INVALID_ARGUMENT
  )
})

test('every connect option of the schema is accepted, and nothing else', async () => {
  for (const o of SCHEMA.filter((o) => o.group === 'connect')) {
    const c = await emq.connect(server.url, { [o.jsName]: validValue(o) })
    await c.close()
  }
  await assert.rejects(
    emq.connect(server.url, { connectTimeoutMS: 1000 }),
    (e) => e instanceof emq.EchoMQError && e.code === emq.ErrorCode.INVALID_ARGUMENT
  )
})

test('a worker with wakeFallbackMs runs and completes a job (issue #33)', async () => {
  const q = uniqueQueue('wake')
  const { id } = await client.enqueue(q, 'hello')
  const seen = []
  const worker = new emq.Worker(client, q, async (job) => seen.push(job.payload.toString()), {
    wakeFallbackMs: 1000,
    handleSignals: false,
  })
  const run = worker.run()
  await waitFor(async () => (await client.counts(q)).completed === 1, 30000, 'the job completed')
  await worker.close()
  await run
  assert.deepEqual(seen, ['hello'])
  // On the wire: the row is gone (no keepResultMs) and nothing is pending or active.
  assert.equal(await server.raw.cmd('EXISTS', `emq:{${q}}:job:${id}`), 0)
  assert.equal(await server.raw.cmd('ZCARD', `emq:{${q}}:active`), 0)
  assert.equal(await server.raw.cmd('ZCARD', `emq:{${q}}:pending`), 0)
})

/** `{name: typeText}` of one `export interface NAME { ... }` of a declaration file. */
function interfaceFields(file, name) {
  const text = readFileSync(join(PKG, file), 'utf8')
  const m = text.match(new RegExp(`export (?:declare )?interface ${name} \\{([\\s\\S]*?)\\n\\}`))
  assert.ok(m, `${file} declares interface ${name}`)
  const body = m[1].replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
  return Object.fromEntries([...body.matchAll(/^\s*(?:readonly )?(\w+)\??:\s*([^\n]+)$/gm)].map((f) => [f[1], f[2].trim()]))
}

const TS_TYPES = { int: 'number', ms: 'number', bytes: 'number', bool: 'boolean', string: 'string', enum: null }

test('index.d.ts option interfaces declare exactly the schema options, typed by kind', () => {
  for (const [group, iface] of [
    ['connect', 'ConnectOptions'],
    ['worker', 'WorkerOptions'],
  ]) {
    const fields = interfaceFields('index.d.ts', iface)
    assert.deepEqual(Object.keys(fields).sort(), [...names(group), ...JS_ONLY[group]].sort(), iface)
    for (const o of SCHEMA.filter((o) => o.group === group)) {
      const want = TS_TYPES[o.type]
      if (want) assert.equal(fields[o.jsName], want, o.jsName)
    }
  }
  assert.deepEqual(Object.keys(interfaceFields('index.d.ts', 'Defaults')).sort(), Object.keys(emq.defaults()).sort())
})

test('the napi option structs (native.d.ts) take exactly the schema options', () => {
  // napi ignores an object field its struct lacks: a schema option missing
  // there would be accepted by index.js and silently do nothing.
  for (const [group, iface] of [
    ['connect', 'ConnectOptionsJs'],
    ['worker', 'WorkerOptionsJs'],
  ]) {
    assert.deepEqual(Object.keys(interfaceFields('native.d.ts', iface)).sort(), names(group).sort(), iface)
  }
})

/**
 * The option tables of a guide: `<!-- option-table: GROUP ... -->`, then a
 * `| option | default | range | meaning |` table. Each row as
 * `{name, default, min, max}`; the meaning is free text.
 */
function optionTables(file) {
  const lines = readFileSync(join(PKG, '..', 'docs', file), 'utf8').split('\n')
  const tables = {}
  lines.forEach((line, i) => {
    const m = line.match(/^<!-- option-table: (\w+)/)
    if (!m) return
    assert.ok(!(m[1] in tables), `${file}: two ${m[1]} tables`)
    assert.match(lines[i + 1], /^\| option \| default \| range \| meaning \|$/, `${file}:${i + 2}`)
    const rows = []
    for (let j = i + 3; j < lines.length && lines[j].startsWith('|'); j++) {
      const [name, dflt, range] = lines[j].split('|').slice(1, -1).map((c) => c.trim())
      const r = range.match(/^`(\d+)\.\.(?:=(\d+))?`/)
      rows.push({
        name: name.replace(/`/g, ''),
        default: parseDefault(dflt),
        min: r ? Number(r[1]) : null,
        max: r && r[2] !== undefined ? Number(r[2]) : null,
      })
    }
    tables[m[1]] = rows
  })
  return tables
}

function parseDefault(cell) {
  if (/^none\b/i.test(cell)) return null
  const first = (cell.match(/^`([^`]*)`/) || [null, cell.split(/\s/)[0]])[1]
  if (/^(true|false)$/i.test(first)) return first.toLowerCase() === 'true'
  if (/^\d+$/.test(first)) return Number(first)
  return first
}

test('docs/NODE.md option tables document exactly the schema', () => {
  const tables = optionTables('NODE.md')
  assert.deepEqual(Object.keys(tables).sort(), GROUPS)
  for (const group of GROUPS) {
    const documented = tables[group]
    assert.deepEqual(
      documented.map((r) => r.name),
      names(group),
      `docs/NODE.md ${group} table: the schema's options, in its order`
    )
    for (const row of documented) {
      const o = SCHEMA.find((s) => s.jsName === row.name)
      assert.deepEqual(row, { name: o.jsName, default: o.default, min: o.min, max: o.max }, row.name)
    }
  }
})
