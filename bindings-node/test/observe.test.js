// Observability through Node (issue #12): core log records in a handler, the
// Worker's events, queue event subscriptions (EventEmitter and async
// iterator), waitFor, metricsText + the prom-client hook, and the
// cross-runtime checks against a Python process (EMQ_TEST_PYTHON).
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { startRedis, sleep, waitFor, uniqueQueue } = require('./helpers')
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

const FAST = { leaseMs: 2000, maxAttempts: 2, pumpIntervalMs: 20, idleMaxMs: 20, backoff: 'fixed', backoffBaseMs: 10, backoffCapMs: 10 }

test('core log records reach setLogHandler; an error event with no listener does not crash', async () => {
  const own = await startRedis()
  const records = []
  emq.setLogHandler((r) => records.push(r))
  const c = await emq.connect(own.url, { connectTimeoutMs: 300, responseTimeoutMs: 500 })
  const q = uniqueQueue('logs')
  const worker = new emq.Worker(c, q, async () => {}, FAST)
  worker.on('completed', () => {}) // listening, but not to 'error'
  const running = worker.run()
  await sleep(200)
  await own.stop()
  try {
    const rec = await waitFor(() => records.find((r) => r.message.includes(`claim on ${q} failed`)), 20000, 'claim warning')
    assert.equal(rec.level, 'warn')
    assert.match(rec.target, /^echomq::worker/)
  } finally {
    emq.setLogHandler(null)
    await worker.close()
    await running
    await c.close()
  }
  assert.throws(() => emq.setLogHandler('nope'), { code: emq.ErrorCode.INVALID_ARGUMENT })
  assert.throws(() => emq.setLogHandler(null, 'loud'), { code: emq.ErrorCode.INVALID_ARGUMENT })
})

test('worker events: completed, failed then retried, dead, lease lost, drained, closed', async () => {
  const q = uniqueQueue('wev')
  const ids = {}
  for (const p of ['ok', 'flaky', 'doomed', 'lost']) ids[p] = (await client.enqueue(q, p)).id
  const worker = new emq.Worker(
    client,
    q,
    async (job) => {
      const p = job.payload.toString()
      if (p === 'flaky' && job.token === 1) throw new Error('try again')
      if (p === 'doomed') throw new emq.UnrecoverableError('never')
      if (p === 'lost') await raw.cmd('HINCRBY', `emq:{${q}}:job:${job.id}`, 'attempts', '1')
    },
    FAST
  )
  const events = []
  for (const name of ['active', 'completed', 'failed', 'dead', 'leaseLost', 'drained', 'closed']) {
    worker.on(name, (e) => events.push(e))
  }
  const errors = []
  worker.on('error', (e) => errors.push(e))
  const running = worker.run()
  await waitFor(() => {
    const s = worker.stats()
    return s.completed >= 2 && s.dead >= 1 && s.leaseLost >= 1
  })
  await worker.close()
  await running
  await waitFor(() => events.length && events[events.length - 1].name === 'closed', 5000, 'closed')
  const find = (name, id, want = {}) => {
    const e = events.find((e) => e.name === name && e.id === id && Object.entries(want).every(([k, v]) => e[k] === v))
    assert.ok(e, `${name} ${JSON.stringify(want)} for ${id}: ${JSON.stringify(events)}`)
    return e
  }
  find('active', ids.ok, { token: 1 })
  assert.ok(find('completed', ids.ok, { token: 1 }).durationMs >= 0)
  find('failed', ids.flaky, { token: 1, error: 'try again', retryInMs: 10 })
  find('completed', ids.flaky, { token: 2 })
  find('failed', ids.doomed, { retryInMs: null, error: 'never' })
  find('dead', ids.doomed, { error: 'never' })
  find('leaseLost', ids.lost, { token: 1 })
  assert.ok(events.some((e) => e.name === 'drained'))
  assert.ok(!events.some((e) => e.name === 'completed' && e.id === ids.lost))
  assert.deepEqual(errors, [])
})

