// The one enqueue verb (issue #33): `enqueue(queue, payload, options)` on the
// client and `enqueue(payload, options)` on a queue handle, and `enqueueMany`
// with per-item options; each option's wire state checked with raw commands,
// and every refusal writes nothing.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, rawClient, hash, uniqueQueue } = require('./helpers')
const emq = require('..')

const { ErrorCode } = emq
let server, client, raw

before(async () => {
  server = await startRedis()
  raw = server.raw
  client = await emq.connect(server.url)
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

const row = async (q, id) => hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${id}`))
const members = (q, set) => raw.cmd('ZRANGE', `emq:{${q}}:${set}`, 0, -1)
const score = async (q, set, id) => {
  const s = await raw.cmd('ZSCORE', `emq:{${q}}:${set}`, id)
  return s === null ? null : Number(s)
}
const serverMs = async () => {
  const [s, us] = await raw.cmd('TIME')
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}
const keyspace = async () => (await raw.cmd('KEYS', '*')).sort()

async function refused(promise, code, message) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof emq.EchoMQError, String(e && e.stack))
    assert.equal(e.code, code, e.message)
    if (message) assert.match(e.message, message)
    return true
  })
}

/** The same enqueue through the client and through a queue handle. */
const FORMS = {
  client: (q, payload, options) => client.enqueue(q, payload, options),
  queue: (q, payload, options) => client.queue(q).enqueue(payload, options),
}
const MANY = {
  client: (q, items) => client.enqueueMany(q, items),
  queue: (q, items) => client.queue(q).enqueueMany(items),
}

for (const [form, enqueue] of Object.entries(FORMS)) {
  test(`${form}: no options enqueues now under a minted id`, async () => {
    const q = uniqueQueue(form)
    for (const options of [undefined, null, {}]) {
      const e = await enqueue(q, 'now', options)
      assert.equal(e.duplicate, false)
      assert.ok(emq.isValidId(e.id) && e.id.startsWith('JOB'))
      assert.equal((await row(q, e.id)).state, 'pending')
      assert.equal(await score(q, 'pending', e.id), 0)
    }
  })

  test(`${form}: {id} writes the row under the chosen id; again answers duplicate, untouched`, async () => {
    const q = uniqueQueue(form)
    const id = emq.mintJobId()
    assert.deepEqual(await enqueue(q, 'first', { id }), { id, duplicate: false })
    assert.deepEqual(await row(q, id), { state: 'pending', attempts: '0', payload: 'first' })
    assert.deepEqual(await members(q, 'pending'), [id])
    assert.deepEqual(await enqueue(q, 'second', { id }), { id, duplicate: true })
    assert.equal((await row(q, id)).payload, 'first')
    assert.deepEqual(await members(q, 'pending'), [id])
  })

  test(`${form}: {runAtMs} schedules at that instant; {delayMs} after the server's now`, async () => {
    const q = uniqueQueue(form)
    const at = Date.UTC(2100, 0, 1)
    const a = await enqueue(q, 'at', { runAtMs: at })
    assert.equal(await score(q, 'schedule', a.id), at)
    assert.equal((await row(q, a.id)).state, 'scheduled')
    const t0 = await serverMs()
    const d = await enqueue(q, 'in', { delayMs: 60_000 })
    const t1 = await serverMs()
    const s = await score(q, 'schedule', d.id)
    assert.ok(s >= t0 + 60_000 && s <= t1 + 60_000, `${t0} ${s} ${t1}`)
    // A chosen id with a time.
    const id = emq.mintJobId()
    assert.deepEqual(await enqueue(q, 'both', { id, delayMs: 60_000 }), { id, duplicate: false })
    assert.ok((await score(q, 'schedule', id)) >= t0 + 60_000)
    assert.deepEqual(await members(q, 'pending'), [])
  })

  test(`${form}: {dedupId} holds the dedup key; {dedupTtlMs} gives it a TTL`, async () => {
    const q = uniqueQueue(form)
    const a = await enqueue(q, 'a', { dedupId: 'order-7' })
    assert.equal(a.duplicate, false)
    assert.equal(await raw.cmd('GET', `emq:{${q}}:de:order-7`), a.id)
    assert.equal(await raw.cmd('PTTL', `emq:{${q}}:de:order-7`), -1)
    assert.equal((await row(q, a.id)).did, 'order-7')
    assert.deepEqual(await enqueue(q, 'b', { dedupId: 'order-7' }), { id: a.id, duplicate: true })
    assert.deepEqual(await members(q, 'pending'), [a.id])
    const t = await enqueue(q, 't', { dedupId: 'throttle', dedupTtlMs: 60_000 })
    assert.equal(await raw.cmd('GET', `emq:{${q}}:de:throttle`), t.id)
    const ttl = await raw.cmd('PTTL', `emq:{${q}}:de:throttle`)
    assert.ok(ttl > 0 && ttl <= 60_000, String(ttl))
  })

  test(`${form}: bad options are refused with EMQ_INVALID_ARGUMENT and write nothing`, async () => {
    const q = uniqueQueue(form)
    const before = await keyspace()
    const bad = [
      [{ runAtMs: Date.now() + 1000, delayMs: 5 }, /not both/],
      [{ dedupId: 'd', id: emq.mintJobId() }, /dedup_id/],
      [{ dedupId: 'd', delayMs: 5 }, /dedup_id/],
      [{ dedupId: 'd', runAtMs: 5 }, /dedup_id/],
      [{ dedupTtlMs: 100 }, /dedup/],
      [{ dedupId: 'd', dedupTtlMs: 0 }, /dedup/],
      [{ dedupId: 'a b' }, /dedup/],
      [{ delay: 5 }, /unknown enqueue option "delay"/],
      [{ delayMS: 5 }, /unknown enqueue option "delayMS"/],
      [{ delayMs: -1 }, /delayMs/],
      [{ runAtMs: 1.5 }, /runAtMs/],
      [{ dedupId: 'd', dedupTtlMs: -5 }, /dedupTtlMs/],
      [{ id: 42 }, null],
      ['{"delayMs": 5}', /object/],
    ]
    for (const [options, message] of bad) await refused(enqueue(q, 'x', options), ErrorCode.INVALID_ARGUMENT, message)
    await refused(enqueue(q, 'x', { id: 'JOB0000000000' }), ErrorCode.INVALID_ID)
    await refused(enqueue(q, 'x', { id: 'ORD0NgWEfAEJfs' }), ErrorCode.KIND)
    assert.deepEqual(await keyspace(), before)
  })
}

