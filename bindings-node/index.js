// echomq for Node.js — the public face of the native addon.
//
// Thin by design: every verb is the Rust core's (docs/API.md). This file only
// (1) forwards the native client's verbs as Promise-returning methods of
// `Client` and `Queue` (derived from the native class; a verb is written out
// only where it adds behaviour), (2) turns the addon's coded errors into
// `EchoMQError` (table-driven from the core's error kinds), and (3) wraps a
// worker handler so its outcome reaches the core as data.
'use strict'

const { EventEmitter } = require('node:events')
const native = require('./native.js').load()

// ---- errors -----------------------------------------------------------------

/** `[{name, code, status}]` for every core `ErrorKind`, in code order. */
const KINDS = Object.freeze(native.errorKinds().map((k) => Object.freeze(k)))
/** `ErrorCode.STALE === 'EMQSTALE'`, ... one entry per kind. */
const ErrorCode = Object.freeze(Object.fromEntries(KINDS.map((k) => [k.name, k.code])))
const STATUS = new Map(KINDS.map((k) => [k.code, k.status]))
// napi's own argument conversion failures (a number where a string goes, ...):
// they are bad arguments in our vocabulary.
const NAPI_ARGUMENT_CODES = new Set([
  'InvalidArg',
  'ObjectExpected',
  'StringExpected',
  'NameExpected',
  'FunctionExpected',
  'NumberExpected',
  'BooleanExpected',
  'ArrayExpected',
  'BigintExpected',
  'DateExpected',
  'ArrayBufferExpected',
])

/** `code` → the fact properties its errors carry (the core's `ErrorKind::facts`). */
const FACTS = new Map(KINDS.map((k) => [k.code, k.facts]))

class EchoMQError extends Error {
  constructor(message, code, details) {
    super(message, details && details.cause !== undefined ? { cause: details.cause } : undefined)
    this.name = 'EchoMQError'
    /** One of `ErrorCode`'s values. */
    this.code = code
    /** The C status number of the kind. */
    this.status = STATUS.get(code)
    // The facts the kind declares (`jobId`, `found`, `word`, `lastError`,
    // `retryAfterMs`, `items`): each a property, `null` when not held.
    for (const fact of FACTS.get(code) || []) {
      this[fact] = details && details[fact] !== undefined ? details[fact] : null
    }
    /** The former name of `jobId` (`EMQ_NOT_DURABLE`), kept as an alias. */
    if ('jobId' in this) this.id = this.jobId
  }
}

/** Throw (or reject with) this from a worker handler: the job goes straight to dead. */
class UnrecoverableError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = 'UnrecoverableError'
  }
}

function toEchoMQError(e) {
  if (e instanceof EchoMQError || e === null || typeof e !== 'object') return e
  if (STATUS.has(e.code)) {
    // The addon set every declared fact as a property: carry them over as-is.
    const details = {}
    for (const fact of FACTS.get(e.code)) details[fact] = e[fact]
    return new EchoMQError(e.message, e.code, details)
  }
  if (NAPI_ARGUMENT_CODES.has(e.code)) {
    return new EchoMQError(e.message, ErrorCode.INVALID_ARGUMENT, { cause: e })
  }
  return e
}

function invalidArgument(message) {
  return new EchoMQError(message, ErrorCode.INVALID_ARGUMENT)
}

/** Run a native call; a sync throw or a rejection becomes an `EchoMQError` rejection. */
async function call(fn) {
  try {
    return await fn()
  } catch (e) {
    throw toEchoMQError(e)
  }
}

function callSync(fn) {
  try {
    return fn()
  } catch (e) {
    throw toEchoMQError(e)
  }
}

/** Refuse option names the core does not know (a typo would silently do nothing). */
function checkOptions(options, known, what) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw invalidArgument(`${what} must be an object`)
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw invalidArgument(`unknown ${what} ${JSON.stringify(key)}; known: ${known.join(', ')}`)
    }
  }
  return options
}

/**
 * The core's options schema (core/src/base/option_schema.rs): one frozen
 * `{name, jsName, group, type, values, default, min, max, doc}` per connect
 * and worker option. The allow-lists below come from it, so an option the
 * core takes is never refused here (nor a removed one still accepted).
 */
