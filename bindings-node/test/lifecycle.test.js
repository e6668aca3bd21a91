// Lifecycles: worker_threads, process exit with and without close(), ESM import.
'use strict'
const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { Worker: Thread } = require('node:worker_threads')
const { startRedis, uniqueQueue, PKG } = require('./helpers')
const emq = require('..')

let server
before(async () => {
  server = await startRedis()
})
after(async () => {
  if (server) await server.stop()
})

/** Run a node program; resolves {code, signal, stdout, stderr, exitedAt}. */
function runNode(args, { timeoutMs = 30000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`node ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`))
    }, timeoutMs)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, exitedAt: Date.now() })
    })
  })
}

test('a client works inside a worker thread, and the main thread keeps its own', async () => {
  const q = uniqueQueue('thread')
  const main = await emq.connect(server.url)
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const emq = require(workerData.pkg)
    ;(async () => {
      const c = await emq.connect(workerData.url)
      const e = await c.enqueue(workerData.q, 'from a thread')
      const job = await c.claim(workerData.q, 10000)
      await c.complete(workerData.q, job.id, job.token)
      let code = null
      try { await c.complete(workerData.q, job.id, job.token) } catch (err) { code = err.code }
      const e2 = await c.enqueue(workerData.q, Buffer.from('left for main'))
      await c.close()
      parentPort.postMessage({ id: e.id, same: e.id === job.id, code, left: e2.id, isErr: emq.EchoMQError.name })
    })().catch((err) => parentPort.postMessage({ error: String(err && err.stack) }))
  `
  const thread = new Thread(code, { eval: true, workerData: { pkg: PKG, url: server.url, q } })
  // Listen for 'exit' before awaiting the message: both can arrive in one
  // turn of the loop, and a listener attached after 'exit' waits forever.
  // Bounded: a thread that never exits (a handle left ref-ed) fails the test.
  let exitTimer
  const exited = new Promise((resolve, reject) => {
    thread.once('exit', (c) => (clearTimeout(exitTimer), resolve(c)))
    exitTimer = setTimeout(() => {
      thread.terminate()
      reject(new Error('the thread did not exit within 30 s of closing its client'))
    }, 30000)
  })
  const msg = await new Promise((resolve, reject) => {
    thread.once('message', resolve)
    thread.once('error', reject)
  })
  const exitCode = await exited
  assert.equal(msg.error, undefined, msg.error)
  assert.equal(msg.same, true)
  assert.equal(msg.code, emq.ErrorCode.GONE)
  assert.equal(exitCode, 0, 'the thread exits by itself once its client is closed')
  const job = await main.claim(q, 10000)
  assert.equal(job.id, msg.left)
  assert.equal(job.payload.toString(), 'left for main')
  await main.complete(q, job.id, job.token)
  await main.close()
})

test('a worker thread terminated with calls in flight does not take the process down', async () => {
  // The thread reports every enqueue that settles before it is terminated;
  // 'busy' comes once the server holds its first job, so the rest are in flight.
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const emq = require(workerData.pkg)
    emq.connect(workerData.url).then(async (c) => {
      await c.enqueue(workerData.q, 'first')
      for (let i = 0; i < 2000; i++) {
        c.enqueue(workerData.q, 'x').then(
          () => parentPort.postMessage({ ok: true }),
          (e) => parentPort.postMessage({ code: e.code, typed: e instanceof emq.EchoMQError })
        )
      }
      parentPort.postMessage('busy')
    })
  `
  const c = await emq.connect(server.url)
  for (let i = 0; i < 3; i++) {
    const q = uniqueQueue('terminated')
    const thread = new Thread(code, { eval: true, workerData: { pkg: PKG, url: server.url, q } })
    const failures = []
    thread.on('message', (m) => {
      if (m.code !== undefined || m.typed !== undefined) failures.push(m)
    })
    await new Promise((resolve) => thread.on('message', (m) => m === 'busy' && resolve()))
    await thread.terminate()
    // Whatever reached the server is whole: each pending id has its row.
    // (Calls already handed to the core may still land after terminate().)
    const ids = await server.raw.cmd('ZRANGE', `emq:{${q}}:pending`, '0', '-1')
    assert.ok(ids.length >= 1 && ids.length <= 2001, `${ids.length} pending`)
    for (const id of ids) assert.equal(Number(await server.raw.cmd('EXISTS', `emq:{${q}}:job:${id}`)), 1, id)
    const pending = (await c.counts(q)).pending
    assert.ok(pending >= ids.length && pending <= 2001, `${pending} pending`)
    // A call that failed before the thread went away failed with a typed error.
    for (const f of failures) assert.ok(f.typed && typeof f.code === 'string', JSON.stringify(f))
  }
  // The main thread's client is unharmed.
  const q = uniqueQueue('after')
  await c.enqueue(q, 'still here')
  assert.equal((await c.counts(q)).pending, 1)
  await c.close()
})

test('node -e with a connected client exits by itself after close()', async () => {
  const script = `
    const { connect } = require(${JSON.stringify(PKG)})
    connect(process.env.URL).then(async (c) => {
      await c.enqueue('exit.test', 'x')
      await c.counts('exit.test')
      await c.close()
      console.log('closed ' + Date.now())
    })
  `
  const r = await runNode(['-e', script], { env: { URL: server.url } })
  assert.equal(r.code, 0, r.stderr)
  const closedAt = Number(/closed (\d+)/.exec(r.stdout)[1])
  // No handle outlives close(): the process ends by itself (a generous bound,
  // not a speed claim; runNode's own bound fails a process that hangs on).
  assert.ok(r.exitedAt - closedAt < 10000, `exited ${r.exitedAt - closedAt} ms after close()`)
})

test('a process with an open (never closed) client still exits by itself', async () => {
  const script = `
    const { connect } = require(${JSON.stringify(PKG)})
    connect(process.env.URL).then(async (c) => {
      await c.enqueue('exit.test', 'y')
      console.log('done ' + Date.now())
    })
  `
  const r = await runNode(['-e', script], { env: { URL: server.url } })
  assert.equal(r.code, 0, r.stderr)
  const doneAt = Number(/done (\d+)/.exec(r.stdout)[1])
  assert.ok(r.exitedAt - doneAt < 10000, `exited ${r.exitedAt - doneAt} ms after its last call`)
})

test('ESM: import { connect } from "echomq" (named exports and default)', async () => {
  const script = `
    import { connect, ErrorCode, Worker, mintJobId } from ${JSON.stringify(PKG + '/index.mjs')}
    import echomq from ${JSON.stringify(PKG + '/index.mjs')}
    const c = await connect(process.env.URL)
    const e = await c.enqueue('esm.test', 'x')
    await c.close()
    console.log(JSON.stringify({ ok: e.id.startsWith('JOB'), stale: ErrorCode.STALE, worker: typeof Worker,
      same: echomq.connect === connect, id: mintJobId().length }))
  `
  const r = await runNode(['--input-type=module', '-e', script], { env: { URL: server.url } })
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { ok: true, stale: 'EMQSTALE', worker: 'function', same: true, id: 14 })
})
