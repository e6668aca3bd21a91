// A typed tour of the whole `echomq` surface. `npm test` in bindings-node checks
// it with `tsc --noEmit --strict` (it is not run; quickstart.cjs and quickstart.mjs are).
import {
  connect,
  Client,
  Queue,
  Worker,
  EchoMQError,
  UnrecoverableError,
  ErrorCode,
  errorKinds,
  mintJobId,
  parseId,
  isValidId,
  encodeId,
  lexBound,
  isValidQueue,
  queueKey,
  jobKey,
  classify,
  slot,
  protocolVersion,
  type Enqueued,
  type Job,
  type JobInfo,
  type Counts,
  type WorkerStats,
  type Verdict,
  type JobState,
  type EnqueueOptions,
  type EnqueueItem,
  type Reaped,
} from 'echomq'

// The shapes to reach for first: a queue handle, option objects, the attempt
// number, an AbortSignal in the handler and `await using`.
async function quick(): Promise<void> {
  await using client = await connect() // EMQ_URL, else redis://127.0.0.1:6379/
  const emails: Queue = client.queue('emails')
  await emails.enqueue('now')
  await emails.enqueue('in five minutes', { delayMs: 5 * 60_000 })
  const receipt: Enqueued = await emails.enqueue('exactly once', { id: mintJobId(), runAtMs: Date.now() + 1000 })
  console.log(receipt.duplicate)
  const job = await emails.claim(30_000)
  if (job) {
    console.log(`attempt ${job.attempts}`)
    const outcome: 'scheduled' | 'dead' = await emails.retry(job.id, job.token, { delayMs: 1000, error: 'smtp down' })
    console.log(outcome)
  }
  const newest: string[] = await emails.browse('pending', { newestFirst: true, limit: 10 })
  const info = newest.length > 0 ? await emails.job(newest[0]) : null
  const state: JobState | undefined = info?.state
  if (state === 'unknown') console.log('written by another runtime:', info?.rawState)
  await using worker = emails.worker(
    async (j: Job, signal: AbortSignal) => {
      signal.addEventListener('abort', () => console.log('stop working on', j.id, signal.reason))
      console.log(`attempt ${j.attempts} of ${j.id}`)
    },
    { concurrency: 4, handleSignals: true },
  )
  const running: Promise<void> = worker.run()
  await worker.close()
  await running
}