const OPTION_SCHEMA = Object.freeze(
  native.optionSchema().map((o) =>
    Object.freeze({
      ...o,
      values: o.values ?? null,
      default: o.default ?? null,
      min: o.min ?? null,
      max: o.max ?? null,
    })
  )
)
const optionNames = (group) => Object.freeze(OPTION_SCHEMA.filter((o) => o.group === group).map((o) => o.jsName))
const CONNECT_OPTIONS = optionNames('connect')
const ENQUEUE_OPTIONS = ['id', 'runAtMs', 'delayMs', 'dedupId', 'dedupTtlMs', 'priority']
const WORKER_OPTIONS = optionNames('worker')
const RETRY_OPTIONS = ['delayMs', 'maxAttempts', 'error']
const BROWSE_OPTIONS = ['newestFirst', 'limit', 'range']
/** Worker options handled here rather than by the core. */
const WORKER_JS_OPTIONS = ['handleSignals']

// Batch verdicts in `Promise.allSettled` shape.
const settled = (verdicts) =>
  verdicts.map((v) =>
    v instanceof Error
      ? { status: 'rejected', reason: toEchoMQError(v) }
      : { status: 'fulfilled', value: v === null ? undefined : v }
  )

// A repeat's unset fields read as null, like a job's lastError.
const REPEAT_OPTIONAL = ['everyMs', 'cron', 'tz', 'startAt', 'endAt', 'limit', 'lastRunMs', 'lastId']
const normalizeRepeat = (repeat) => {
  for (const field of REPEAT_OPTIONAL) if (repeat[field] === undefined) repeat[field] = null
  return repeat
}

const normalizeJob = (job) => {
  if (job && job.lastError === undefined) job.lastError = null
  // The row field `progress` holds the value's JSON text (2.1.0).
  if (job) job.progress = job.progress === undefined || job.progress === null ? null : parseProgress(job.progress)
  return job
}

