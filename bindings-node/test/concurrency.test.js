// Many Promises at once: all land, no duplicate ids, and the event loop stays free.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, uniqueQueue, waitFor } = require('./helpers')
const emq = require('..')

let server, client
before(async () => {
  server = await startRedis()
  client = await emq.connect(server.url)
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

test('5,000 concurrent enqueue Promises: all present, unique ids, event loop responsive', async () => {
  const q = uniqueQueue('burst')
  const N = 5000
  // Hold every write on the server until we let go: if any call waited on
  // the network on the JS thread, the interval below could not tick meanwhile.
  assert.equal(await server.raw.cmd('CLIENT', 'PAUSE', 120000, 'WRITE'), 'OK')
  let settled = 0
  const promises = []
  for (let i = 0; i < N; i++) promises.push(client.enqueue(q, `payload-${i}`).finally(() => settled++))
  let ticks = 0
  const timer = setInterval(() => ticks++, 5)
  try {
    // While the server sits on 5,000 requests the event loop keeps turning.
    await waitFor(() => ticks >= 20, 60000, 'interval ticks while the server holds the writes')
    assert.equal(settled, 0, 'the pause held the replies')
  } finally {
    clearInterval(timer)
    await server.raw.cmd('CLIENT', 'UNPAUSE')
  }
  const results = await Promise.all(promises)

  const ids = new Set(results.map((r) => r.id))
  assert.equal(ids.size, N, 'no duplicate ids')
  assert.ok(results.every((r) => r.duplicate === false))
  assert.equal(await server.raw.cmd('ZCARD', `emq:{${q}}:pending`), N)
  assert.equal((await client.counts(q)).pending, N)
  for (const i of [0, 1, 2499, 4999]) {
    assert.equal(await server.raw.cmd('HGET', `emq:{${q}}:job:${results[i].id}`, 'payload'), `payload-${i}`)
  }
})

test('concurrent claims never hand one job to two callers', async () => {
  const q = uniqueQueue('claims')
  await client.enqueueMany(q, Array.from({ length: 500 }, (_, i) => `j${i}`))
  const claims = await Promise.all(Array.from({ length: 600 }, () => client.claim(q, 30_000)))
  const got = claims.filter(Boolean)
  assert.equal(got.length, 500)
  assert.equal(new Set(got.map((j) => j.id)).size, 500)
  const done = await client.completeMany(q, got)
  assert.ok(done.every((v) => v.status === 'fulfilled'))
  assert.equal((await client.counts(q)).completed, 500)
})

// Decision 16.11: enqueue verbs run on the core's caller thread, on a
// connection of its own per client, opened in the background at the first
// enqueue, fenced like every connection and closed with the client.
test('enqueues run on a connection of the caller thread, closed with the client', async () => {
  const q = uniqueQueue('caller')
  const name = `emq-caller-${process.pid}`
  const own = await emq.connect(server.url, { clientName: name })
  const shown = async () => {
    const list = await server.raw.cmd('CLIENT', 'LIST')
    return list.split('\n').filter((l) => l.includes(`name=${name} `)).length
  }
  const until = async (n) => {
    for (let i = 0; i < 250 && (await shown()) !== n; i++) await new Promise((r) => setTimeout(r, 20))
    assert.equal(await shown(), n, `connections named ${name}`)
  }
  assert.equal(await shown(), 1, 'connect opens the shared connection only')
  await own.enqueue(q, 'first')
  await until(2)
  const ids = []
  for (let i = 0; i < 100; i++) ids.push((await own.enqueue(q, `one-${i}`)).id)
  const withOptions = await own.enqueue(q, 'delayed', { delayMs: 60_000 })
  await until(2) // still two: one-at-a-time calls reuse the caller thread's
  assert.equal(await server.raw.cmd('ZCARD', `emq:{${q}}:pending`), 101)
  assert.equal(await server.raw.cmd('ZCARD', `emq:{${q}}:schedule`), 1)
  assert.equal(await server.raw.cmd('HGET', `emq:{${q}}:job:${ids[99]}`, 'payload'), 'one-99')
  assert.ok(withOptions.id)
  await own.close()
  await assert.rejects(own.enqueue(q, 'closed'), (e) => e instanceof emq.EchoMQError && e.code === 'EMQ_CLOSED')
  await until(0)
})
