// Issue #13 from Node, the same scenarios as core/tests/job_features.rs: wire
// 2.0.0 vs 2.1.0, the stall cap (a worker process SIGKILLed three times on one
// job) and deduplication (50 concurrent producers, one job).
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { join } = require('node:path')
const { startRedis, rawClient, hash, waitFor, uniqueQueue } = require('./helpers')
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

async function rejectsWith(promise, code) {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e) => e
  )
  assert.ok(err instanceof emq.EchoMQError, String(err))
  assert.equal(err.code, code, err.message)
  return err
}

test('wire 2.0.0: fenced at 2.0.0, 2.1.0 verbs reject EMQ_UNSUPPORTED before any I/O', async () => {
  const url = `${server.url}6`
  const old = await emq.connect(url, { wireVersion: 'echomq:2.0.0' })
  const db6 = await rawClient(server.port)
  await db6.cmd('SELECT', '6')
  try {
    assert.equal(await db6.cmd('GET', '{emq}:version'), 'echomq:2.0.0')
    const e = await rejectsWith(old.reapStalled('q', 10, 2), ErrorCode.UNSUPPORTED)
    assert.equal(e.status, 17)
    await rejectsWith(old.enqueue('q', 'x', { dedupId: 'd' }), ErrorCode.UNSUPPORTED)
    assert.equal(await db6.cmd('EXISTS', 'emq:{q}:pending'), 0)
    await old.enqueue('q', 'plain')
    const fence = await rejectsWith(emq.connect(url), ErrorCode.VERSION_FENCE)
    assert.equal(fence.found, 'echomq:2.0.0')
    await rejectsWith(emq.connect(url, { wireVersion: 'echomq:7.0.0' }), ErrorCode.INVALID_ARGUMENT)
    await old.close()
  } finally {
    await db6.cmd('FLUSHDB')
    db6.close()
  }
})

test('reapStalled: a stall is counted, the cap dead-letters with lastError stalled', async () => {
  const q = uniqueQueue('stall')
  const e = await client.enqueue(q, 'poison')
  // A 1 ms lease lapses once the server's clock passes its deadline (the
  // job's score in active): wait for that state, not for a number of ms.
  const lapsed = async () => {
    const deadline = Number(await raw.cmd('ZSCORE', `emq:{${q}}:active`, e.id))
    await waitFor(async () => {
      const [s, us] = await raw.cmd('TIME')
      return Number(s) * 1000 + Math.floor(Number(us) / 1000) > deadline
    }, 10000, 'the lease deadline to pass')
  }
  const first = await client.claim(q, 1)
  await lapsed()
  assert.deepEqual(await client.reapStalled(q, 100, 2), { recovered: [e.id], dead: [] })
  assert.equal(hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`)).stalled, '1')
  await client.claim(q, 1)
  await lapsed()
  assert.deepEqual(await client.reapStalled(q, 100, 2), { recovered: [], dead: [e.id] })
  const row = hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`))
  assert.equal(row.state, 'dead')
  assert.equal(row.last_error, 'stalled')
  await rejectsWith(client.complete(q, e.id, first.token), ErrorCode.STALE)
})

