// The core protocol scenarios, through Node, asserting wire state with raw commands.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, hash, waitFor, uniqueQueue } = require('./helpers')
const emq = require('..')

const { ErrorCode } = emq
let server, client, raw

before(async () => {
  server = await startRedis()
  raw = server.raw
  client = await emq.connect(server.url, { clientName: 'node-core-test' })
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

const row = async (q, id) => hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${id}`))
const rowBuf = async (q, id) => {
  const flat = await raw.cmdBuf('HGETALL', `emq:{${q}}:job:${id}`)
  const out = {}
  for (let i = 0; i < flat.length; i += 2) out[flat[i].toString()] = flat[i + 1]
  return out
}
const members = (q, set) => raw.cmd('ZRANGE', `emq:{${q}}:${set}`, 0, -1)
const score = async (q, set, id) => {
  const s = await raw.cmd('ZSCORE', `emq:{${q}}:${set}`, id)
  return s === null ? null : Number(s)
}
const serverMs = async () => {
  const [s, us] = await raw.cmd('TIME')
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}
/** Assert a promise rejects with an EchoMQError of `code`; returns the error. */
async function rejectsWith(promise, code) {
  try {
    await promise
  } catch (e) {
    assert.ok(e instanceof emq.EchoMQError, `expected EchoMQError, got ${e && e.stack}`)
    assert.ok(e instanceof Error)
    assert.equal(e.code, code, e.message)
    return e
  }
  assert.fail(`expected a rejection with ${code}`)
}

test('enqueue writes exactly state/attempts/payload and a score-0 pending member', async () => {
  const q = uniqueQueue()
  const payload = Buffer.from([0x68, 0x69, 0x00, 0xff])
  const e = await client.enqueue(q, payload)
  assert.equal(e.duplicate, false)
  assert.ok(emq.isValidId(e.id) && e.id.startsWith('JOB'))
  const r = await rowBuf(q, e.id)
  assert.deepEqual(Object.keys(r).sort(), ['attempts', 'payload', 'state'])
  assert.equal(r.state.toString(), 'pending')
  assert.equal(r.attempts.toString(), '0')
  assert.deepEqual(r.payload, payload)
  assert.deepEqual(await members(q, 'pending'), [e.id])
  assert.equal(await score(q, 'pending', e.id), 0)
  // A string payload is UTF-8; it comes back as a Buffer.
  const s = await client.enqueue(q, 'héllo ✓')
  assert.deepEqual((await rowBuf(q, s.id)).payload, Buffer.from('héllo ✓', 'utf8'))
  const info = await client.job(q, s.id)
  assert.ok(Buffer.isBuffer(info.payload))
  assert.equal(info.payload.toString('utf8'), 'héllo ✓')
  assert.deepEqual(
    { state: info.state, attempts: info.attempts, lastError: info.lastError },
    { state: 'pending', attempts: 0, lastError: null }
  )
  assert.equal(await client.job(q, emq.mintJobId()), null)
})

test('a duplicate chosen id answers duplicate and leaves the row untouched', async () => {
  const q = uniqueQueue()
  const id = emq.mintJobId()
  assert.deepEqual(await client.enqueue(q, 'first', { id }), { id, duplicate: false })
  assert.deepEqual(await client.enqueue(q, 'second', { id }), { id, duplicate: true })
  assert.equal((await row(q, id)).payload, 'first')
  assert.equal((await members(q, 'pending')).length, 1)
})

test('a foreign namespace is refused with EMQKIND and nothing is written', async () => {
  const q = uniqueQueue()
  const err = await rejectsWith(client.enqueue(q, 'x', { id: 'ORD0NgWEfAEJfs' }), ErrorCode.KIND)
  assert.equal(err.code, 'EMQKIND')
  assert.equal(err.status, 1)
  assert.deepEqual(await row(q, 'ORD0NgWEfAEJfs'), {})
  assert.equal(await raw.cmd('EXISTS', `emq:{${q}}:pending`), 0)
})

test('claim mints token 1 and leases on the server clock; complete retires the row', async () => {
  const q = uniqueQueue()
  const e = await client.enqueue(q, 'job')
  const t0 = await serverMs()
  const job = await client.claim(q, 10_000)
  const t1 = await serverMs()
  assert.equal(job.id, e.id)
  assert.equal(job.token, 1)
  assert.ok(Buffer.isBuffer(job.payload))
  assert.equal(job.payload.toString(), 'job')
  const r = await row(q, e.id)
  assert.equal(r.state, 'active')
  assert.equal(r.attempts, '1')
  assert.deepEqual(await members(q, 'pending'), [])
  const deadline = await score(q, 'active', e.id)
  assert.ok(deadline >= t0 + 10_000 && deadline <= t1 + 10_000, `${t0} ${deadline} ${t1}`)
  assert.equal(await client.claim(q, 10_000), null)

  await client.complete(q, job.id, job.token)
  assert.deepEqual(await row(q, e.id), {})
  for (const set of ['pending', 'active', 'schedule', 'dead']) assert.deepEqual(await members(q, set), [], set)
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:metrics:completed`, 'count'), '1')
  await rejectsWith(client.complete(q, job.id, job.token), ErrorCode.GONE)
})