// Another writer's text that is not JSON stays as it is.
function parseProgress(text) {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A progress value as the JSON text the core stores (a number or a small JSON value). */
function progressJson(value) {
  const text = JSON.stringify(value)
  if (text === undefined) throw invalidArgument('progress must be a JSON value (a number, string, object, array, boolean or null)')
  return text
}

/** A handler's return value as the bytes kept for `keepResultMs`: Buffers and strings as they are, else JSON. */
function resultBytes(value) {
  if (value === undefined || value === null) return Buffer.alloc(0)
  if (Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  const text = JSON.stringify(value)
  return Buffer.from(text === undefined ? '' : text, 'utf8')
}

// ---- client -----------------------------------------------------------------

const NATIVE = Symbol('echomq.native')

/**
 * A batch item's payload as it is (the native side takes Buffers, typed
 * arrays and strings), or `{payload, ...options}` with its option names
 * checked here (the core refuses the combinations).
 */
function checkItem(item, i) {
  if (item === null || typeof item !== 'object' || ArrayBuffer.isView(item)) return
  for (const key of Object.keys(item)) {
    if (key !== 'payload' && !ENQUEUE_OPTIONS.includes(key)) {
      throw invalidArgument(
        `item ${i}: unknown enqueue option ${JSON.stringify(key)}; known: payload, ${ENQUEUE_OPTIONS.join(', ')}`
      )
    }
  }
}

/**
 * The client. Every verb of the native client is a method here, derived
 * below: the same name and arguments, a Promise, errors as `EchoMQError`. Only
 * the verbs that add behaviour (checked options, another argument shape, a
 * callback) are written out in this class.
 */
class Client {
  constructor(nativeClient) {
    if (!(nativeClient instanceof native.NativeClient)) {
      throw new TypeError('use `await connect(url, options)` to make a Client')
    }
    this[NATIVE] = nativeClient
  }

  /** The node id mixed into the ids this client mints. */
  get nodeId() {
    return this[NATIVE].nodeId()
  }

  /** `options`: `{id, runAtMs, delayMs}` (not both times) or `{dedupId, dedupTtlMs}`; `priority` (wire 2.2.0) with either. */
  enqueue(queue, payload, options) {
    return call(() =>
      this[NATIVE].enqueue(queue, payload, checkOptions(options, ENQUEUE_OPTIONS, 'enqueue option'))
    )
  }
  /** `items`: payloads, or `{payload, ...options}` (as `enqueue`'s); one verdict per item. */
  enqueueMany(queue, items) {
    return call(() => {
      if (Array.isArray(items)) items.forEach(checkItem)
      return this[NATIVE].enqueueMany(queue, items)
    }).then(settled)
  }
  /**
   * `retry(queue, id, token, {delayMs, maxAttempts, error})` (omitted: the
   * core's defaults), or the positional `retry(queue, id, token, delayMs, maxAttempts, error)`.
   */
  retry(queue, id, token, delayMs, maxAttempts, error) {
    if (delayMs === undefined || delayMs === null || typeof delayMs === 'object') {
      const opts = checkOptions(delayMs, RETRY_OPTIONS, 'retry option')
      return call(() => this[NATIVE].retryWith(queue, id, token, opts))
    }
    return call(() => this[NATIVE].retry(queue, id, token, delayMs, maxAttempts, error))
  }
  /** `browse(queue, set, {newestFirst, limit, range})`, or the positional form. */
  browse(queue, set, newestFirst = false, limit = undefined, range = null) {
    if (newestFirst !== null && typeof newestFirst === 'object') {
      const o = checkOptions(newestFirst, BROWSE_OPTIONS, 'browse option')
      return call(() => this[NATIVE].browse(queue, set, o.newestFirst ?? false, o.limit, o.range ?? null))
    }
    return call(() => this[NATIVE].browse(queue, set, newestFirst, limit, range))
  }
  upsertRepeat(queue, name, options = {}) {
    const { payload = '', ...schedule } = options || {}
    return call(() => this[NATIVE].upsertRepeat(queue, name, payload, schedule)).then(normalizeRepeat)
  }
  /** Subscribe to `emq:{q}:events` on a connection of its own; resolves once subscribed. */
  subscribe(queue) {
    return call(async () => {
      const sub = new Subscription(queue)
      sub[NATIVE] = await this[NATIVE].subscribe(
        queue,
        (event) => sub[DELIVER](event),
        () => sub[END]()
      )
      return sub
    })
  }
  /** The holder records how far job `id` got: a number or a small JSON value (2.1.0). */
  updateProgress(queue, id, token, value) {
    return call(() => this[NATIVE].updateProgress(queue, id, token, progressJson(value)))
  }
  /** A handle on one queue: its verbs without the name. Throws `EMQ_INVALID_QUEUE` at once. */
  queue(name) {
    return new Queue(this, name)
  }
  /** `await using client = await connect()`: closes it at the end of the scope. */
  [Symbol.asyncDispose]() {
    return this.close()
  }
}

/** Native methods that are no verb of their own (the methods above use them). */
const NATIVE_ONLY = new Set(['constructor', 'nodeId', 'worker', 'retryWith'])
/** How a forwarded verb's answer reaches JS, where it is more than the native value. */
const SHAPE = {
  completeMany: settled,
  extendMany: settled,
  job: normalizeJob,
  listRepeats: (all) => all.map(normalizeRepeat),
  result: (v) => v ?? null,
  waitFor: (s) => ({ state: s.state, error: s.error === undefined ? null : s.error }),
}

/** Define `name` on `proto` as a plain method (non-enumerable, as class methods are). */
function defineMethod(proto, name, fn) {
  Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false })
}

// Every other native verb, forwarded as it is: a new verb of the addon is a
// Client method (and a Queue one, below) without a line here.
for (const name of Object.getOwnPropertyNames(native.NativeClient.prototype)) {
  if (NATIVE_ONLY.has(name) || Object.hasOwn(Client.prototype, name)) continue
  const shape = SHAPE[name]
  const verb = {
    [name](...args) {
      const answer = call(() => this[NATIVE][name](...args))
      return shape ? answer.then(shape) : answer
    },
  }[name]
  defineMethod(Client.prototype, name, verb)
}