for (const [form, enqueueMany] of Object.entries(MANY)) {
  test(`${form}: a batch with mixed per-item options answers one verdict per item, in order`, async () => {
    const q = uniqueQueue(`${form}-batch`)
    const existing = await client.enqueue(q, 'was here', { id: emq.mintJobId() })
    const chosen = emq.mintJobId()
    const at = Date.UTC(2100, 0, 1)
    const t0 = await serverMs()
    const verdicts = await enqueueMany(q, [
      'plain',
      Buffer.from([0, 1, 2]),
      { payload: 'later', delayMs: 60_000 },
      { payload: new Uint8Array([9]), runAtMs: at },
      { payload: 'chosen', id: chosen },
      { payload: 'chosen again', id: chosen },
      { payload: 'not again', id: existing.id },
      { payload: 'deduped', dedupId: 'batch-1', dedupTtlMs: 60_000 },
      { payload: 'deduped again', dedupId: 'batch-1' },
      { payload: 'plain object' },
    ])
    const t1 = await serverMs()
    assert.deepEqual(
      verdicts.map((v) => v.status),
      Array(10).fill('fulfilled')
    )
    const [plain, bytes, later, atItem, first, again, old, dedup, dedupAgain, object] = verdicts.map((v) => v.value)
    assert.deepEqual(
      [plain, bytes, later, atItem, first, again, old, dedup, dedupAgain, object].map((e) => e.duplicate),
      [false, false, false, false, false, true, true, false, true, false]
    )
    assert.deepEqual([first.id, again.id, old.id], [chosen, chosen, existing.id])
    assert.equal(dedupAgain.id, dedup.id)
    const minted = [plain, bytes, later, atItem, dedup, object].map((e) => e.id)
    assert.equal(new Set(minted).size, minted.length)
    for (const id of minted) assert.ok(emq.isValidId(id), id)

    // The wire: pending now, scheduled later, the chosen rows untouched, the dedup key.
    assert.deepEqual(
      (await members(q, 'pending')).sort(),
      [existing.id, plain.id, bytes.id, chosen, dedup.id, object.id].sort()
    )
    assert.equal((await row(q, plain.id)).payload, 'plain')
    assert.deepEqual(
      Buffer.from(
        (await raw.cmdBuf('HGET', `emq:{${q}}:job:${bytes.id}`, 'payload'))
      ),
      Buffer.from([0, 1, 2])
    )
    const s = await score(q, 'schedule', later.id)
    assert.ok(s >= t0 + 60_000 && s <= t1 + 60_000, `${t0} ${s} ${t1}`)
    assert.equal(await score(q, 'schedule', atItem.id), at)
    assert.equal((await row(q, chosen)).payload, 'chosen')
    assert.equal((await row(q, existing.id)).payload, 'was here')
    assert.equal(await raw.cmd('GET', `emq:{${q}}:de:batch-1`), dedup.id)
    const ttl = await raw.cmd('PTTL', `emq:{${q}}:de:batch-1`)
    assert.ok(ttl > 0 && ttl <= 60_000, String(ttl))
    assert.equal((await row(q, object.id)).payload, 'plain object')
    assert.deepEqual(await client.counts(q), {
      pending: 6,
      active: 0,
      scheduled: 2,
      dead: 0,
      completed: 0,
      failed: 0,
    })
  })

  test(`${form}: one bad item refuses the whole batch (item N), nothing written`, async () => {
    const q = uniqueQueue(`${form}-batch-bad`)
    const before = await keyspace()
    const ok = ['fine', { payload: 'fine', delayMs: 5 }]
    const bad = [
      [{ payload: 'x', delay: 5 }, /^item 2: unknown enqueue option "delay"/],
      [{ payload: 'x', runAtMs: 10, delayMs: 5 }, /^item 2: .*not both/],
      [{ payload: 'x', dedupId: 'd', id: emq.mintJobId() }, /^item 2: .*dedup_id/],
      [{ payload: 'x', dedupTtlMs: 5 }, /^item 2: .*dedup/],
      [{ payload: 'x', delayMs: -5 }, /^item 2: delayMs/],
      [{ delayMs: 5 }, /^item 2: an item is a payload/],
      [{ payload: 42 }, /^item 2: an item is a payload/],
      [null, /^item 2: an item is a payload/],
      [7, /^item 2: an item is a payload/],
    ]
    for (const [item, message] of bad) {
      await refused(enqueueMany(q, [...ok, item]), ErrorCode.INVALID_ARGUMENT, message)
    }
    await refused(enqueueMany(q, [...ok, { payload: 'x', id: 'JOB0' }]), ErrorCode.INVALID_ID, /^item 2: /)
    await refused(enqueueMany(q, 'not a list'), ErrorCode.INVALID_ARGUMENT)
    assert.deepEqual(await keyspace(), before)
    assert.deepEqual(await enqueueMany(q, []), [])
  })
}