test('a stale token is refused with EMQSTALE and changes nothing', async () => {
  const q = uniqueQueue()
  const e = await client.enqueue(q, 'job')
  const job = await client.claim(q, 10_000)
  const err = await rejectsWith(client.complete(q, job.id, 7), ErrorCode.STALE)
  assert.equal(err.code, 'EMQSTALE')
  assert.equal((await row(q, e.id)).state, 'active')
  assert.notEqual(await score(q, 'active', e.id), null)
  await client.complete(q, job.id, job.token)
})

test('retry → promote → claim mints token 2; the first token is stale', async () => {
  const q = uniqueQueue()
  const e = await client.enqueue(q, 'job')
  const job = await client.claim(q, 10_000)
  assert.equal(await client.retry(q, job.id, job.token, 60_000, 5, 'boom'), 'scheduled')
  const r = await row(q, e.id)
  assert.equal(r.state, 'scheduled')
  assert.equal(r.last_error, 'boom')
  assert.deepEqual(await members(q, 'active'), [])
  assert.deepEqual(await members(q, 'schedule'), [e.id])
  // Not yet due (a minute away: no timing window to lose).
  assert.equal(await client.promote(q, 100), 0)
  // Make it due by moving its run-at into the past, rather than sleeping.
  assert.equal(await raw.cmd('ZADD', `emq:{${q}}:schedule`, 'XX', 'CH', '0', e.id), 1)
  assert.equal(await client.promote(q, 100), 1)
  assert.equal((await row(q, e.id)).state, 'pending')
  assert.deepEqual(await members(q, 'pending'), [e.id])
  const again = await client.claim(q, 10_000)
  assert.equal(again.token, 2)
  await rejectsWith(client.complete(q, e.id, 1), ErrorCode.STALE)
  await client.complete(q, e.id, 2)
})

