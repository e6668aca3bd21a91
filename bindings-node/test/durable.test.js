// Durable writes through Node (issue #15): a standalone server has no replica,
// so `waitReplicas: 1` rejects with EMQ_NOT_DURABLE carrying err.id, after the
// write happened on the master.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, uniqueQueue } = require('./helpers')
const emq = require('..')

let server
before(async () => {
  server = await startRedis()
})
after(async () => {
  if (server) await server.stop()
})

test('waitReplicas beyond the replicas rejects with EMQ_NOT_DURABLE and the id', async () => {
  const client = await emq.connect(server.url, { waitReplicas: 1, waitTimeoutMs: 20 })
  const q = uniqueQueue()
  const err = await client.enqueue(q, Buffer.from('unconfirmed')).then(
    () => assert.fail('expected EMQ_NOT_DURABLE'),
    (e) => e
  )
  assert.equal(err.code, emq.ErrorCode.NOT_DURABLE)
  assert.equal(err.status, 21)
  assert.match(err.id, /^JOB/)
  const job = await client.job(q, err.id)
  assert.equal(job.payload.toString(), 'unconfirmed')
  await client.close()
})
