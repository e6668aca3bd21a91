// Issue #11 from Node: documented defaults equal the core's, out-of-range
// options and closed clients answer coded errors, a panicking core future
// rejects (and the process still exits), passwords never reach an error.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')
const { startRedis, uniqueQueue, PKG, sleep, waitFor } = require('./helpers')
const emq = require('..')

let server
before(async () => {
  server = await startRedis()
})
after(async () => {
  if (server) await server.stop()
})

test('the defaults documented in index.d.ts equal the core defaults', () => {
  const dts = readFileSync(join(PKG, 'index.d.ts'), 'utf8')
  const core = emq.defaults()
  const documented = {}
  // "/** ... Default 30000. */\n  leaseMs?: number"
  for (const m of dts.matchAll(/Default (\d+)[.;][^\n]*\*\/\s*\n\s*(\w+)\?:/g)) {
    documented[m[2]] = Number(m[1])
  }
  const names = Object.keys(documented).filter((k) => k in core)
  assert.ok(names.length >= 9, JSON.stringify(documented))
  for (const name of names) assert.equal(documented[name], core[name], name)
  assert.equal(core.backoff, 'exponential')
  assert.equal(core.maxPayload, 16 * 1024 * 1024)
})

test('out-of-range worker options are refused with EMQ_INVALID_ARGUMENT', async () => {
  const client = await emq.connect(server.url)
  const q = uniqueQueue()
  for (const [option, value] of [
    ['concurrency', 2 ** 40],
    ['leaseMs', 2 ** 52],
    ['idleMaxMs', 2 ** 50],
    ['prefetch', 2 ** 33],
    ['handlerBatch', 0],
    ['maxAttempts', 2 ** 40],
    ['concurrency', -1],
  ]) {
    assert.throws(
      () => new emq.Worker(client, q, async () => {}, { [option]: value }),
      (e) => e instanceof emq.EchoMQError && e.code === emq.ErrorCode.INVALID_ARGUMENT,
      option
    )
  }
  await client.close()
})

test('a closed client ends a running worker with EMQ_CLOSED', async () => {
  const client = await emq.connect(server.url)
  const worker = new emq.Worker(client, uniqueQueue(), async () => {}, { idleMaxMs: 20 })
  const running = worker.run()
  setTimeout(() => client.close(), 100)
  await assert.rejects(running, (e) => e.code === emq.ErrorCode.CLOSED)
  await assert.rejects(client.bundleMismatches(), (e) => e.code === emq.ErrorCode.CLOSED)
})

test('a core future that panics rejects with EMQ_INTERNAL and the process exits', async () => {
  const program = `
    const native = require(${JSON.stringify(join(PKG, 'native.js'))}).load()
    native._panicInCoreForTests().then(
      () => { console.log('resolved'); },
      (e) => { console.log('rejected ' + e.code + ' ' + e.message) })
  `
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', program])
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('the process did not exit: the Promise kept it alive'))
    }, 15000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout })
    })
  })
  assert.equal(out.code, 0)
  assert.match(out.stdout, /^rejected EMQ_INTERNAL .*panicked/)
})

test('connect errors never show the password (message and stack)', async () => {
  for (const url of [
    'redis://user:secret@127.0.0.1:notaport/',
    'redis://user:secret@127.0.0.1:6379/notadb',
    'http://user:secret@127.0.0.1/',
    'redis+unix://user:secret@/x.sock',
  ]) {
    const err = await emq.connect(url).then(
      () => assert.fail('connected'),
      (e) => e
    )
    assert.ok(err instanceof emq.EchoMQError, url)
    for (const shown of [err.message, String(err.stack), JSON.stringify(err), String(err)]) {
      assert.ok(!shown.includes('secret'), `${url}: ${shown}`)
    }
  }
})

test('node ids outside 0..=1023 are refused with one message everywhere', async () => {
  for (const bad of [-2, 1024, 70000]) {
    assert.throws(() => emq.mintJobId(bad), /0\.\.=1023/)
    await assert.rejects(emq.connect(server.url, { nodeId: bad }), /0\.\.=1023/)
  }
})

test('worker stats count failures', async () => {
  // Real failures, as in core/tests/lifecycle.rs: the server goes away under a
  // worker holding a job, so heartbeats fail, then the job's settlement and the
  // claims for the freed slot fail too; every claim is accounted for.
  const own = await startRedis()
  const client = await emq.connect(own.url, { connectTimeoutMs: 500, responseTimeoutMs: 500 })
  const q = uniqueQueue()
  await client.enqueue(q, 'held')
  let open
  const gate = new Promise((resolve) => (open = resolve))
  const worker = new emq.Worker(client, q, () => gate, {
    concurrency: 1,
    prefetch: 0,
    leaseMs: 300,
    idleMaxMs: 20,
    shutdownGraceMs: 0,
  })
  assert.equal(worker.stats().claimFailures, 0)
  worker.on('error', () => {}) // the failures are also emitted; counted below
  const running = worker.run()
  try {
    await waitFor(() => worker.stats().claimed === 1, 60000, 'the claim')
    await own.stop()
    await waitFor(() => worker.stats().heartbeatFailures > 0, 60000, 'a failed heartbeat')
    open() // the handler ends while the server is gone
    await waitFor(() => {
      const s = worker.stats()
      return s.claimFailures > 0 && s.settleFailures > 0
    }, 60000, 'failed claims and settlement')
  } finally {
    open()
    await worker.close()
    await running
  }
  const s = worker.stats()
  assert.equal(s.claimed, s.completed + s.retried + s.dead + s.leaseLost + s.settleFailures + s.released, JSON.stringify(s))
  assert.equal(s.inFlight, 0)
  await client.close()
})

/** Kill the connection named `name` once the server holds more than `rows` keys. */
async function killAfter(raw, name, rows) {
  for (;;) {
    if (Number(await raw.cmd('DBSIZE')) > rows) {
      const list = await raw.cmd('CLIENT', 'LIST')
      for (const line of list.split('\n').filter((l) => l.includes(` name=${name} `))) {
        const id = line.split(' ').find((f) => f.startsWith('id=')).slice(3)
        await raw.cmd('CLIENT', 'KILL', 'ID', id)
      }
      return
    }
    await sleep(1)
  }
}

test('a batch cut by a dropped connection rejects with EMQ_PARTIAL_BATCH and per-item states', async () => {
  const payloads = Array.from({ length: 20000 }, () => 'x'.repeat(2000))
  for (let attempt = 0; attempt < 5; attempt++) {
    const client = await emq.connect(server.url, { clientName: 'nodevictim' })
    const q = uniqueQueue()
    const before = Number(await server.raw.cmd('DBSIZE'))
    const killer = killAfter(server.raw, 'nodevictim', before + 100)
    const outcome = await client.enqueueMany(q, payloads).then(
      () => null,
      (e) => e
    )
    await killer
    if (outcome === null) {
      await client.close()
      continue // the whole batch won the race; try again
    }
    assert.equal(outcome.code, emq.ErrorCode.PARTIAL_BATCH, String(outcome))
    assert.equal(outcome.items.length, payloads.length)
    const states = new Set(outcome.items.map((i) => i.state))
    assert.ok(states.has('written'))
    for (const s of states) assert.ok(['written', 'not_written', 'unknown'].includes(s), s)
    for (const item of outcome.items) {
      if (item.state !== 'written') await client.enqueue(q, 'x'.repeat(2000), { id: item.id })
    }
    assert.equal((await client.counts(q)).pending, payloads.length)
    await client.close()
    return
  }
  assert.fail('no batch was cut in five attempts')
})