test('dead-letter keeps last_error; requeueDead; EMQ_NOT_DEAD', async () => {
  const q = uniqueQueue()
  const e = await client.enqueue(q, 'job')
  const job = await client.claim(q, 10_000)
  assert.equal(await client.retry(q, job.id, job.token, 0, 1, 'fatal: no such user'), 'dead')
  const r = await row(q, e.id)
  assert.equal(r.state, 'dead')
  assert.equal(r.last_error, 'fatal: no such user')
  assert.equal(await score(q, 'dead', e.id), 0)
  assert.deepEqual(await client.browse(q, 'dead', true, 10), [e.id])
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:metrics:failed`, 'count'), '1')
  assert.equal((await client.job(q, e.id)).lastError, 'fatal: no such user')
  const counts = await client.counts(q)
  assert.deepEqual(counts, { pending: 0, active: 0, scheduled: 0, dead: 1, completed: 0, failed: 1 })

  await client.requeueDead(q, e.id)
  const back = await row(q, e.id)
  assert.equal(back.state, 'pending')
  // A requeued job starts afresh: attempts reset (the 2.1.0 claim caps them).
  assert.equal(back.attempts, '0')
  assert.equal(back.last_error, undefined)
  await rejectsWith(client.requeueDead(q, e.id), ErrorCode.NOT_DEAD)
  assert.equal((await client.claim(q, 1000)).token, 1)
})

test('reap returns a lapsed lease; extend answers EMQ_LEASE_LOST; the zombie is stale', async () => {
  const q = uniqueQueue()
  const e = await client.enqueue(q, 'job')
  const job = await client.claim(q, 30)
  // The lease lapses when the server's clock passes its deadline (the score
  // in active): wait for that state, not for a guessed number of ms.
  const deadline = await score(q, 'active', e.id)
  await waitFor(async () => (await serverMs()) > deadline, 10_000, 'the lease deadline to pass')
  assert.equal(await client.reap(q, 100), 1)
  const r = await row(q, e.id)
  assert.equal(r.state, 'pending')
  assert.equal(r.attempts, '1')
  assert.deepEqual(await members(q, 'pending'), [e.id])
  await rejectsWith(client.extend(q, job.id, job.token, 10_000), ErrorCode.LEASE_LOST)
  assert.deepEqual(await members(q, 'active'), [])
  const second = await client.claim(q, 10_000)
  assert.equal(second.token, 2)
  await rejectsWith(client.complete(q, job.id, job.token), ErrorCode.STALE)
  // extend re-scores the lease deadline (the score in active) to server-now +
  // lease: a 10 s lease made 10 min moves it by more than 9 min, however slow.
  const before = await score(q, 'active', second.id)
  await client.extend(q, second.id, second.token, 600_000)
  assert.ok((await score(q, 'active', second.id)) >= before + 590_000)
  await client.complete(q, second.id, second.token)
})

test('batch verbs answer one verdict per input in allSettled shape', async () => {
  const q = uniqueQueue()
  const many = await client.enqueueMany(q, ['a', Buffer.from('b'), new Uint8Array([99])])
  assert.equal(many.length, 3)
  assert.ok(many.every((v) => v.status === 'fulfilled' && v.value.duplicate === false))
  const jobs = await client.claimMany(q, 10, 10_000)
  assert.equal(jobs.length, 3)
  assert.deepEqual(
    jobs.map((j) => j.payload.toString('latin1')),
    ['a', 'b', 'c']
  )
  const before = await Promise.all(jobs.map((j) => score(q, 'active', j.id)))
  const ext = await client.extendMany(q, [...jobs, { id: jobs[0].id, token: 9 }], 600_000)
  assert.deepEqual(ext.slice(0, 3).map((v) => v.status), ['fulfilled', 'fulfilled', 'fulfilled'])
  const after = await Promise.all(jobs.map((j) => score(q, 'active', j.id)))
  assert.ok(after.every((a, i) => a >= before[i] + 590_000), JSON.stringify({ before, after }))
  assert.equal(ext[3].status, 'rejected')
  assert.ok(ext[3].reason instanceof emq.EchoMQError)
  assert.equal(ext[3].reason.code, ErrorCode.STALE)
  const done = await client.completeMany(q, [jobs[0], { id: jobs[1].id, token: 5 }, jobs[2]])
  assert.deepEqual(
    done.map((v) => v.status),
    ['fulfilled', 'rejected', 'fulfilled']
  )
  assert.equal(done[1].reason.code, ErrorCode.STALE)
  await client.complete(q, jobs[1].id, jobs[1].token)
  assert.deepEqual(await client.counts(q), { pending: 0, active: 0, scheduled: 0, dead: 0, completed: 3, failed: 0 })
})

test('scheduling, browse ranges, pause/resume, remove', async () => {
  const q = uniqueQueue()
  const now = await serverMs()
  const at = await client.enqueue(q, 'at', { runAtMs: now + 60_000 })
  const inn = await client.enqueue(q, 'in', { delayMs: 60_000 })
  assert.equal(await score(q, 'schedule', at.id), now + 60_000)
  assert.ok((await score(q, 'schedule', inn.id)) >= now + 60_000)
  assert.deepEqual(await client.browse(q, 'schedule', false, 10), [at.id, inn.id])
  assert.deepEqual(await client.browse(q, 'schedule', false, 10, { fromMs: 0, toMs: now + 60_000 }), [])
  const p = await client.enqueue(q, 'p')
  assert.deepEqual(await client.browse(q, 'pending', false, 10, { fromMs: 0, toMs: Date.now() + 1000 }), [p.id])
  await rejectsWith(client.browse(q, 'nowhere', false, 10), ErrorCode.INVALID_ARGUMENT)

  assert.equal(await client.isPaused(q), false)
  await client.pause(q)
  assert.equal(await client.isPaused(q), true)
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:meta`, 'paused'), '1')
  assert.equal(await client.claim(q, 1000), null)
  await client.resume(q)
  assert.equal(await client.isPaused(q), false)
  const job = await client.claim(q, 10_000)
  await rejectsWith(client.remove(q, job.id), ErrorCode.JOB_ACTIVE)
  await client.remove(q, at.id)
  assert.deepEqual(await row(q, at.id), {})
  await rejectsWith(client.remove(q, at.id), ErrorCode.GONE)
  assert.deepEqual(await client.bundleMismatches(), [])
})

