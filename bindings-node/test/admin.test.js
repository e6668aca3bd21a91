// The operator verbs through Node (queues, drain, purgeDead, requeueAllDead)
// and the dead-set retention worker options, asserting wire state.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, uniqueQueue, sleep } = require('./helpers')
const emq = require('..')

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

const members = (q, set) => raw.cmd('ZRANGE', `emq:{${q}}:${set}`, 0, -1)

async function killAll(q, n) {
  for (let i = 0; i < n; i++) {
    const job = await client.claim(q, 10000)
    assert.equal(await client.retry(q, job.id, job.token, 0, 1, 'boom'), 'dead')
  }
}

test('queues lists queues by their keys, empty paused ones included', async () => {
  const q = uniqueQueue()
  await client.enqueue(q, 'x')
  await client.pause(`${q}-empty`)
  const names = await client.queues()
  assert.ok(names.includes(q) && names.includes(`${q}-empty`), names.join(' '))
  assert.deepEqual([...names].sort(), names)
})

test('drain deletes waiting jobs oldest first, scheduled only when asked', async () => {
  const q = uniqueQueue()
  const ids = []
  for (let i = 0; i < 3; i++) ids.push((await client.enqueue(q, `p${i}`)).id)
  await client.enqueue(q, 'later', { delayMs: 60000 })
  assert.equal(await client.drain(q, false, 2), 2)
  assert.deepEqual(await members(q, 'pending'), [ids[2]])
  assert.equal(await raw.cmd('EXISTS', `emq:{${q}}:job:${ids[0]}`), 0)
  assert.equal(await client.drain(q, true), 2)
  assert.deepEqual(await members(q, 'schedule'), [])
  await assert.rejects(client.drain(q, false, 0), (e) => e.code === emq.ErrorCode.INVALID_ARGUMENT)
  await assert.rejects(client.drain('bad queue'), (e) => e.code === emq.ErrorCode.INVALID_QUEUE)
})

test('requeueAllDead and purgeDead (age bound, then all)', async () => {
  const q = uniqueQueue()
  for (let i = 0; i < 2; i++) await client.enqueue(q, `d${i}`)
  await killAll(q, 2)
  assert.equal(await client.requeueAllDead(q), 2)
  assert.equal((await members(q, 'pending')).length, 2)
  await killAll(q, 2)
  assert.equal(await client.purgeDead(q, 86400000), 0)
  assert.equal(await client.purgeDead(q, null, 1), 1)
  assert.equal(await client.purgeDead(q), 1)
  assert.deepEqual(await members(q, 'dead'), [])
})

test('the worker trims the dead set to deadMaxLen', async () => {
  const q = uniqueQueue()
  for (let i = 0; i < 4; i++) await client.enqueue(q, `w${i}`)
  const worker = new emq.Worker(
    client,
    q,
    async () => {
      throw new emq.UnrecoverableError('no')
    },
    { pumpIntervalMs: 20, deadMaxLen: 1, deadMaxAgeMs: 86400000 }
  )
  const run = worker.run()
  const deadline = Date.now() + 20000
  while (true) {
    const c = await client.counts(q)
    if (c.failed === 4 && c.dead === 1) break
    assert.ok(Date.now() < deadline, JSON.stringify(c))
    await sleep(20)
  }
  await worker.close()
  await run
})
