// Repeatable jobs (issue #13 §6) from Node: the scenario every binding runs
// (core/tests/repeat.rs is the full one) — two pumps racing on one repeat make
// exactly one job per slot, cron in a zone, bad input refused with nothing
// written, and wire 2.0.0 refusing the verbs before any I/O.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, rawClient, sleep, uniqueQueue } = require('./helpers')
const emq = require('..')
const { ErrorCode } = emq

let server, a, b, raw
before(async () => {
  server = await startRedis()
  raw = server.raw
  a = await emq.connect(server.url)
  b = await emq.connect(server.url)
})
after(async () => {
  if (a) await a.close()
  if (b) await b.close()
  if (server) await server.stop()
})

async function rejectsWith(promise, code) {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e) => e
  )
  assert.ok(err instanceof emq.EchoMQError, String(err))
  assert.equal(err.code, code, err.message)
  return err
}

test('two pumps racing on one repeat make exactly one job per slot', async () => {
  const q = uniqueQueue('repeat')
  const r = await a.upsertRepeat(q, 'tick', { everyMs: 50, payload: 'r', limit: 5 })
  assert.deepEqual([r.name, r.everyMs, r.cron, r.limit, r.count], ['tick', 50, null, 5, 0])
  const record = `emq:{${q}}:repeat:tick`
  assert.equal(await raw.cmd('HGET', record, 'every_ms'), '50')
  assert.equal(Number(await raw.cmd('ZSCORE', `emq:{${q}}:repeat`, 'tick')), r.nextRunMs)
  let fired = 0
  for (let i = 0; i < 3000; i++) {
    const got = await Promise.all([a.fireRepeats(q), b.fireRepeats(q, 10)])
    fired += got[0] + got[1]
    if ((await raw.cmd('EXISTS', record)) === 0) break
    await sleep(2)
  }
  assert.equal(fired, 5)
  const ids = await raw.cmd('ZRANGE', `emq:{${q}}:pending`, '0', '-1')
  assert.equal(ids.length, 5)
  const slots = new Set(ids.map((id) => emq.parseId(id).mintedAtMs))
  assert.equal(slots.size, 5)
  for (const s of slots) assert.equal((s - r.nextRunMs) % 50, 0)
  assert.deepEqual(await a.listRepeats(q), [])
})

test('cron in a zone, list and remove', async () => {
  const q = uniqueQueue('cron')
  const r = await a.upsertRepeat(q, 'report', { cron: '*/5 * * * *', tz: 'Europe/Berlin', payload: '{}' })
  assert.equal(r.nextRunMs % 300000, 0)
  assert.equal(r.tz, 'Europe/Berlin')
  assert.equal(r.everyMs, null)
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:repeat:report`, 'cron'), '*/5 * * * *')
  const again = await a.upsertRepeat(q, 'report', { cron: '*/5 * * * *', tz: 'Europe/Berlin', payload: '{}' })
  assert.equal(again.nextRunMs, r.nextRunMs)
  const utc = await a.upsertRepeat(q, 'nine', { cron: '0 9 * * 1-5' })
  assert.equal(utc.tz, 'UTC')
  assert.equal(utc.payload.length, 0)
  const listed = await a.listRepeats(q)
  assert.deepEqual(listed.map((x) => x.name).sort(), ['nine', 'report'])
  assert.equal(await a.fireRepeats(q), 0)
  assert.equal(await a.removeRepeat(q, 'report'), true)
  assert.equal(await a.removeRepeat(q, 'report'), false)
  assert.equal(await raw.cmd('EXISTS', `emq:{${q}}:repeat:report`), 0)
})

test('bad input rejects EMQ_INVALID_ARGUMENT and writes nothing', async () => {
  const q = uniqueQueue('bad')
  for (const options of [
    { cron: 'not a cron' },
    { cron: '* * * * *', tz: 'Mars/Olympus' },
    { cron: '* * * * *', everyMs: 1000 },
    {},
    { everyMs: 1000, tz: 'UTC' },
    { everyMs: 0 },
    { everyMs: 1000, limit: 0 },
  ]) {
    await rejectsWith(a.upsertRepeat(q, 'x', options), ErrorCode.INVALID_ARGUMENT)
  }
  await rejectsWith(a.upsertRepeat(q, 'bad name', { everyMs: 1000 }), ErrorCode.INVALID_ARGUMENT)
  await rejectsWith(a.upsertRepeat(q, 'x', { everyMs: -1 }), ErrorCode.INVALID_ARGUMENT)
  assert.deepEqual(await raw.cmd('KEYS', `emq:{${q}}:*`), [])
})

test('wire 2.0.0: the repeat verbs reject EMQ_UNSUPPORTED before any I/O', async () => {
  const url = `${server.url}9`
  const old = await emq.connect(url, { wireVersion: 'echomq:2.0.0' })
  const db9 = await rawClient(server.port)
  await db9.cmd('SELECT', '9')
  try {
    await rejectsWith(old.upsertRepeat('q', 'r', { everyMs: 1000 }), ErrorCode.UNSUPPORTED)
    await rejectsWith(old.removeRepeat('q', 'r'), ErrorCode.UNSUPPORTED)
    await rejectsWith(old.listRepeats('q'), ErrorCode.UNSUPPORTED)
    await rejectsWith(old.fireRepeats('q'), ErrorCode.UNSUPPORTED)
    assert.equal(await db9.cmd('EXISTS', 'emq:{q}:repeat'), 0)
    await old.close()
  } finally {
    await db9.cmd('FLUSHDB')
    db9.close()
  }
})