test('pure helpers', () => {
  assert.equal(emq.protocolVersion(), 'echomq:2.1.0')
  const id = emq.mintJobId(7)
  const parsed = emq.parseId(id)
  assert.equal(parsed.namespace, 'JOB')
  assert.equal(typeof parsed.snowflake, 'bigint')
  assert.ok(Math.abs(parsed.mintedAtMs - Date.now()) < 5000)
  assert.equal(emq.encodeId('JOB', parsed.snowflake), id)
  assert.equal(emq.encodeId('USR', 274557032793636864n), 'USR0KHTOWnGLuC')
  assert.equal(emq.parseId('ORD0NgWEfAEJfs').mintedAtMs, 1780512970164)
  assert.ok(emq.lexBound(parsed.mintedAtMs) <= id && emq.lexBound(parsed.mintedAtMs + 1) > id)
  assert.ok(emq.mintJobId() < emq.mintJobId())
  assert.equal(emq.isValidId('JOB0000000000'), false)
  assert.equal(emq.isValidQueue('orders.receipts'), true)
  assert.equal(emq.isValidQueue('emq'), false)
  assert.equal(emq.queueKey('orders', 'pending'), 'emq:{orders}:pending')
  assert.equal(emq.jobKey('orders', id), `emq:{orders}:job:${id}`)
  assert.deepEqual(emq.classify('emq:{orders}:pending'), { class: 'queue', queue: 'orders', keyType: 'pending' })
  assert.deepEqual(emq.classify(`emq:{orders}:job:${id}`), { class: 'job', queue: 'orders', id })
  assert.deepEqual(emq.classify('emq:{orders}:metrics:failed'), {
    class: 'metric',
    queue: 'orders',
    keyType: 'metrics:failed',
  })
  assert.deepEqual(emq.classify('{emq}:version'), { class: 'reserve', member: 'version' })
  assert.deepEqual(emq.classify('{emq}:migration:orders'), { class: 'reserve', queue: 'orders', member: 'migration:orders' })
  assert.deepEqual(emq.classify(Buffer.from('nope')), { class: 'unclassified' })
  assert.equal(emq.slot('emq:{orders}:pending'), emq.slot('emq:{orders}:job:x'))
  assert.equal(emq.slot('123456789'), 12739) // CRC16/XMODEM check value 0x31C3 mod 16384
  for (const [fn, args, code] of [
    [emq.parseId, ['nope'], ErrorCode.INVALID_ID],
    [emq.queueKey, ['bad queue', 'pending'], ErrorCode.INVALID_QUEUE],
    [emq.queueKey, ['orders', 'nope'], ErrorCode.INVALID_ARGUMENT],
    [emq.jobKey, ['orders', 'x'], ErrorCode.INVALID_ID],
    [emq.mintJobId, [1024], ErrorCode.INVALID_ARGUMENT],
    [emq.encodeId, ['job', 1], ErrorCode.INVALID_ID],
    [emq.lexBound, [-1], ErrorCode.INVALID_ARGUMENT],
  ]) {
    assert.throws(() => fn(...args), (e) => e instanceof emq.EchoMQError && e.code === code, `${fn.name}(${args})`)
  }
})