/**
 * One queue of a `Client` (`client.queue('emails')`): the per-queue verbs
 * without repeating the name. The client plus the name checked by the core,
 * nothing more (its Rust twin is `echomq::Queue`).
 */
class Queue {
  #client
  #name
  constructor(client, name) {
    if (!(client instanceof Client)) throw invalidArgument('Queue needs a connected Client')
    // The core's queue-name check and error (EMQ_INVALID_QUEUE), before any I/O.
    callSync(() => native.queueKey(name, 'meta'))
    this.#client = client
    this.#name = name
  }
  get name() {
    return this.#name
  }
  get client() {
    return this.#client
  }
  /** `new Worker(client, name, handler, options)`. */
  worker(handler, options) {
    return new Worker(this.#client, this.#name, handler, options)
  }
}

/** The client's verbs that take no queue: they stay on the client. */
const CLIENT_ONLY = new Set(['constructor', 'nodeId', 'queue', 'queues', 'bundleMismatches', 'metricsText', 'close'])

// Every per-queue verb of the client, with this queue's name first.
for (const name of Object.getOwnPropertyNames(Client.prototype)) {
  if (CLIENT_ONLY.has(name) || Object.hasOwn(Queue.prototype, name)) continue
  const verb = {
    [name](...args) {
      return this.client[name](this.name, ...args)
    },
  }[name]
  defineMethod(Queue.prototype, name, verb)
}

/**
 * Connect and fence; resolves to a `Client`. No `url` (or only options):
 * `EMQ_URL`, else `redis://127.0.0.1:6379/`.
 */
function connect(url, options) {
  if (url !== null && typeof url === 'object' && options === undefined) {
    options = url
    url = undefined
  }
  return call(async () => {
    const opts = checkOptions(options, CONNECT_OPTIONS, 'connect option')
    return new Client(await native.connect(url ?? null, opts))
  })
}

// ---- queue events ---------------------------------------------------------------

const DELIVER = Symbol('echomq.deliver')
const END = Symbol('echomq.end')

/**
 * A live subscription to a queue's events. An EventEmitter: `'event'` for
 * every message and the message's own name (`'added'`, `'completed'`, ...),
 * then `'end'` after `close()`. Also an async iterator (`for await`). Like an
 * open socket it keeps the process alive until `close()`.
 */
class Subscription extends EventEmitter {
  #buffer = []
  #waiting = []
  #ended = false
  #iterating = false

  constructor(queue) {
    super()
    this.queue = queue
  }

