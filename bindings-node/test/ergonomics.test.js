// Issue #17's Node shapes: queue handles, option objects, job.attempts,
// connect() without a URL, unknown row states, the handler's AbortSignal,
// Symbol.asyncDispose, SIGTERM handling and the one Node version.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { startRedis, hash, waitFor, uniqueQueue } = require('./helpers')
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

const FAST = { pumpIntervalMs: 50, idleMaxMs: 20 }

test('a queue handle runs the per-queue verbs without the name', async () => {
  assert.throws(() => client.queue('no spaces'), (e) => e instanceof emq.EchoMQError && e.code === 'EMQ_INVALID_QUEUE')
  const q = client.queue(uniqueQueue('handle'))
  assert.ok(q instanceof emq.Queue)
  assert.equal(q.client, client)
  const sent = await q.enqueue('hello')
  assert.ok((await raw.cmd('ZSCORE', `emq:{${q.name}}:pending`, sent.id)) !== null)
  await q.enqueueMany(['a', 'b'])
  assert.equal((await q.counts()).pending, 3)
  await q.pause()
  assert.equal(await q.isPaused(), true)
  assert.equal(await q.claim(1000), null)
  await q.resume()
  const job = await q.claim(30_000)
  assert.equal(job.id, sent.id)
  assert.deepEqual([job.token, job.attempts], [1, 1])
  assert.equal(await q.retry(job.id, job.token, { error: 'smtp down' }), 'scheduled')
  assert.equal(hash(await raw.cmd('HGETALL', `emq:{${q.name}}:job:${job.id}`)).last_error, 'smtp down')
  assert.equal(await q.promote(), 1)
  const again = await q.claimMany(3, 30_000)
  assert.equal(again.find((j) => j.id === sent.id).attempts, 2)
  assert.equal((await q.browse('active', { limit: 2 })).length, 2)
  await q.completeMany(again)
  const c = await q.counts()
  assert.deepEqual([c.pending, c.active, c.completed], [0, 0, 3])
})

test('enqueue options: a time, a delay, a chosen id; both times refused before the wire', async () => {
  const q = client.queue(uniqueQueue('opts'))
  const at = Date.UTC(2100, 0, 1)
  const e = await q.enqueue('x', { runAtMs: at })
  assert.equal(Number(await raw.cmd('ZSCORE', `emq:{${q.name}}:schedule`, e.id)), at)
  const id = emq.mintJobId()
  const first = await q.enqueue('y', { id, delayMs: 60_000 })
  assert.deepEqual([first.id, first.duplicate], [id, false])
  assert.equal((await q.enqueue('z', { id })).duplicate, true)
  for (const bad of [{ runAtMs: 1, delayMs: 1 }, { delay: 5 }, { delayMs: -1 }]) {
    await assert.rejects(q.enqueue('w', bad), (err) => err.code === 'EMQ_INVALID_ARGUMENT')
  }
  assert.equal(await raw.cmd('ZCARD', `emq:{${q.name}}:schedule`), 2)
  assert.deepEqual(await client.browse(q.name, 'schedule', { limit: 1 }), await client.browse(q.name, 'schedule', false, 1))
})

test('retry options default to the core (max attempts 5); the positional form stays', async () => {
  const q = client.queue(uniqueQueue('retry'))
  await q.enqueue('x')
  for (let attempt = 1; attempt <= 5; attempt++) {
    await q.promote()
    const job = await q.claim(30_000)
    assert.equal(job.attempts, attempt)
    assert.equal(await client.retry(q.name, job.id, job.token), attempt < 5 ? 'scheduled' : 'dead')
  }
  assert.equal((await q.counts()).dead, 1)
  await q.enqueue('y')
  const job = await q.claim(30_000)
  assert.equal(await client.retry(q.name, job.id, job.token, 0, 1, 'positional'), 'dead')
})

test('job() reads a state another runtime wrote as unknown, with the word', async () => {
  const q = client.queue(uniqueQueue('flows'))
  const id = emq.mintJobId()
  await raw.cmd('HSET', `emq:{${q.name}}:job:${id}`, 'state', 'awaiting_children', 'attempts', '0', 'payload', 'p')
  const row = await q.job(id)
  assert.deepEqual([row.state, row.rawState, row.payload.toString()], ['unknown', 'awaiting_children', 'p'])
  const known = await q.enqueue('k')
  const krow = await q.job(known.id)
  assert.deepEqual([krow.state, krow.rawState], ['pending', 'pending'])
})