for (const [form, enqueue] of Object.entries(FORMS)) {
  test(`${form}: exists answers whether the row is there (the recipe's verb)`, async () => {
    const q = uniqueQueue(form)
    const ask = (id) => (form === 'client' ? client.exists(q, id) : client.queue(q).exists(id))
    const e = await enqueue(q, 'x')
    assert.equal(await raw.cmd('EXISTS', `emq:{${q}}:job:${e.id}`), 1)
    assert.equal(await ask(e.id), true)
    await raw.cmd('DEL', `emq:{${q}}:job:${e.id}`)
    assert.equal(await ask(e.id), false)
    await refused(ask('not an id'), ErrorCode.INVALID_ID)
  })
}

// ---- priority (wire 2.2.0, issue #34) ----
// The first client on a keyspace fences it at the wire it speaks, and this
// file's client speaks the default 2.1.0 on db 0: the 2.2.0 client uses db 11.
const PRIO_DB = '11'
const MAX_PRIORITY = 1_000_000

async function speaking22() {
  const c = await emq.connect(`${server.url}${PRIO_DB}`, { wireVersion: 'echomq:2.2.0' })
  const r = await rawClient(server.port)
  await r.cmd('SELECT', PRIO_DB)
  return { c, r, close: async () => (await c.close(), await r.cmd('FLUSHDB'), r.close()) }
}

