// EchoMQ quickstart (ES module): a producer and a worker in one program.
//
//   cd examples/node && npm install      # links ../../bindings-node as `echomq`
//   EMQ_URL=redis://127.0.0.1:6379/ node quickstart.mjs
//
// It enqueues three jobs, runs a worker until each of them has completed, and
// exits. In production the producer and the worker are separate processes.
import { connect } from 'echomq'

// No URL: EMQ_URL when set, else redis://127.0.0.1:6379/.
const client = await connect()
const emails = client.queue('emails')

// The producer's side: each enqueue answers the new job's id.
const ids = []
for (let i = 0; i < 3; i++) ids.push((await emails.enqueue(`hello #${i}`)).id)

// The worker's side. Resolving completes the job; throwing retries it with
// backoff (new UnrecoverableError(message): straight to dead).
const worker = emails.worker(
  async (job) => {
    console.log(`worker: ${job.id} attempt ${job.attempts}: ${job.payload.toString('utf8')}`)
  },
  { concurrency: 4 },
)
const running = worker.run() // settles once the worker has stopped and drained

for (const id of ids) {
  const settled = await emails.waitFor(id, 30_000)
  console.log(`producer: ${id} ${settled.state}`)
}
await worker.close() // claims nothing more, lets running handlers finish
await running
await client.close()