test('connect() without a URL reads EMQ_URL; connect(options) too', async () => {
  const before = process.env.EMQ_URL
  process.env.EMQ_URL = server.url
  try {
    const q = uniqueQueue('envurl')
    const a = await emq.connect()
    await a.enqueue(q, 'x')
    const b = await emq.connect({ clientName: 'from-env' })
    assert.equal((await b.counts(q)).pending, 1)
    await a.close()
    await b.close()
  } finally {
    if (before === undefined) delete process.env.EMQ_URL
    else process.env.EMQ_URL = before
  }
})

test('the handler signal aborts on a lost lease (EMQ_LEASE_LOST)', async () => {
  const q = client.queue(uniqueQueue('leaselost'))
  const e = await q.enqueue('x')
  let reason = null
  let started = false
  const worker = q.worker(
    async (job, signal) => {
      assert.ok(signal instanceof AbortSignal)
      if (job.attempts > 1) return // the re-run after the reap
      started = true
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
      reason = signal.reason
    },
    { ...FAST, concurrency: 1, prefetch: 0, leaseMs: 900, pumpIntervalMs: 10_000 }
  )
  const running = worker.run()
  await waitFor(() => started, 10_000, 'handler started')
  // Another party takes the job back: its lease "lapsed" and a reaper ran.
  await raw.cmd('ZADD', `emq:{${q.name}}:active`, '0', e.id)
  assert.equal(await q.reap(), 1)
  await waitFor(() => reason !== null, 10_000, 'signal aborted')
  assert.ok(reason instanceof emq.EchoMQError)
  assert.equal(reason.code, 'EMQ_LEASE_LOST')
  await worker.close()
  await running
})

test('close() aborts running handlers (EMQ_CLOSED); Symbol.asyncDispose closes worker and client', async () => {
  const own = await emq.connect(server.url)
  const q = own.queue(uniqueQueue('dispose'))
  await q.enqueue('x')
  let started = false
  let reason = null
  const worker = q.worker(
    async (job, signal) => {
      started = true
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
      reason = signal.reason
    },
    { ...FAST, concurrency: 1, shutdownGraceMs: 20_000 }
  )
  const running = worker.run()
  await waitFor(() => started, 10_000, 'handler started')
  const t0 = Date.now()
  await worker[Symbol.asyncDispose]()
  await running
  assert.ok(Date.now() - t0 < 10_000, 'the aborted handler ended long before the grace period')
  assert.equal(reason.code, 'EMQ_CLOSED')
  assert.equal((await q.counts()).completed, 1)
  await own[Symbol.asyncDispose]()
  await assert.rejects(q.counts(), (err) => err.code === 'EMQ_CLOSED')
})

function runFixture(q, signals) {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'sigterm-worker.js'), server.url, q, signals], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return { child, exited, out: () => out }
}

test('SIGTERM closes a running worker gracefully; handleSignals: false opts out', async () => {
  const q = uniqueQueue('sigterm')
  const e = await client.enqueue(q, 'x')
  const graceful = runFixture(q, 'on')
  await waitFor(() => graceful.out().includes('started'), 20_000, 'fixture started')
  graceful.child.kill('SIGTERM')
  const end = await graceful.exited
  assert.deepEqual(end, { code: 0, signal: null }, graceful.out())
  assert.match(graceful.out(), /attempt 1\naborted EMQ_CLOSED\ndrained\n/)
  assert.deepEqual(await raw.cmd('HGETALL', `emq:{${q}}:job:${e.id}`), []) // completed

  const q2 = uniqueQueue('sigterm-off')
  await client.enqueue(q2, 'y')
  const opted = runFixture(q2, 'off')
  await waitFor(() => opted.out().includes('started'), 20_000, 'fixture started')
  opted.child.kill('SIGTERM')
  assert.deepEqual(await opted.exited, { code: null, signal: 'SIGTERM' })
  assert.doesNotMatch(opted.out(), /drained/)
})

test('one Node version everywhere: engines, README, docs/NODE.md, and the one running', () => {
  const root = join(__dirname, '..')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const major = Number(/^>=(\d+)$/.exec(pkg.engines.node)[1])
  assert.equal(major, 20)
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), new RegExp(`Node\\.js ${major} or later`))
  assert.match(readFileSync(join(root, '..', 'docs', 'NODE.md'), 'utf8'), new RegExp(`Node\\.js ${major} or later`))
  assert.ok(Number(process.versions.node.split('.')[0]) >= major, `tested on ${process.version}`)
})
