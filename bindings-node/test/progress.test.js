// Issue #13 §2 and §4 through Node, the core's scenario: progress (holder
// only, the `progress` event, shown by `job`), logs (capped, ranged, deleted
// with the job), kept results (`keepResultMs`, `result`, `waitForResult`
// with its typed errors). Wire state is read with a raw connection.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startRedis, uniqueQueue } = require('./helpers')
const emq = require('..')

let server, client, raw
before(async () => {
  server = await startRedis()
  raw = (...args) => server.raw.cmd(...args)
  client = await emq.connect(server.url)
})
after(async () => {
  if (client) await client.close()
  if (server) await server.stop()
})

const row = (q, id) => `emq:{${q}}:job:${id}`

async function nextFor(sub, id, name) {
  for await (const event of sub) {
    if (event.job === id && event.event === name) return event
  }
  throw new Error(`no ${name} event for ${id}`)
}

test('only the holder writes progress; it is published and shown by job()', async () => {
  const q = uniqueQueue('progress')
  const { id } = await client.enqueue(q, 'p')
  const sub = await client.subscribe(q)
  await assert.rejects(client.updateProgress(q, id, 0, 10), { code: 'EMQSTALE' })
  const job = await client.claim(q, 30000)
  const seen = nextFor(sub, id, 'progress')
  await client.updateProgress(q, id, job.token, { done: 3, of: 10 })
  assert.equal(await raw('HGET', row(q, id), 'progress'), '{"done":3,"of":10}')
  assert.equal((await seen).fields.progress, '{"done":3,"of":10}')
  await client.updateProgress(q, id, job.token, 42)
  assert.equal((await client.job(q, id)).progress, 42)
  await assert.rejects(client.updateProgress(q, id, job.token + 1, 50), { code: 'EMQSTALE' })
  await assert.rejects(client.updateProgress(q, id, job.token, undefined), { code: 'EMQ_INVALID_ARGUMENT' })
  await client.complete(q, id, job.token)
  await assert.rejects(client.updateProgress(q, id, job.token, 1), { code: 'EMQ_GONE' })
  await sub.close()
})

test('logs are capped, read in ranges and deleted with the job', async () => {
  const q = uniqueQueue('logs')
  const { id } = await client.enqueue(q, 'l')
  for (let n = 1; n <= 5; n++) assert.equal(await client.log(q, id, `line ${n}`, 3), Math.min(n, 3))
  assert.deepEqual(await raw('LRANGE', `${row(q, id)}:logs`, '0', '-1'), ['line 3', 'line 4', 'line 5'])
  assert.deepEqual(await client.logs(q, id), ['line 3', 'line 4', 'line 5'])
  assert.deepEqual(await client.logs(q, id, -1, -1), ['line 5'])
  await assert.rejects(client.log(q, id, 'x', 0), { code: 'EMQ_INVALID_ARGUMENT' })
  const job = await client.claim(q, 30000)
  await client.complete(q, id, job.token)
  assert.equal(await raw('EXISTS', `${row(q, id)}:logs`), 0)
  await assert.rejects(client.log(q, id, 'late'), { code: 'EMQ_GONE' })
  const other = (await client.enqueue(q, 'r')).id
  await client.log(q, other, 'x')
  await client.remove(q, other)
  assert.equal(await raw('EXISTS', `${row(q, other)}:logs`), 0)
})

test('a worker keeps results; waitForResult answers them or a typed error', async () => {
  const q = uniqueQueue('results')
  const ok = (await client.enqueue(q, 'a')).id
  const js = (await client.enqueue(q, 'json')).id
  const empty = (await client.enqueue(q, 'nothing')).id
  const dead = (await client.enqueue(q, 'fail')).id
  const waiting = client.waitForResult(q, ok, 20000)
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      await job.log('working')
      await job.updateProgress(50)
      const text = job.payload.toString()
      if (text === 'fail') throw new Error('it broke')
      if (text === 'json') return { ok: true }
      if (text === 'nothing') return undefined
      return `done:${text}`
    },
    { keepResultMs: 60000, maxAttempts: 1, idleMaxMs: 20 }
  )
  const running = worker.run()
  try {
    assert.equal((await waiting).toString(), 'done:a')
    assert.equal((await client.waitForResult(q, js, 20000)).toString(), '{"ok":true}')
    assert.equal((await client.waitForResult(q, empty, 20000)).length, 0)
    await assert.rejects(client.waitForResult(q, dead, 20000), (e) => {
      assert.equal(e.code, 'EMQ_JOB_DEAD')
      assert.equal(e.lastError, 'it broke')
      return true
    })
  } finally {
    await worker.close()
    await running
  }
  assert.equal(await raw('EXISTS', row(q, ok)), 0)
  assert.equal(await raw('GET', `${row(q, ok)}:result`), 'done:a')
  const ttl = Number(await raw('PTTL', `${row(q, ok)}:result`))
  const logTtl = Number(await raw('PTTL', `${row(q, ok)}:logs`))
  assert.ok(ttl > 50000 && ttl <= 60000, `${ttl}`)
  assert.ok(logTtl > 50000 && logTtl <= 60000, `${logTtl}`)
  assert.deepEqual(await client.logs(q, ok), ['working'])
  assert.equal((await client.result(q, ok)).toString(), 'done:a')
  const info = await client.job(q, dead)
  assert.deepEqual([info.state, info.progress], ['dead', 50])
  assert.equal(await client.result(q, dead), null)
  await assert.rejects(client.waitForResult(q, emq.mintJobId(), 5000), { code: 'EMQ_GONE' })
})

test('without keepResultMs nothing is kept and waiting on a pending job times out', async () => {
  const q = uniqueQueue('nokeep')
  const { id } = await client.enqueue(q, 'a')
  await client.log(q, id, 'one')
  const worker = new emq.Worker(client, q, async () => 'dropped', { idleMaxMs: 20 })
  const running = worker.run()
  assert.equal((await client.waitFor(q, id, 20000)).state, 'completed')
  await worker.close()
  await running
  assert.equal(await raw('EXISTS', `${row(q, id)}:logs`, `${row(q, id)}:result`), 0)
  assert.equal(await client.result(q, id), null)
  const idle = uniqueQueue('idle')
  const pending = (await client.enqueue(idle, 'p')).id
  await assert.rejects(client.waitForResult(idle, pending, 300), { code: 'EMQ_TIMEOUT' })
})
