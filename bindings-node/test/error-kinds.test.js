// Error kinds provoked for real against a real server (issue 41), not only
// read from the mapping table: a key of the wrong type under the queue's name
// (EMQ_SERVER), a foreign script bundle with strictBundle (EMQ_BUNDLE_MISMATCH),
// a malformed job row (EMQ_PROTOCOL) and a server that is gone (EMQ_UNAVAILABLE).
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, uniqueQueue } = require('./helpers')
const emq = require('..')
const { ErrorCode } = emq

let server, client
before(async () => {
  server = await startRedis()
  client = await emq.connect(server.url)
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

/** Await `promise`, expecting a typed rejection with one of `codes`. */
async function rejection(promise, ...codes) {
  const e = await promise.then(
    () => assert.fail(`expected ${codes.join(' or ')}`),
    (e) => e
  )
  assert.ok(e instanceof emq.EchoMQError, String(e))
  assert.ok(codes.includes(e.code), `${e.code}: ${e.message}`)
  return e
}

test('a key of the wrong type under the queue is EMQ_SERVER, and the key is left alone', async () => {
  const q = uniqueQueue('wrongtype')
  // Someone else's string where the queue's pending ZSET lives: the server's
  // own WRONGTYPE refusal, before anything is written (decision W.1).
  await server.raw.cmd('SET', `emq:{${q}}:pending`, 'not a zset')
  await rejection(client.enqueue(q, 'x'), ErrorCode.SERVER)
  assert.equal(await server.raw.cmd('GET', `emq:{${q}}:pending`), 'not a zset')
  // No job row is left behind.
  assert.deepEqual(await server.raw.cmd('KEYS', `emq:{${q}}:job:*`), [])
})

test('strictBundle refuses a foreign script bundle at connect', async () => {
  const own = await startRedis()
  try {
    // Another runtime recorded different scripts under the same version.
    await own.raw.cmd('HSET', '{emq}:bundle', 'bundle', '0000')
    await rejection(emq.connect(own.url, { strictBundle: true }), ErrorCode.BUNDLE_MISMATCH)
    // Without the option the same server is only a warning.
    const lenient = await emq.connect(own.url)
    assert.deepEqual(
      (await lenient.bundleMismatches()).map((m) => m.field),
      ['bundle']
    )
    await lenient.close()
    assert.equal(await own.raw.cmd('HGET', '{emq}:bundle', 'bundle'), '0000')
  } finally {
    await own.stop()
  }
})

test('a malformed job row is EMQ_PROTOCOL', async () => {
  const q = uniqueQueue('malformed')
  const e = await client.enqueue(q, 'x')
  await server.raw.cmd('HSET', `emq:{${q}}:job:${e.id}`, 'attempts', 'two')
  await rejection(client.job(q, e.id), ErrorCode.PROTOCOL)
})

test('a server that is gone is EMQ_UNAVAILABLE', async () => {
  const own = await startRedis()
  const c = await emq.connect(own.url, { connectTimeoutMs: 300, responseTimeoutMs: 500 })
  const q = uniqueQueue('gone')
  await c.enqueue(q, 'x')
  await own.stop()
  // The first call may be the one that learns the socket is gone (a
  // connection error: it may have been sent); after that nothing can be
  // sent: reconnects are retried, then answered as unavailable.
  await rejection(c.counts(q), ErrorCode.CONNECTION, ErrorCode.UNAVAILABLE)
  await rejection(c.counts(q), ErrorCode.UNAVAILABLE)
  await c.close()
})
