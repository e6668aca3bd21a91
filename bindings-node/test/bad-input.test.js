// Bad input is refused with the right code before the wire: nothing is written.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis } = require('./helpers')
const emq = require('..')

const { ErrorCode } = emq
let server, client
before(async () => {
  server = await startRedis()
  client = await emq.connect(server.url, { maxPayload: 1024 })
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

async function keyspace() {
  return (await server.raw.cmd('KEYS', '*')).sort()
}

async function refused(promise, code) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof emq.EchoMQError, String(e && e.stack))
    assert.equal(e.code, code, e.message)
    return true
  })
}

test('invalid queue names are refused with EMQ_INVALID_QUEUE', async () => {
  const before = await keyspace()
  const long = 'x'.repeat(129)
  for (const q of ['', 'has space', 'emq', 'a{b}', 'q:1', long, 'ü']) {
    assert.equal(emq.isValidQueue(q), false, q)
    await refused(client.enqueue(q, 'x'), ErrorCode.INVALID_QUEUE)
    await refused(client.claim(q, 1000), ErrorCode.INVALID_QUEUE)
    await refused(client.counts(q), ErrorCode.INVALID_QUEUE)
    await refused(client.enqueueMany(q, ['a']), ErrorCode.INVALID_QUEUE)
    await refused(client.pause(q), ErrorCode.INVALID_QUEUE)
  }
  assert.equal(emq.isValidQueue('x'.repeat(128)), true)
  assert.deepEqual(await keyspace(), before)
})

test('invalid ids are refused with EMQ_INVALID_ID', async () => {
  const before = await keyspace()
  for (const id of ['', 'JOB', 'JOB0000000000', 'job00000000000', 'JOB0000000000-', 'JOBzzzzzzzzzzz', 'JOB00000000000x']) {
    assert.equal(emq.isValidId(id), false, id)
    await refused(client.enqueue('orders', 'x', { id }), ErrorCode.INVALID_ID)
    await refused(client.enqueueMany('orders', ['ok', { payload: 'x', id }]), ErrorCode.INVALID_ID)
    await refused(client.complete('orders', id, 1), ErrorCode.INVALID_ID)
    await refused(client.job('orders', id), ErrorCode.INVALID_ID)
    await refused(client.remove('orders', id), ErrorCode.INVALID_ID)
  }
  assert.deepEqual(await keyspace(), before)
})

test('wrong payload types and bad numbers are refused with EMQ_INVALID_ARGUMENT', async () => {
  const before = await keyspace()
  for (const payload of [42, null, undefined, true, { a: 1 }, [1, 2], new Float32Array(2), 10n]) {
    await refused(client.enqueue('orders', payload), ErrorCode.INVALID_ARGUMENT)
    await refused(client.enqueue('orders', payload, { id: emq.mintJobId() }), ErrorCode.INVALID_ARGUMENT)
    await refused(client.enqueueMany('orders', ['ok', payload]), ErrorCode.INVALID_ARGUMENT)
    await refused(client.enqueueMany('orders', ['ok', { payload }]), ErrorCode.INVALID_ARGUMENT)
  }
  await refused(client.enqueue('orders', Buffer.alloc(1025)), ErrorCode.INVALID_ARGUMENT)
  await refused(client.enqueueMany('orders', ['ok', Buffer.alloc(2000)]), ErrorCode.INVALID_ARGUMENT)
  await refused(client.enqueue(42, 'x'), ErrorCode.INVALID_ARGUMENT)
  for (const ms of [-1, 1.5, NaN, Infinity, '100']) {
    await refused(client.claim('orders', ms), ErrorCode.INVALID_ARGUMENT)
    await refused(client.enqueue('orders', 'x', { delayMs: ms }), ErrorCode.INVALID_ARGUMENT)
    await refused(client.enqueueMany('orders', [{ payload: 'x', runAtMs: ms }]), ErrorCode.INVALID_ARGUMENT)
  }
  await refused(client.claim('orders', 0), ErrorCode.INVALID_ARGUMENT)
  await refused(client.claimMany('orders', 0, 1000), ErrorCode.INVALID_ARGUMENT)
  await refused(client.complete('orders', emq.mintJobId(), -3), ErrorCode.INVALID_ARGUMENT)
  await refused(client.completeMany('orders', [{ id: emq.mintJobId() }]), ErrorCode.INVALID_ARGUMENT)
  await refused(client.browse('orders', 'pending', false, 10, { fromMs: 10, toMs: 5 }), ErrorCode.INVALID_ARGUMENT)
  assert.deepEqual(await keyspace(), before)
})

test('a bad worker option or handler is refused synchronously', () => {
  const throwsCode = (fn, code) =>
    assert.throws(fn, (e) => e instanceof emq.EchoMQError && e.code === code)
  throwsCode(() => new emq.Worker(client, 'orders', 'not a function'), ErrorCode.INVALID_ARGUMENT)
  throwsCode(() => new emq.Worker({}, 'orders', async () => {}), ErrorCode.INVALID_ARGUMENT)
  throwsCode(() => new emq.Worker(client, 'bad queue', async () => {}), ErrorCode.INVALID_QUEUE)
  throwsCode(() => new emq.Worker(client, 'orders', async () => {}, { concurrency: 0 }), ErrorCode.INVALID_ARGUMENT)
  throwsCode(() => new emq.Worker(client, 'orders', async () => {}, { backoff: 'linear' }), ErrorCode.INVALID_ARGUMENT)
  throwsCode(() => new emq.Worker(client, 'orders', async () => {}, { leaseMS: 100 }), ErrorCode.INVALID_ARGUMENT)
  throwsCode(
    () => new emq.Worker(client, 'orders', async () => {}, { backoffBaseMs: 100, backoffCapMs: 10 }),
    ErrorCode.INVALID_ARGUMENT
  )
})
