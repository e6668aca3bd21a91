// The worker through Node: exactly-once processing, retries to dead, lease
// renewal under a slow handler, graceful close, and a SIGKILLed worker's job
// handed to another after its lease lapses.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { join } = require('node:path')
const { startRedis, hash, sleep, waitFor, uniqueQueue } = require('./helpers')
const emq = require('..')

/** The failure counters of a run that met no transient failure. */
const NO_FAILURES = { claimFailures: 0, heartbeatFailures: 0, settleFailures: 0, released: 0 }

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

const FAST = { pumpIntervalMs: 50, idleMaxMs: 20, backoff: 'fixed', backoffBaseMs: 50 }

test('N jobs are processed exactly once by concurrent handlers', async () => {
  const q = uniqueQueue('once')
  const N = 300
  const enq = await client.enqueueMany(q, Array.from({ length: N }, (_, i) => `job-${i}`))
  const seen = new Map()
  let running = 0
  let maxRunning = 0
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      running++
      maxRunning = Math.max(maxRunning, running)
      seen.set(job.id, (seen.get(job.id) || 0) + 1)
      assert.ok(Buffer.isBuffer(job.payload))
      assert.equal(job.token, 1)
      await sleep(Math.random() * 5)
      running--
    },
    { ...FAST, concurrency: 8 }
  )
  const run = worker.run()
  await waitFor(async () => (await client.counts(q)).completed === N, 20000, 'all jobs completed')
  await worker.close()
  await run
  assert.equal(seen.size, N)
  assert.ok([...seen.values()].every((n) => n === 1), 'each job ran once')
  assert.deepEqual(new Set(seen.keys()), new Set(enq.map((v) => v.value.id)))
  assert.ok(maxRunning <= 8 && maxRunning > 1, `maxRunning=${maxRunning}`)
  const stats = worker.stats()
  assert.deepEqual(stats, { claimed: N, completed: N, retried: 0, dead: 0, leaseLost: 0, inFlight: 0, ...NO_FAILURES })
  assert.deepEqual(await client.counts(q), { pending: 0, active: 0, scheduled: 0, dead: 0, completed: N, failed: 0 })
})

test('a handler that always fails is retried, then dead with its message as last_error', async () => {
  const q = uniqueQueue('fails')
  const e = await client.enqueue(q, 'doomed')
  const tokens = []
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      tokens.push(job.token)
      throw new Error(`boom on attempt ${job.token}`)
    },
    { ...FAST, maxAttempts: 3 }
  )
  const run = worker.run()
  await waitFor(async () => (await client.counts(q)).dead === 1, 10000, 'dead-lettered')
  await worker.close()
  await run
  assert.deepEqual(tokens, [1, 2, 3])
  const row = hash(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`))
  assert.equal(row.state, 'dead')
  assert.equal(row.attempts, '3')
  assert.equal(row.last_error, 'boom on attempt 3')
  assert.deepEqual(await client.browse(q, 'dead'), [e.id])
  const stats = worker.stats()
  assert.equal(stats.retried, 2)
  assert.equal(stats.dead, 1)
  assert.equal(stats.completed, 0)
})

test('rejections, thrown non-Errors and UnrecoverableError', async () => {
  const q = uniqueQueue('kinds')
  const [a, b, c] = (await client.enqueueMany(q, ['reject', 'string', 'fatal'])).map((v) => v.value.id)
  const worker = new emq.Worker(
    client,
    q,
    (job) => {
      const kind = job.payload.toString()
      if (kind === 'reject') return Promise.reject(new TypeError('rejected promise'))
      if (kind === 'string') throw 'a bare string' // eslint-disable-line no-throw-literal
      throw new emq.UnrecoverableError('no point retrying')
    },
    { ...FAST, maxAttempts: 1 }
  )
  const run = worker.run()
  await waitFor(async () => (await client.counts(q)).dead === 3, 10000, 'three dead')
  await worker.close()
  await run
  assert.equal((await client.job(q, a)).lastError, 'rejected promise')
  assert.equal((await client.job(q, b)).lastError, 'a bare string')
  assert.equal((await client.job(q, c)).lastError, 'no point retrying')

  // UnrecoverableError skips the remaining attempts even with maxAttempts 5.
  const q2 = uniqueQueue('fatal')
  const d = await client.enqueue(q2, 'x')
  let calls = 0
  const w2 = new emq.Worker(
    client,
    q2,
    async () => {
      calls++
      throw new emq.UnrecoverableError('bad input')
    },
    { ...FAST, maxAttempts: 5 }
  )
  const run2 = w2.run()
  await waitFor(async () => (await client.counts(q2)).dead === 1, 10000, 'fatal → dead')
  await w2.close()
  await run2
  assert.equal(calls, 1)
  const info = await client.job(q2, d.id)
  assert.deepEqual([info.state, info.attempts, info.lastError], ['dead', 1, 'bad input'])
})

test('a handler 3× longer than the lease keeps its lease and completes with its token', async () => {
  const q = uniqueQueue('slow')
  const e = await client.enqueue(q, 'slow')
  const LEASE = 600
  const tokens = []
  let reaped = 0
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      tokens.push(job.token)
      await sleep(3 * LEASE)
    },
    { ...FAST, leaseMs: LEASE }
  )
  const run = worker.run()
  // Another process's reaper runs all the while: it must find nothing lapsed.
  const reaper = setInterval(() => {
    client.reap(q, 100).then((n) => (reaped += n), () => {})
  }, 50)
  await waitFor(async () => (await client.counts(q)).completed === 1, 10000, 'slow job completed')
  clearInterval(reaper)
  await worker.close()
  await run
  assert.deepEqual(tokens, [1], 'ran once, with its original token')
  assert.equal(reaped, 0)
  assert.deepEqual(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`), [])
  assert.deepEqual(worker.stats(), { claimed: 1, completed: 1, retried: 0, dead: 0, leaseLost: 0, inFlight: 0, ...NO_FAILURES })
})