test('a poison job killing its worker process three times ends dead, stalled', async () => {
  const q = uniqueQueue('poison')
  const e = await client.enqueue(q, 'kills its worker')
  const spawnWorker = () =>
    spawn(process.execPath, [join(__dirname, 'fixtures', 'hang-worker.js'), server.url, q, '300', '3'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  const row = async () => hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`))
  for (const attempt of [1, 2, 3]) {
    const child = spawnWorker()
    await waitFor(async () => {
      const r = await row()
      return r.state === 'active' && r.attempts === String(attempt)
    }, 30000, `claim ${attempt} by a fresh worker`)
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
  }
  const last = spawnWorker()
  try {
    await waitFor(async () => (await row()).state === 'dead', 30000, 'the poison job is dead')
  } finally {
    last.kill('SIGKILL')
    await new Promise((r) => last.once('exit', r))
  }
  const r = await row()
  assert.equal(r.last_error, 'stalled')
  assert.equal(r.stalled, '3')
  assert.deepEqual(await raw.cmd('ZRANGE', `emq:{${q}}:dead`, '0', '-1'), [e.id])
})

test('50 concurrent producers with one dedup id create one job', async () => {
  const q = uniqueQueue('dedup')
  const producers = await Promise.all(Array.from({ length: 50 }, () => emq.connect(server.url)))
  const answers = await Promise.all(producers.map((c, i) => c.enqueue(q, `from ${i}`, { dedupId: 'order-42' })))
  const created = answers.filter((a) => !a.duplicate)
  assert.equal(created.length, 1)
  assert.ok(answers.every((a) => a.id === created[0].id))
  assert.deepEqual(await raw.cmd('ZRANGE', `emq:{${q}}:pending`, '0', '-1'), [created[0].id])
  assert.equal(await raw.cmd('GET', `emq:{${q}}:de:order-42`), created[0].id)
  await Promise.all(producers.map((c) => c.close()))
})

test('a dedup id is released by complete, and by its TTL in throttle mode', async () => {
  const q = uniqueQueue('dedup-release')
  const a = await client.enqueue(q, 'a', { dedupId: 'd' })
  assert.equal((await client.enqueue(q, 'b', { dedupId: 'd' })).id, a.id)
  const job = await client.claim(q, 60000)
  await client.complete(q, job.id, job.token)
  const b = await client.enqueue(q, 'c', { dedupId: 'd' })
  assert.equal(b.duplicate, false)
  assert.notEqual(b.id, a.id)
  const t = await client.enqueue(q, 't', { dedupId: 'throttle', dedupTtlMs: 100 })
  // The throttle window ends when the server expires the dedup key.
  await waitFor(async () => (await raw.cmd('EXISTS', `emq:{${q}}:de:throttle`)) === 0, 10000, 'the dedup key to expire')
  assert.notEqual((await client.enqueue(q, 't', { dedupId: 'throttle', dedupTtlMs: 100 })).id, t.id)
  await rejectsWith(client.enqueue(q, 'x', { dedupId: 'a b' }), ErrorCode.INVALID_ARGUMENT)
  await rejectsWith(client.enqueue(q, 'x', { dedupID: 'typo' }), ErrorCode.INVALID_ARGUMENT)
})

test('limits are enforced inside the claim, EMQRATE carries retryAfterMs', async () => {
  const q = uniqueQueue('limits')
  for (let i = 0; i < 5; i++) await client.enqueue(q, String(i))
  await client.setConcurrency(q, 2)
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:meta`, 'concurrency'), '2')
  const held = await client.claimMany(q, 5, 60000)
  assert.equal(held.length, 2)
  let e = await rejectsWith(client.claim(q, 60000), ErrorCode.RATE_LIMITED)
  assert.equal(e.retryAfterMs, 0)
  assert.equal(e.status, 18)
  await client.setConcurrency(q, 0)
  await client.setRateLimit(q, 2, 60000)
  assert.equal((await client.claimMany(q, 5, 60000)).length, 2)
  assert.equal(await raw.cmd('GET', `emq:{${q}}:limiter`), '2')
  e = await rejectsWith(client.claim(q, 60000), ErrorCode.RATE_LIMITED)
  assert.ok(e.retryAfterMs > 50000 && e.retryAfterMs <= 60000, String(e.retryAfterMs))
  await client.setRateLimit(q, 0, 0)
  const job = held[0]
  await client.rateLimit(q, job.id, job.token, 300)
  const row = hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${job.id}`))
  assert.equal(row.state, 'scheduled')
  assert.equal(row.attempts, '0')
  await rejectsWith(client.claim(q, 60000), ErrorCode.RATE_LIMITED)
  await rejectsWith(client.complete(q, job.id, job.token), ErrorCode.STALE)
})

test('a rate limit holds for a worker', async () => {
  const q = uniqueQueue('rated')
  await client.setRateLimit(q, 20, 500)
  await client.enqueueMany(q, Array.from({ length: 200 }, (_, i) => String(i)))
  const worker = new emq.Worker(client, q, async () => {}, { concurrency: 20, idleMaxMs: 10 })
  const started = Date.now()
  const run = worker.run()
  // The window's counter never passes the limit while three windows' worth is
  // claimed (however long a loaded host takes for it).
  let claimed, elapsed
  try {
    await waitFor(async () => {
      assert.ok(Number((await raw.cmd('GET', `emq:{${q}}:limiter`)) ?? 0) <= 20)
      return worker.stats().claimed >= 60
    }, 120000, 'three windows of claims')
    claimed = worker.stats().claimed
    elapsed = Date.now() - started
  } finally {
    await worker.close()
    await run
  }
  // A window starts at a claim and lasts 500 ms: at most elapsed / 500 + 1 of
  // them began (an upper bound from the measured time, not a speed claim).
  const windows = Math.floor(elapsed / 500) + 1
  assert.ok(claimed <= 20 * windows, `claimed ${claimed} in ${elapsed} ms`)
})

// Issue #33: the same scenario as the C, C++ and Python suites. The wait lies
// between the limiter's PTTL read just before and just after the refused claim;
// the job id of a dead and a gone job is a property, never read from a message.
test('error facts: retryAfterMs and jobId are properties, from the core table', async () => {
  const q = uniqueQueue('facts')
  const a = (await client.enqueue(q, 'a')).id
  const b = (await client.enqueue(q, 'b')).id
  await client.setRateLimit(q, 1, 600000)
  const job = await client.claim(q, 60000)
  assert.equal(job.id, a)
  const before = Number(await raw.cmd('PTTL', `emq:{${q}}:limiter`))
  const rate = await rejectsWith(client.claim(q, 60000), ErrorCode.RATE_LIMITED)
  const after = Number(await raw.cmd('PTTL', `emq:{${q}}:limiter`))
  assert.ok(after > 500000 && after <= rate.retryAfterMs && rate.retryAfterMs <= before,
    `${after} <= ${rate.retryAfterMs} <= ${before}`)
  assert.equal('jobId' in rate, false)
  await client.setRateLimit(q, 0, 0)

  assert.equal(await client.retry(q, a, job.token, { maxAttempts: 1, error: 'boom' }), 'dead')
  assert.equal(await raw.cmd('HGET', `emq:{${q}}:job:${a}`, 'state'), 'dead')
  const dead = await rejectsWith(client.waitForResult(q, a, 20000), ErrorCode.JOB_DEAD)
  assert.deepEqual([dead.jobId, dead.id, dead.lastError], [a, a, 'boom'])

  await client.remove(q, b)
  assert.equal(Number(await raw.cmd('EXISTS', `emq:{${q}}:job:${b}`)), 0)
  const gone = await rejectsWith(client.waitForResult(q, b, 20000), ErrorCode.GONE)
  assert.equal(gone.jobId, b)
  const refused = await rejectsWith(client.updateProgress(q, b, 1, 1), ErrorCode.GONE)
  assert.equal(refused.jobId, b)

  // Every kind's declared facts are properties of its errors, and only those.
  const facts = Object.fromEntries(emq.errorKinds().map((k) => [k.code, k.facts]))
  assert.deepEqual(facts.EMQRATE, ['retryAfterMs'])
  assert.deepEqual(facts.EMQ_JOB_DEAD, ['jobId', 'lastError'])
  for (const [err, code] of [[rate, 'EMQRATE'], [dead, 'EMQ_JOB_DEAD'], [gone, 'EMQ_GONE']]) {
    for (const fact of facts[code]) assert.ok(fact in err, `${code} lacks ${fact}`)
  }
})