test('priority: claimed highest first, waiting in prio scored -priority, per item too', async () => {
  const { c, r, close } = await speaking22()
  try {
    assert.equal(await r.cmd('GET', '{emq}:version'), 'echomq:2.2.0')
    const q = uniqueQueue('prio')
    const low = await c.enqueue(q, 'low', { priority: 1 })
    const high = await c.queue(q).enqueue('high', { priority: MAX_PRIORITY })
    const none = await c.enqueue(q, 'none')
    const zero = await c.enqueue(q, 'zero', { priority: 0 })
    const [nine, plain] = (await c.enqueueMany(q, [{ payload: 'nine', priority: 9 }, 'plain'])).map((v) => v.value)
    // The wire: prio holds the prioritized ids scored -priority; the rest wait in pending.
    assert.deepEqual(await r.cmd('ZRANGE', `emq:{${q}}:prio`, 0, -1, 'WITHSCORES'), [
      high.id, String(-MAX_PRIORITY), nine.id, '-9', low.id, '-1',
    ])
    assert.deepEqual(await r.cmd('ZRANGE', `emq:{${q}}:pending`, 0, -1), [none.id, zero.id, plain.id])
    const field = (id) => r.cmd('HGET', `emq:{${q}}:job:${id}`, 'priority')
    assert.deepEqual(
      await Promise.all([high, nine, low, none, zero].map((e) => field(e.id))),
      ['1000000', '9', '1', null, null]
    )
    assert.equal((await c.counts(q)).pending, 6)
    const claimed = []
    for (let i = 0; i < 6; i++) claimed.push((await c.claim(q, 30_000)).id)
    assert.deepEqual(claimed, [high.id, nine.id, low.id, none.id, zero.id, plain.id])
    assert.equal(await c.claim(q, 30_000), null)
  } finally {
    await close()
  }
})

test('priority: out of range is EMQ_INVALID_ARGUMENT and writes nothing', async () => {
  const { c, r, close } = await speaking22()
  try {
    const q = uniqueQueue('prio-bad')
    for (const p of [MAX_PRIORITY + 1, 2 ** 32, -1, 1.5, Number.NaN]) {
      const why = /priority\b.*(out of range|non-negative integer)/
      await refused(c.enqueue(q, 'x', { priority: p }), ErrorCode.INVALID_ARGUMENT, why)
      await refused(c.enqueueMany(q, ['fine', { payload: 'x', priority: p }]), ErrorCode.INVALID_ARGUMENT, /^item 1: /)
      await refused(c.enqueueMany(q, ['fine', { payload: 'x', priority: p }]), ErrorCode.INVALID_ARGUMENT, why)
    }
    assert.deepEqual(await r.cmd('KEYS', `emq:{${q}}:*`), [])
  } finally {
    await close()
  }
})

test('priority on a 2.1.0 client is EMQ_UNSUPPORTED and writes nothing', async () => {
  const q = uniqueQueue('prio-old')
  const before = await keyspace()
  await refused(client.enqueue(q, 'x', { priority: 5 }), ErrorCode.UNSUPPORTED, /priority/)
  await refused(client.queue(q).enqueue('x', { priority: 5 }), ErrorCode.UNSUPPORTED)
  await refused(client.enqueueMany(q, ['fine', { payload: 'x', priority: 5 }]), ErrorCode.UNSUPPORTED)
  assert.deepEqual(await keyspace(), before)
})