async function tour(url: string): Promise<void> {
  const client: Client = await connect(url, {
    nodeId: 7,
    clientName: 'typed-tour',
    connectTimeoutMs: 2000,
    responseTimeoutMs: 0,
    maxPayload: 1 << 20,
    strictBundle: false,
    wireVersion: 'echomq:2.1.0',
  })
  const q = 'typed.tour'

  const a: Enqueued = await client.enqueue(q, 'text payload')
  // Job features (wire 2.1.0): one live job per dedup id; the stall-capped reap.
  const once: EnqueueOptions = { dedupId: 'welcome-42', dedupTtlMs: 60000 }
  const deduped: Enqueued = await client.enqueue(q, 'welcome', once)
  const stalled: Reaped = await client.reapStalled(q, 100, 2)
  console.log(deduped.duplicate, stalled.recovered.length, stalled.dead.length)
  await client.setConcurrency(q, 3)
  await client.setRateLimit(q, 100, 1000)
  try {
    await client.claim(q, 1000)
  } catch (e) {
    if (e instanceof EchoMQError && e.code === ErrorCode.RATE_LIMITED) console.log(e.retryAfterMs)
  }
  const b: Enqueued = await client.enqueue(q, Buffer.from([1, 2, 3]), { id: mintJobId(7) })
  await client.enqueue(q, new Uint8Array([4]), { runAtMs: Date.now() + 1000 })
  await client.enqueue(q, 'later', { delayMs: 500 })
  // A batch item is a payload, or the payload with its own options.
  const items: EnqueueItem[] = ['x', Buffer.from('y'), { payload: 'z', delayMs: 500 }, { payload: 'w', id: b.id }]
  const many: Verdict<Enqueued>[] = await client.enqueueMany(q, items)
  for (const v of many) {
    if (v.status === 'fulfilled') console.log(v.value.id, v.value.duplicate)
    else console.log(v.reason.code)
  }

  const job: Job | null = await client.claim(q, 30_000)
  if (job) {
    const text: string = job.payload.toString('utf8')
    await client.extend(q, job.id, job.token, 30_000)
    await client.complete(q, job.id, job.token)
    console.log(text)
  }
  const jobs: Job[] = await client.claimMany(q, 10, 30_000)
  await client.extendMany(q, jobs, 30_000)
  const done: Verdict<undefined>[] = await client.completeMany(q, jobs)
  console.log(done.length)

  const again = await client.claim(q, 1_000)
  if (again) {
    const outcome: 'scheduled' | 'dead' = await client.retry(q, again.id, again.token, 0, 3, 'boom')
    console.log(outcome)
  }
  const promoted: number = await client.promote(q)
  const reaped: number = await client.reap(q, 100)
  const counts: Counts = await client.counts(q)
  const info: JobInfo | null = await client.job(q, a.id)
  const lastError: string | null = info ? info.lastError : null
  const ids: string[] = await client.browse(q, 'pending', true, 10, { fromMs: 0, toMs: Date.now() })
  await client.pause(q)
  const paused: boolean = await client.isPaused(q)
  await client.resume(q)
  try {
    await client.requeueDead(q, b.id)
  } catch (e) {
    if (e instanceof EchoMQError && e.code === ErrorCode.NOT_DEAD) console.log('not dead')
  }
  await client.remove(q, b.id).catch((e: EchoMQError) => console.log(e.code))
  console.log(promoted, reaped, counts.pending, lastError, ids, paused, await client.bundleMismatches())

  const worker = new Worker(
    client,
    q,
    async (j: Job) => {
      if (j.token > 3) throw new UnrecoverableError('give up')
      if (j.payload.length === 0) throw new Error('empty payload')
    },
    {
      concurrency: 4,
      leaseMs: 5000,
      maxAttempts: 5,
      maxStalls: 2,
      backoff: 'fixed',
      backoffBaseMs: 200,
      backoffCapMs: 1000,
      pumpIntervalMs: 200,
      idleMaxMs: 50,
      shutdownGraceMs: 2000,
    },
  )
  const running: Promise<void> = worker.run()
  await worker.close()
  await running
  const stats: WorkerStats = worker.stats()
  console.log(stats.completed, stats.leaseLost, stats.inFlight)
  await client.close()
}

function helpers(): void {
  const id: string = mintJobId()
  const parsed = parseId(id)
  const snowflake: bigint = parsed.snowflake
  const again: string = encodeId(parsed.namespace, snowflake)
  const valid: boolean = isValidId(again) && isValidQueue('orders')
  const key: string = queueKey('orders', 'pending') + jobKey('orders', id)
  const cls = classify(key)
  const n: number = slot(key) + parsed.mintedAtMs
  const bound: string = lexBound(Date.now())
  const version: string = protocolVersion()
  const codes: string[] = errorKinds().map((k) => `${k.name}=${k.code}/${k.status}`)
  console.log(valid, cls.class, cls.keyType, n, bound, version, codes)
  try {
    parseId('not an id')
  } catch (e) {
    if (e instanceof EchoMQError) {
      const code: ErrorCode = e.code
      console.log(code, e.found, e.word)
    }
  }
}

// Progress, logs and kept results (echomq:2.1.0).
async function progressAndResults(client: Client): Promise<void> {
  const q = 'typed.results'
  const worker = new Worker(
    client,
    q,
    async (job) => {
      const lines: number = await job.log('resizing')
      await job.updateProgress({ step: 1, of: 2 })
      return { lines, size: [160, 120] }
    },
    { keepResultMs: 3_600_000 }
  )
  const running = worker.run()
  const { id } = await client.enqueue(q, 'cat.png')
  try {
    const value: Buffer = await client.waitForResult(q, id, 30_000)
    console.log(JSON.parse(value.toString('utf8')))
  } catch (e) {
    if (e instanceof EchoMQError && e.code === ErrorCode.JOB_DEAD) console.log('dead:', e.lastError)
  }
  const kept: Buffer | null = await client.result(q, id)
  const log: string[] = await client.logs(q, id, 0, -1)
  const info: JobInfo | null = await client.job(q, id)
  console.log(kept, log, info ? info.progress : null)
  await worker.close()
  await running
}

helpers()
void progressAndResults
quick().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
tour(process.env.EMQ_URL ?? 'redis://127.0.0.1:6379/').catch((e) => {
  console.error(e)
  process.exitCode = 1
})
