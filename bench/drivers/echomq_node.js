// The EchoMQ Node driver for bench/run.py (contract: bench/DRIVERS.md).
'use strict'
const { connect, Worker, WORKER_EVENTS } = require('../../bindings-node')
const { version } = require('../../bindings-node/package.json')

const VERSION = `echomq ${version} (node)`

function parseArgs() {
  const a = { workload: process.argv[2], url: 'redis://127.0.0.1:6379/', queue: 'bench', n: 20000, concurrency: 50, rate: 2000, payloadSize: 100, events: 'on', listeners: 'off', idleSeconds: 10, handlerBatch: 0 }
  for (let i = 3; i + 1 < process.argv.length; i += 2) {
    const [k, v] = [process.argv[i], process.argv[i + 1]]
    if (k === '--url') a.url = v
    else if (k === '--queue') a.queue = v
    else if (k === '--n') a.n = Number(v)
    else if (k === '--concurrency') a.concurrency = Number(v)
    else if (k === '--rate') a.rate = Number(v)
    else if (k === '--payload-size') a.payloadSize = Number(v)
    else if (k === '--events') a.events = v
    else if (k === '--listeners') a.listeners = v
    else if (k === '--idle-seconds') a.idleSeconds = Number(v)
    else if (k === '--handler-batch') a.handlerBatch = Number(v)
  }
  return a
}

const nowNs = () => process.hrtime.bigint() // monotonic, same process for enqueue and handler
function payload(i, size) {
  const head = `{"i":${i},"t":${nowNs()},"pad":"`
  return head + 'x'.repeat(Math.max(size - head.length - 2, 0)) + '"}'
}
function enqueuedAt(buf) {
  const s = buf.toString()
  const at = s.indexOf('"t":')
  return BigInt(s.slice(at + 4, s.indexOf(',', at)))
}

function report(workload, jobs, seconds, p50 = null, p99 = null, note = '') {
  console.log(JSON.stringify({ workload, jobs, seconds, p50_ms: p50, p99_ms: p99, version: VERSION, note }))
}

async function waitFor(worker, n) {
  const deadline = Date.now() + 240000
  while (worker.stats().completed < n) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 1))
  }
}

async function main() {
  const a = parseArgs()
  const client = await connect(a.url, { publishEvents: a.events === 'on' })
  // --listeners on: a no-op listener for every worker event (attached before run()).
  const listen = (worker) => {
    if (a.listeners === 'on') for (const name of Object.values(WORKER_EVENTS)) worker.on(name, () => {})
    return worker
  }
  const t0 = process.hrtime.bigint()
  const secs = () => Number(process.hrtime.bigint() - t0) / 1e9
  if (a.workload === 'enqueue-single') {
    for (let i = 0; i < a.n; i++) await client.enqueue(a.queue, payload(i, a.payloadSize))
    report(a.workload, a.n, secs())
  } else if (a.workload === 'enqueue-bulk' || a.workload === 'prefill') {
    const chunks = []
    for (let s = 0; s < a.n; s += 1000) {
      const chunk = []
      for (let i = s; i < Math.min(s + 1000, a.n); i++) chunk.push(payload(i, a.payloadSize))
      chunks.push(chunk)
    }
    // A few pipelines in flight at once.
    for (let k = 0; k < chunks.length; k += 4) {
      const verdicts = await Promise.all(chunks.slice(k, k + 4).map((c) => client.enqueueMany(a.queue, c)))
      for (const v of verdicts.flat()) if (v.status !== 'fulfilled') throw v.reason
    }
    report(a.workload, a.n, secs())
  } else if (a.workload === 'process') {
    // A no-op handler: hand it whole claims (one crossing to the JS thread
    // per batch), the documented setting for short handlers.
    const handlerBatch = a.handlerBatch || a.concurrency // --handler-batch 0 (default): the concurrency
    const worker = listen(new Worker(client, a.queue, async () => {}, { concurrency: a.concurrency, idleMaxMs: 5, handlerBatch }))
    const running = worker.run()
    await waitFor(worker, a.n)
    const seconds = secs()
    await worker.close()
    await running
    report(a.workload, a.n, seconds, null, null, handlerBatch > 1 ? `handler_batch=${handlerBatch}` : '')
  } else if (a.workload === 'latency') {
    const lat = []
    const worker = new Worker(client, a.queue, async (job) => {
      lat.push(Number(nowNs() - enqueuedAt(job.payload)) / 1e6)
    }, { concurrency: 50, idleMaxMs: 5 })
    const running = worker.run()
    const start = Date.now()
    for (let i = 0; i < a.n; i++) {
      const delay = start + (i * 1000) / a.rate - Date.now()
      if (delay > 0) await new Promise((r) => setTimeout(r, delay))
      await client.enqueue(a.queue, payload(i, a.payloadSize))
    }
    await waitFor(worker, a.n)
    const seconds = secs()
    await worker.close()
    await running
    lat.sort((x, y) => x - y)
    const pct = (p) => lat[Math.min(Math.floor(lat.length * p), lat.length - 1)]
    report(a.workload, a.n, seconds, pct(0.5), pct(0.99))
  } else if (a.workload === 'idle') {
    // Idle pickup (issue #16): default options, idle, then one job every ~200 ms.
    const lat = []
    const worker = new Worker(client, a.queue, async (job) => {
      lat.push(Number(nowNs() - enqueuedAt(job.payload)) / 1e6)
    }, { concurrency: a.concurrency })
    const running = worker.run()
    await new Promise((r) => setTimeout(r, 500))
    console.error('idle-start')
    await new Promise((r) => setTimeout(r, a.idleSeconds * 1000))
    const start = Date.now()
    for (let i = 0; i < a.n; i++) {
      await client.enqueue(a.queue, payload(i, a.payloadSize))
      await waitFor(worker, i + 1)
      await new Promise((r) => setTimeout(r, 200))
    }
    const seconds = (Date.now() - start) / 1000
    await worker.close()
    await running
    lat.sort((x, y) => x - y)
    const pct = (p) => lat[Math.min(Math.floor(lat.length * p), lat.length - 1)]
    report(a.workload, a.n, seconds, pct(0.5), pct(0.99))
  } else {
    console.log(JSON.stringify({ workload: a.workload, unsupported: 'unknown workload' }))
  }
  await client.close()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