test('error table: exactly the core codes, as constants', () => {
  const kinds = emq.errorKinds()
  assert.equal(kinds.length, 23)
  assert.deepEqual(
    kinds.map((k) => k.code),
    [
      'EMQKIND', 'EMQSTALE', 'EMQ_GONE', 'EMQ_LEASE_LOST', 'EMQ_NOT_DEAD', 'EMQ_VERSION_FENCE',
      'EMQ_INVALID_ID', 'EMQ_INVALID_QUEUE', 'EMQ_INVALID_ARGUMENT', 'EMQ_CONNECTION', 'EMQ_TIMEOUT',
      'EMQ_PROTOCOL', 'EMQ_SERVER', 'EMQ_JOB_ACTIVE', 'EMQ_BUNDLE_MISMATCH', 'EMQ_CLOSED',
      'EMQ_UNSUPPORTED', 'EMQRATE', 'EMQ_UNAVAILABLE', 'EMQ_NOT_DURABLE',
      'EMQ_PARTIAL_BATCH', 'EMQ_INTERNAL', 'EMQ_JOB_DEAD',
    ]
  )
  // Stable numbers: 1..18, then each later kind's pre-assigned code.
  assert.deepEqual(
    kinds.map((k) => k.status),
    [...[...Array(18).keys()].map((i) => i + 1), 20, 21, 22, 23, 24]
  )
  for (const k of kinds) assert.equal(emq.ErrorCode[k.name], k.code)
  assert.ok(Object.isFrozen(emq.ErrorCode))
  // The .d.ts lists the same table.
  const dts = require('node:fs').readFileSync(require.resolve('../index.d.ts'), 'utf8')
  for (const k of kinds) assert.ok(dts.includes(`readonly ${k.name}: '${k.code}'`), k.name)
})

test('closed client rejects with EMQ_CLOSED; connection refusal with EMQ_CONNECTION', async () => {
  const c = await emq.connect(server.url)
  await c.close()
  await rejectsWith(c.counts('x'), ErrorCode.CLOSED)
  const { freePort } = require('./helpers')
  const port = await freePort()
  await rejectsWith(emq.connect(`redis://127.0.0.1:${port}/`, { connectTimeoutMs: 1000 }), ErrorCode.CONNECTION)
  await rejectsWith(emq.connect(server.url, { nodeID: 3 }), ErrorCode.INVALID_ARGUMENT)
  await rejectsWith(emq.connect(server.url, { nodeId: 5000 }), ErrorCode.INVALID_ARGUMENT)
})

test('version fence: another protocol version is refused with EMQ_VERSION_FENCE and found', async () => {
  assert.equal(await raw.cmd('GET', '{emq}:version'), 'echomq:2.1.0')
  await raw.cmd('SET', '{emq}:version', 'echomq:3.0.0')
  try {
    const err = await rejectsWith(emq.connect(server.url), ErrorCode.VERSION_FENCE)
    assert.equal(err.found, 'echomq:3.0.0')
    assert.equal(err.status, 6)
    assert.equal(await raw.cmd('GET', '{emq}:version'), 'echomq:3.0.0')
  } finally {
    await raw.cmd('SET', '{emq}:version', 'echomq:2.1.0')
  }
})