test('a subscription is an EventEmitter and an async iterator of queue events', async () => {
  const q = uniqueQueue('sub')
  const sub = await client.subscribe(q)
  const seen = []
  sub.on('event', (e) => seen.push(e))
  const completed = new Promise((resolve) => sub.once('completed', resolve))
  const id = (await client.enqueue(q, 'x')).id
  const job = await client.claim(q, 5000)
  await client.complete(q, job.id, job.token)
  const done = await completed
  assert.equal(done.job, id)
  assert.deepEqual(done.fields, { token: '1' })
  assert.deepEqual(seen.map((e) => e.event), ['added', 'active', 'completed'])

  const iterated = []
  const reading = (async () => {
    for await (const e of sub) {
      iterated.push(e.event)
      if (e.event === 'dead') break // `break` closes the subscription
    }
  })()
  const dead = (await client.enqueue(q, 'd')).id
  const held = await client.claim(q, 5000)
  await client.retry(q, dead, held.token, 0, 1, 'boom')
  await reading
  assert.deepEqual(iterated, ['added', 'active', 'dead'])
  await sub.close() // idempotent
})

test('waitFor answers completed and dead; a pending job times out', async () => {
  const q = uniqueQueue('wait')
  const id = (await client.enqueue(q, 'w')).id
  const waiting = client.waitFor(q, id, 10000)
  await sleep(50)
  const job = await client.claim(q, 5000)
  await client.complete(q, id, job.token)
  assert.deepEqual(await waiting, { state: 'completed', error: null })
  const dead = (await client.enqueue(q, 'd')).id
  const held = await client.claim(q, 5000)
  await client.retry(q, dead, held.token, 0, 1, 'no')
  assert.deepEqual(await client.waitFor(q, dead, 1000), { state: 'dead', error: 'no' })
  const pending = (await client.enqueue(q, 'p')).id
  await assert.rejects(client.waitFor(q, pending, 200), { code: emq.ErrorCode.TIMEOUT })
})

test('publishEvents: false publishes nothing', async () => {
  const q = uniqueQueue('quiet')
  const quiet = await emq.connect(server.url, { publishEvents: false })
  const sub = await client.subscribe(q)
  const seen = []
  sub.on('event', (e) => seen.push(e))
  await quiet.enqueue(q, 'x')
  // close() publishes whatever was queued before it; then a loud client's
  // write is the positive control: its `added` must be the first event seen
  // (a broken subscription, or a quiet client that talked, fails here).
  await quiet.close()
  const loud = await client.enqueue(q, 'loud')
  await waitFor(() => seen.length > 0, 10000, 'the loud event')
  assert.deepEqual([seen[0].event, seen[0].job], ['added', loud.id])
  await sub.close()
})

const PRODUCER = `
const emq = require(process.argv[1])
const [url, queue, how] = process.argv.slice(2)
;(async () => {
  const client = await emq.connect(url)
  const batch = Array(50).fill('x')
  await Promise.all(Array.from({ length: 40 }, () => client.enqueueMany(queue, batch)))
  if (how === 'await') await client.close()
  else client.close() // not awaited: the pending close keeps the process alive
})()
`

for (const how of ['await', 'no-await']) {
  test(`a producer that closes (${how}) and exits publishes every added`, async () => {
    const q = uniqueQueue('close')
    const sub = await client.subscribe(q)
    let added = 0
    sub.on('added', () => added++)
    const child = spawn(process.execPath, ['-e', PRODUCER, require.resolve('..'), server.url, q, how], { stdio: 'inherit' })
    const code = await new Promise((resolve) => child.on('exit', resolve))
    assert.equal(code, 0)
    await waitFor(() => added >= 2000, 5000).catch(() => {})
    await sleep(200)
    assert.equal(added, 2000)
    await sub.close()
  })
}

test('metricsText equals counts; promClientCollector fills a prom-client registry', async () => {
  const q = uniqueQueue('metrics')
  for (const p of ['a', 'b', 'bad']) await client.enqueue(q, p)
  await client.enqueue(q, 'later', { delayMs: 60000 })
  const worker = new emq.Worker(client, q, async (job) => {
    if (job.payload.toString() === 'bad') throw new emq.UnrecoverableError('bad')
  }, FAST)
  const running = worker.run()
  await waitFor(() => worker.stats().completed >= 2 && worker.stats().dead >= 1)
  await worker.close()
  await running
  await client.enqueue(q, 'waiting')
  const { parseSamples } = require('../prom.js')
  const samples = parseSamples(await client.metricsText([q]))
  const value = (name) => samples.find((s) => s.name === name && s.labels.queue === q).value
  const counts = await client.counts(q)
  assert.equal(value('echomq_pending_jobs'), counts.pending)
  assert.equal(value('echomq_active_jobs'), counts.active)
  assert.equal(value('echomq_scheduled_jobs'), counts.scheduled)
  assert.equal(value('echomq_dead_jobs'), counts.dead)
  assert.equal(value('echomq_completed_total'), counts.completed)
  assert.equal(value('echomq_failed_total'), counts.failed)
  assert.deepEqual([counts.pending, counts.completed, counts.failed], [1, 2, 1])
  assert.equal(value('echomq_worker_processed_total'), 3)
  assert.equal(value('echomq_worker_handler_duration_seconds_count'), 3)
  await assert.rejects(client.metricsText(['bad queue']), { code: emq.ErrorCode.INVALID_QUEUE })

  const promClient = require('prom-client')
  const registry = new promClient.Registry()
  emq.promClientCollector(promClient, client, [q], { registry })
  const text = await registry.metrics()
  assert.match(text, new RegExp(`echomq_pending_jobs\\{queue="${q}"\\} 1`))
  assert.match(text, new RegExp(`echomq_completed_total\\{queue="${q}"\\} 2`))
})