test('graceful close: in-flight jobs finish, nothing is left in active', async () => {
  const q = uniqueQueue('drain')
  const N = 40
  await client.enqueueMany(q, Array.from({ length: N }, (_, i) => `d${i}`))
  let finished = 0
  const worker = new emq.Worker(
    client,
    q,
    async () => {
      await sleep(150)
      finished++
    },
    { ...FAST, concurrency: 4, shutdownGraceMs: 5000 }
  )
  const run = worker.run()
  await waitFor(() => worker.stats().inFlight > 0, 5000, 'handlers running')
  await sleep(200)
  const closing = worker.close()
  await closing
  await run
  const counts = await client.counts(q)
  assert.equal(counts.active, 0)
  assert.equal(await raw.cmd('ZCARD', `emq:{${q}}:active`), 0)
  assert.equal(worker.stats().inFlight, 0)
  assert.equal(counts.completed, finished)
  assert.equal(counts.pending + counts.completed, N)
  assert.ok(counts.pending > 0, 'it stopped claiming')
  // close() again, and close() of a worker never run, are fine.
  await worker.close()
  await new emq.Worker(client, q, async () => {}).close()
})

test('a worker SIGKILLed mid-job: another worker gets the job after the lease lapses', async () => {
  const q = uniqueQueue('killed')
  const e = await client.enqueue(q, 'survivor')
  const LEASE = 600
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'hang-worker.js'), server.url, q, String(LEASE)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const started = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /started (\S+) (\d+)/.exec(out)
      if (m) resolve({ id: m[1], token: Number(m[2]) })
    })
    child.once('exit', (code) => reject(new Error(`hang-worker exited early (${code})`)))
  })
  assert.deepEqual(started, { id: e.id, token: 1 })
  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))
  const killedAt = Date.now()
  assert.equal((await client.job(q, e.id)).state, 'active')

  const tokens = []
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      tokens.push(job.token)
    },
    { ...FAST, leaseMs: 5000 }
  )
  const run = worker.run()
  await waitFor(async () => (await client.counts(q)).completed === 1, 10000, 'job completed by the second worker')
  const tookMs = Date.now() - killedAt
  await worker.close()
  await run
  assert.deepEqual(tokens, [2])
  assert.deepEqual(await client.counts(q), { pending: 0, active: 0, scheduled: 0, dead: 0, completed: 1, failed: 0 })
  assert.ok(tookMs >= LEASE / 2, `handed over after the lease lapsed (${tookMs} ms)`)
})

test('a process running a worker exits cleanly after close()', async () => {
  const q = uniqueQueue('exit')
  const script = `
    const emq = require(${JSON.stringify(join(__dirname, '..'))})
    ;(async () => {
      const c = await emq.connect(process.env.URL)
      await c.enqueue(process.env.Q, 'x')
      let done
      const finished = new Promise((r) => (done = r))
      const w = new emq.Worker(c, process.env.Q, async () => { done() }, { idleMaxMs: 20 })
      const run = w.run()
      await finished
      await w.close()
      await run
      await c.close()
      console.log('closed ' + Date.now() + ' ' + JSON.stringify(w.stats()))
    })()
  `
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, URL: server.url, Q: q } })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('worker process did not exit'))
    }, 30000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, exitedAt: Date.now() })
    })
  })
  assert.equal(out.code, 0)
  const m = /closed (\d+) (.*)/.exec(out.stdout)
  // No handle outlives close() (a generous bound, not a speed claim).
  assert.ok(out.exitedAt - Number(m[1]) < 10000, `exited ${out.exitedAt - Number(m[1])} ms after close`)
  assert.equal(JSON.parse(m[2]).completed, 1)
})

test('handlerBatch: one crossing per batch, the batch runs concurrently, verdicts stay per job', async () => {
  const q = uniqueQueue('batch')
  const N = 8
  await client.enqueueMany(q, Array.from({ length: N }, (_, i) => `b${i}`))
  let running = 0
  let peak = 0
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      running++
      peak = Math.max(peak, running)
      await sleep(200)
      running--
      if (job.payload.toString() === 'b3') throw new emq.UnrecoverableError('b3 fails alone')
    },
    { ...FAST, concurrency: 4, handlerBatch: 4, prefetch: 0 }
  )
  const run = worker.run()
  await waitFor(() => worker.stats().completed + worker.stats().dead === N, 10000, 'all settled')
  await worker.close()
  await run
  assert.equal(peak, 4)
  assert.equal(worker.stats().completed, N - 1)
  assert.equal(worker.stats().dead, 1)
  assert.equal(await raw.cmd('ZCARD', `emq:{${q}}:dead`), 1)
  assert.equal(await raw.cmd('ZCARD', `emq:{${q}}:active`), 0)
  assert.equal(await raw.cmd('ZCARD', `emq:{${q}}:pending`), 0)
  const [deadId] = await client.browse(q, 'dead')
  assert.equal((await client.job(q, deadId)).lastError, 'b3 fails alone')
})

test('prefetch and handlerBatch are validated', async () => {
  const q = uniqueQueue('opts')
  assert.throws(() => new emq.Worker(client, q, async () => {}, { handlerBatch: 0 }), (e) => e.code === emq.ErrorCode.INVALID_ARGUMENT)
  assert.throws(() => new emq.Worker(client, q, async () => {}, { prefetch: -1 }), (e) => e.code === emq.ErrorCode.INVALID_ARGUMENT)
  await new emq.Worker(client, q, async () => {}, { prefetch: 0, handlerBatch: 16 }).close()
})
