// The demo's Node worker on queue `orders` (the handler contract of every
// runtime): fail the first attempt of a `fail_once` order, else write a receipt
// "<order> node <token>" into `orders.receipts`.
//
//   (cd bindings-node && npm ci)     # builds the addon once
//   EMQ_URL=redis://127.0.0.1:6379/ node examples/polyglot/worker.js
//
// Runs until SIGTERM or SIGINT, drains, then prints one line:
//   node worker: processed=<completed> retried=<retried> dead=<dead>
'use strict'
const { connect, Worker } = require('../../bindings-node')

const QUEUE = 'orders'
const RECEIPTS = 'orders.receipts'

async function main() {
  const url = process.env.EMQ_URL || 'redis://127.0.0.1:6379/'
  const client = await connect(url, { clientName: 'demo-worker-node' })

  const worker = new Worker(
    client,
    QUEUE,
    async (job) => {
      const order = JSON.parse(job.payload.toString('utf8'))
      if (order.fail_once && job.attempts === 1) throw new Error('simulated failure (first attempt)')
      await client.enqueue(RECEIPTS, `${order.order} node ${job.token}`)
    },
    {
      concurrency: 8,
      leaseMs: 5000,
      backoff: 'fixed',
      backoffBaseMs: 200,
      pumpIntervalMs: 200,
      maxAttempts: 5,
    }
  )
  // SIGTERM and SIGINT both stop gracefully: no new claims, in-flight jobs finish.
  const stop = () => {
    worker.close().catch((e) => console.error(`node worker: close failed: ${e.message}`))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)

  await worker.run() // resolves once stopped and drained
  const s = worker.stats()
  console.log(`node worker: processed=${s.completed} retried=${s.retried} dead=${s.dead}`)
  process.removeListener('SIGTERM', stop)
  process.removeListener('SIGINT', stop)
  await client.close()
}

main().catch((e) => {
  console.error(`node worker: ${e && e.code ? `${e.code}: ` : ''}${e && e.message}`)
  process.exitCode = 1
})