// ---- across runtimes (the lead's test command sets EMQ_TEST_PYTHON) ----------------

const PY = process.env.EMQ_TEST_PYTHON
const crossRuntime = PY ? test : test.skip

/** Run a Python snippet; resolves to {code, stdout, stderr}. */
function python(source, args, onLine) {
  return new Promise((resolve) => {
    const proc = spawn(PY, ['-c', source, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => {
      stdout += d
      if (onLine) for (const line of d.toString().split('\n').filter(Boolean)) onLine(line, proc)
    })
    proc.stderr.on('data', (d) => (stderr += d))
    proc.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

const PY_WORKER = `
import sys, echomq
url, queue = sys.argv[1], sys.argv[2]
def handler(job):
    if job.payload == b"bad":
        raise echomq.Unrecoverable("bad from python")
worker = echomq.Worker(echomq.connect(url), queue, handler, idle_max_ms=20)
print("ready", flush=True)
worker.run()
`

crossRuntime('a Node subscriber and waitFor follow jobs a Python worker processes', async () => {
  const q = uniqueQueue('x-py')
  const sub = await client.subscribe(q)
  const seen = []
  sub.on('event', (e) => seen.push(`${e.event} ${e.job}`))
  const ok = (await client.enqueue(q, 'ok')).id
  const bad = (await client.enqueue(q, 'bad')).id
  let proc
  const exited = python(PY_WORKER, [server.url, q], (line, p) => (proc = p))
  const settled = await client.waitFor(q, ok, 30000)
  assert.deepEqual(settled, { state: 'completed', error: null })
  assert.deepEqual(await client.waitFor(q, bad, 30000), { state: 'dead', error: 'bad from python' })
  await waitFor(() => proc)
  proc.kill('SIGTERM')
  const { code, stderr } = await exited
  assert.equal(code, 0, stderr)
  for (const want of [`added ${ok}`, `active ${ok}`, `completed ${ok}`, `active ${bad}`, `dead ${bad}`]) {
    assert.ok(seen.includes(want), `${want} in ${seen}`)
  }
  await sub.close()
})

const PY_SUBSCRIBER = `
import sys, echomq
url, queue, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with echomq.connect(url).subscribe(queue) as sub:
    print("subscribed", flush=True)
    for i, e in enumerate(sub):
        print(e.event, e.job, e.fields.get("error", ""), flush=True)
        if i + 1 == n:
            break
`

crossRuntime('a Python subscriber follows jobs a Node worker processes', async () => {
  const q = uniqueQueue('x-node')
  let subscribed
  const ready = new Promise((r) => (subscribed = r))
  // added x2, active x2, completed, dead
  const exited = python(PY_SUBSCRIBER, [server.url, q, '6'], (line) => line === 'subscribed' && subscribed())
  await ready
  const ok = (await client.enqueue(q, 'ok')).id
  const bad = (await client.enqueue(q, 'bad')).id
  const worker = new emq.Worker(client, q, async (job) => {
    if (job.payload.toString() === 'bad') throw new emq.UnrecoverableError('bad from node')
  }, FAST)
  const running = worker.run()
  const { code, stdout, stderr } = await exited
  await worker.close()
  await running
  assert.equal(code, 0, stderr)
  const lines = stdout.split('\n').filter((l) => l && l !== 'subscribed')
  for (const want of [`added ${ok} `, `added ${bad} `, `active ${ok} `, `completed ${ok} `, `dead ${bad} bad from node`]) {
    assert.ok(lines.includes(want), `${JSON.stringify(want)} in ${JSON.stringify(lines)}`)
  }
})