  [DELIVER](event) {
    if (event.event === 'error' || event.event === 'end') return // reserved names
    this.emit('event', event)
    this.emit(event.event, event)
    const next = this.#waiting.shift()
    if (next) next({ value: event, done: false })
    else if (this.#iterating) this.#buffer.push(event)
  }

  [END]() {
    if (this.#ended) return
    this.#ended = true
    for (const next of this.#waiting.splice(0)) next({ value: undefined, done: true })
    this.emit('end')
  }

  /** Unsubscribe; resolves once the subscription has ended. */
  close() {
    if (this.#ended) return Promise.resolve()
    const ended = new Promise((resolve) => this.once('end', resolve))
    this[NATIVE].close()
    return ended
  }

  [Symbol.asyncIterator]() {
    this.#iterating = true
    return {
      next: () => {
        if (this.#buffer.length > 0) return Promise.resolve({ value: this.#buffer.shift(), done: false })
        if (this.#ended) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => this.#waiting.push(resolve))
      },
      return: async () => {
        await this.close()
        return { value: undefined, done: true }
      },
      [Symbol.asyncIterator]() {
        return this
      },
    }
  }
}

// ---- logs ---------------------------------------------------------------------

/**
 * Receive core log records: `handler({level, target, message})` for records
 * at or above `minLevel` ('error', 'warn' (default), 'info', 'debug',
 * 'trace', 'off'), called on the JS thread; the core never waits for it.
 * `setLogHandler(null)` restores the default: warnings and errors to stderr.
 */
function setLogHandler(handler, minLevel) {
  if (handler !== null && handler !== undefined && typeof handler !== 'function') {
    throw invalidArgument('setLogHandler takes a function or null')
  }
  return callSync(() => native.setLogHandler(handler ?? null, minLevel ?? 'warn'))
}

// ---- worker -----------------------------------------------------------------

/** The worker's event names, as EventEmitter events (core name → Node name). */
const WORKER_EVENTS = Object.freeze({
  active: 'active',
  completed: 'completed',
  failed: 'failed',
  dead: 'dead',
  lease_lost: 'leaseLost',
  stalled: 'stalled',
  error: 'error',
  drained: 'drained',
  closed: 'closed',
})

function workerEvent(e) {
  const out = { name: WORKER_EVENTS[e.name] }
  for (const key of ['id', 'token', 'error', 'code', 'retryInMs', 'durationMs', 'count']) {
    if (e[key] !== undefined && e[key] !== null) out[key] = e[key]
  }
  if (e.name === 'failed' && out.retryInMs === undefined) out.retryInMs = null
  return out
}

/** A handler failure as data for the core: `{message, fatal}`. */
function failure(e) {
  const message = e instanceof Error ? e.message : String(e)
  const fatal = e instanceof UnrecoverableError || (e !== null && typeof e === 'object' && e.name === 'UnrecoverableError')
  return { message: String(message), fatal }
}

// SIGTERM: one process listener for every running worker that wants it,
// installed only when the application has no SIGTERM listener of its own
// (then it decides), and removed when the last such worker stops.
const SIGTERM_WORKERS = new Set()
let sigtermListener = null

function onSigterm(worker) {
  if (sigtermListener === null) {
    if (process.listenerCount('SIGTERM') > 0) return () => {}
    sigtermListener = () => {
      for (const w of SIGTERM_WORKERS) w.close().catch(() => {})
    }
    process.on('SIGTERM', sigtermListener)
  }
  SIGTERM_WORKERS.add(worker)
  return () => {
    SIGTERM_WORKERS.delete(worker)
    if (SIGTERM_WORKERS.size === 0 && sigtermListener !== null) {
      process.removeListener('SIGTERM', sigtermListener)
      sigtermListener = null
    }
  }
}

/** The reasons a handler's `signal` aborts with (`signal.reason`). */
function abortReason(code, message) {
  const reason = new EchoMQError(message, code)
  return reason
}

class Worker extends EventEmitter {
  #native
  #running = null
  /** `id:token` → the AbortController of a job whose handler is running. */
  #inFlight = new Map()
  #stopping = false
  #handleSignals

  /**
   * @param client a connected `Client`
   * @param queue the queue to consume
   * @param handler `async (job, signal) => {...}`; resolve = done, throw/reject
   *   = retry, throw `UnrecoverableError` = dead now. `signal` (an
   *   `AbortSignal`) aborts when the job's lease is lost (another worker may
   *   run it now) or the worker shuts down; `signal.reason` is an
   *   `EchoMQError` with code `EMQ_LEASE_LOST` or `EMQ_CLOSED`.
   * @param options camelCase worker options, plus `handleSignals` (default
   *   true: SIGTERM closes the worker gracefully while it runs, unless the
   *   application listens for SIGTERM itself)
   */
  constructor(client, queue, handler, options) {
    super()
    if (!(client instanceof Client)) throw invalidArgument('Worker needs a connected Client')
    if (typeof handler !== 'function') throw invalidArgument('Worker handler must be a function')
    const all = checkOptions(options, [...WORKER_OPTIONS, ...WORKER_JS_OPTIONS], 'worker option')
    let opts = all
    if (all && 'handleSignals' in all) {
      opts = { ...all }
      delete opts.handleSignals
    }
    this.#handleSignals = !(all && all.handleSignals === false)
    const keep = opts !== undefined && opts !== null && opts.keepResultMs > 0
    const runOne = async (job) => {
      const key = `${job.id}:${job.token}`
      const controller = new AbortController()
      if (this.#stopping) controller.abort(abortReason(ErrorCode.CLOSED, 'the worker is shutting down'))
      this.#inFlight.set(key, controller)
      // The handle writes this job's progress and log as its holder.
      job.updateProgress = (value) => client.updateProgress(queue, job.id, job.token, value)
      job.log = (line, maxLines) => client.log(queue, job.id, line, maxLines)
      try {
        const value = await handler(job, controller.signal)
        return keep ? { result: resultBytes(value) } : null
      } catch (e) {
        return failure(e)
      } finally {
        this.#inFlight.delete(key)
      }
    }
    // One call per batch of up to `handlerBatch` jobs; they run concurrently.
    const dispatch = (jobs) => Promise.all(jobs.map(runOne))
    this.#native = callSync(() => client[NATIVE].worker(queue, dispatch, opts))
  }

  /**
   * Claim and process until `close()`; resolves after the graceful drain.
   * Worker events go to the listeners attached before `run()` (none
   * attached: only `leaseLost`, which aborts the handler's signal, crosses
   * to JS). An `'error'` event with no listener is dropped, never thrown: it
   * is logged by the core already. While it runs, SIGTERM closes the worker
   * (see the constructor's `handleSignals`).
   */
  run() {
    if (!this.#running) {
      this.#listen()
      const unhook = this.#hookSigterm()
      this.#running = call(() => this.#native.run()).finally(unhook)
    }
    return this.#running
  }

  #hookSigterm() {
    if (!this.#handleSignals) return () => {}
    return onSigterm(this)
  }

  #listen() {
    const wanted = Object.keys(WORKER_EVENTS).filter((n) => this.listenerCount(WORKER_EVENTS[n]) > 0)
    // A lost lease always crosses: it aborts that job's handler signal.
    if (!wanted.includes('lease_lost')) wanted.push('lease_lost')
    callSync(() =>
      this.#native.onEvent(wanted, (raw) => {
        const event = workerEvent(raw)
        if (event.name === 'leaseLost') {
          const controller = this.#inFlight.get(`${event.id}:${event.token}`)
          if (controller) {
            controller.abort(abortReason(ErrorCode.LEASE_LOST, `the lease of job ${event.id} was lost`))
          }
          if (this.listenerCount('leaseLost') === 0) return
        }
        if (event.name === 'error') {
          if (this.listenerCount('error') === 0) return
          const error = new EchoMQError(event.error, event.code)
          this.emit('error', error)
          return
        }
        this.emit(event.name, event)
      })
    )
  }

  /**
   * Stop claiming; running handlers' signals abort (`EMQ_CLOSED`) and they
   * finish within the grace period; resolves once they did.
   */
  async close() {
    this.#stopping = true
    this.#native.stop()
    const reason = abortReason(ErrorCode.CLOSED, 'the worker is shutting down')
    for (const controller of this.#inFlight.values()) controller.abort(reason)
    if (this.#running) await this.#running
    else this.#native.release()
  }

  /** `await using worker = new Worker(...)`: closes (and drains) it at the end of the scope. */
  [Symbol.asyncDispose]() {
    return this.close()
  }

  /** `{claimed, completed, retried, dead, leaseLost, inFlight}` */
  stats() {
    return this.#native.stats()
  }
}

// ---- pure helpers -------------------------------------------------------------

const helper = (name) => {
  const fn = (...args) => callSync(() => native[name](...args))
  Object.defineProperty(fn, 'name', { value: name })
  return fn
}

module.exports = {
  connect,
  Client,
  Queue,
  Worker,
  Subscription,
  WORKER_EVENTS,
  setLogHandler,
  promClientCollector: (...args) => require('./prom.js').promClientCollector(...args),
  EchoMQError,
  UnrecoverableError,
  ErrorCode,
  errorKinds: () => KINDS,
  /** The core's default for every option (omitted options take these). */
  defaults: () => native.defaults(),
  /** The core's options schema: every connect and worker option. */
  optionSchema: () => OPTION_SCHEMA,
  mintJobId: helper('mintJobId'),
  parseId: helper('parseId'),
  isValidId: helper('isValidId'),
  encodeId: helper('encodeId'),
  lexBound: helper('lexBound'),
  isValidQueue: helper('isValidQueue'),
  queueKey: helper('queueKey'),
  jobKey: helper('jobKey'),
  classify: helper('classify'),
  slot: helper('slot'),
  protocolVersion: helper('protocolVersion'),
}
