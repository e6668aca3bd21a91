// Type definitions for `echomq`: written by hand over the napi addon, except
// the plain verbs of `Client` and `Queue`, which are derived from the
// declarations napi generates from the Rust methods (native.d.ts, shipped
// beside this file) as index.js derives the methods themselves. Checked by
// `tsc --noEmit --strict` on examples/node/typed.ts in `npm test`, and by
// test/surface.test.js against the methods `Client` and `Queue` have at run
// time and native.d.ts: a verb missing or untyped here or there fails.

/// <reference types="node" />

import { EventEmitter } from 'node:events'
import type { BundleMismatch, Counts, Job, NativeClient, Reaped } from './native'

// ---- errors -------------------------------------------------------------------

/** The stable error codes: exactly the core's `ErrorKind::code()` values. */
export declare const ErrorCode: {
  readonly KIND: 'EMQKIND'
  readonly STALE: 'EMQSTALE'
  readonly GONE: 'EMQ_GONE'
  readonly LEASE_LOST: 'EMQ_LEASE_LOST'
  readonly NOT_DEAD: 'EMQ_NOT_DEAD'
  readonly VERSION_FENCE: 'EMQ_VERSION_FENCE'
  readonly INVALID_ID: 'EMQ_INVALID_ID'
  readonly INVALID_QUEUE: 'EMQ_INVALID_QUEUE'
  readonly INVALID_ARGUMENT: 'EMQ_INVALID_ARGUMENT'
  readonly CONNECTION: 'EMQ_CONNECTION'
  readonly TIMEOUT: 'EMQ_TIMEOUT'
  readonly PROTOCOL: 'EMQ_PROTOCOL'
  readonly SERVER: 'EMQ_SERVER'
  readonly JOB_ACTIVE: 'EMQ_JOB_ACTIVE'
  readonly BUNDLE_MISMATCH: 'EMQ_BUNDLE_MISMATCH'
  readonly CLOSED: 'EMQ_CLOSED'
  readonly UNSUPPORTED: 'EMQ_UNSUPPORTED'
  readonly RATE_LIMITED: 'EMQRATE'
  readonly UNAVAILABLE: 'EMQ_UNAVAILABLE'
  readonly NOT_DURABLE: 'EMQ_NOT_DURABLE'
  readonly PARTIAL_BATCH: 'EMQ_PARTIAL_BATCH'
  readonly INTERNAL: 'EMQ_INTERNAL'
  readonly JOB_DEAD: 'EMQ_JOB_DEAD'
}
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/** One row of the core's error table. */
export interface ErrorKindInfo {
  /** `ErrorCode` key: `STALE`, `LEASE_LOST`, ... */
  readonly name: keyof typeof ErrorCode
  readonly code: ErrorCode
  /** The C ABI status number. */
  readonly status: number
  /** The properties this kind's errors carry (`jobId`, `found`, `word`, `lastError`, `retryAfterMs`, `items`). */
  readonly facts: readonly string[]
}

/** Every error kind, in code order. */
export declare function errorKinds(): readonly ErrorKindInfo[]

/**
 * The core's defaults: every omitted option takes these (`null`: unset, see
 * the option's doc). Derived from the core's options schema (`optionSchema()`).
 */
export interface Defaults {
  nodeId: number | null
  clientName: string | null
  connectTimeoutMs: number
  responseTimeoutMs: number
  maxPayload: number
  strictBundle: boolean
  publishEvents: boolean
  wireVersion: string
  waitReplicas: number
  waitTimeoutMs: number
  concurrency: number
  leaseMs: number
  maxAttempts: number
  backoff: Backoff
  backoffBaseMs: number
  backoffCapMs: number
  pumpIntervalMs: number
  idleMaxMs: number
  wakeFallbackMs: number
  shutdownGraceMs: number
  prefetch: number | null
  handlerBatch: number
  deadMaxAgeMs: number | null
  deadMaxLen: number | null
  maxStalls: number
  keepResultMs: number
  browseLimit: number
  pumpLimit: number
}
export declare function defaults(): Defaults

/** One connect or worker option of the core's options schema. */
export interface OptionSpec {
  /** snake_case, as in the core, Python and C. */
  readonly name: string
  /** The camelCase name the options objects here take. */
  readonly jsName: string
  readonly group: 'connect' | 'worker'
  readonly type: 'int' | 'ms' | 'bytes' | 'bool' | 'string' | 'enum'
  /** An `enum`'s names, else null. */
  readonly values: readonly string[] | null
  /** null: unset by default (the doc says what that means). */
  readonly default: number | boolean | string | null
  /** The range the core checks, where it checks one. */
  readonly min: number | null
  readonly max: number | null
  /** One line. */
  readonly doc: string
}
/** The core's options schema: every connect and worker option. */
export declare function optionSchema(): readonly OptionSpec[]

/** Every error this package raises or rejects with. Match on `code`, never on `message`. */
/** One item of a batch cut short (`EMQ_PARTIAL_BATCH`), input order. */
export interface BatchItem {
  id: string
  state: 'written' | 'not_written' | 'unknown'
}

export declare class EchoMQError extends Error {
  constructor(
    message: string,
    code: ErrorCode,
    details?: {
      jobId?: string | null
      found?: string
      word?: string
      items?: BatchItem[]
      retryAfterMs?: number
      lastError?: string | null
      cause?: unknown
    }
  )
  readonly name: 'EchoMQError'
  readonly code: ErrorCode
  /** The C status number of the kind. */
  readonly status: number
  /**
   * The job the error is about (`EMQSTALE`, `EMQ_GONE`, `EMQ_LEASE_LOST`, `EMQ_NOT_DEAD`,
   * `EMQ_JOB_ACTIVE`, `EMQ_NOT_DURABLE`, `EMQ_JOB_DEAD`; see `errorKinds()[i].facts`).
   */
  readonly jobId?: string | null
  /** The former name of `jobId`, kept as an alias. */
  readonly id?: string | null
  /** `EMQ_VERSION_FENCE`: the value found in `{emq}:version`. */
  readonly found?: string
  /** `EMQ_PROTOCOL`: the unknown `EMQ*` class word the server sent. */
  readonly word?: string
  /**
   * `EMQ_PARTIAL_BATCH`: every item's id (chosen or pre-minted) and whether it
   * was written; resend the others with `enqueue(queue, payload, {id})` (exact).
   */
  readonly items?: BatchItem[]
  /** `EMQRATE`: how long to wait before claiming again, ms (0 = until a slot frees). */
  readonly retryAfterMs?: number
  /** `EMQ_JOB_DEAD`: the job's `last_error` (null if none was recorded). */
  readonly lastError?: string | null
}

/** Throw (or reject with) this from a worker handler: the job goes straight to dead. */
export declare class UnrecoverableError extends Error {
  constructor(message?: string, options?: { cause?: unknown })
  readonly name: 'UnrecoverableError'
}

// ---- values -------------------------------------------------------------------

// The values plain verbs answer, as napi declares them from the Rust structs.
export type { BundleMismatch, Counts, Job, Reaped }

/** Opaque bytes; a string is sent as UTF-8. Payloads come back as `Buffer`. */
export type Payload = Buffer | Uint8Array | string

export interface ConnectOptions {
  /** 0..1023; default `EMQ_NODE_ID`, else random per process. */
  nodeId?: number
  /** `CLIENT SETNAME` for every connection. */
  clientName?: string
  /** Default 5000. */
  connectTimeoutMs?: number
  /** Default 30000; 0 = wait forever. */
  responseTimeoutMs?: number
  /** Largest payload accepted, bytes. Default 16 MiB. */
  maxPayload?: number
  /** Make a script-bundle mismatch a connect error. Default false. */
  strictBundle?: boolean
  /** Publish queue events on `emq:{q}:events` after each transition (default true). */
  publishEvents?: boolean
  /**
   * The wire version to speak and fence: `'echomq:2.1.0'` (default) or
   * `'echomq:2.0.0'` (2.1.0 verbs then reject with `EMQ_UNSUPPORTED`).
   */
  wireVersion?: string
  /** Durable writes: WAIT for this many replicas after every enqueue and complete; fewer answers EMQ_NOT_DURABLE (err.id). Default 0. */
  waitReplicas?: number
  /** How long one WAIT may block, ms. Default 1000. */
  waitTimeoutMs?: number
}

/**
 * `enqueue`'s options (all optional): now, later (`runAtMs` or `delayMs`, not
 * both) or under a chosen `id`; or deduplicated (`dedupId`, wire 2.1.0; not
 * with the others); `priority` (wire 2.2.0) with any of them.
 */
export interface EnqueueOptions {
  /** A caller-chosen id (the receipt): an existing row answers `duplicate: true`. */
  id?: string
  /** Run at this unix-ms instant. */
  runAtMs?: number
  /** Run this many ms after the server's now. */
  delayMs?: number
  /** At most one live job per dedup id (`[A-Za-z0-9._-]{1,255}`). */
  dedupId?: string
  /** Release the dedup id after this long even if its job lives (throttle). */
  dedupTtlMs?: number
  /**
   * Wire 2.2.0 (`connect(url, {wireVersion: 'echomq:2.2.0'})`; else EMQ_UNSUPPORTED):
   * `1..=1000000`, higher claimed first, before every job without one; mint order
   * within one priority. `0`: none.
   */
  priority?: number
}

/**
 * One item of `enqueueMany`: a payload (enqueued as `enqueue(queue, payload)`
 * would), or the payload with its own options.
 */
export type EnqueueItem = Payload | ({ payload: Payload } & EnqueueOptions)

/**
 * `upsertRepeat` options (wire 2.1.0): exactly one of `everyMs` and `cron`.
 * Times are unix ms.
 */
export interface RepeatOptions {
  /** Fire every this many ms (1 ms ..= 366 days), on the grid of the first slot. */
  everyMs?: number
  /** A cron pattern: 5 fields, or 6 with seconds first (e.g. `0 9 * * 1-5`). */
  cron?: string
  /** The IANA zone the cron pattern is read in (default `'UTC'`); cron only. */
  tz?: string
  /** The payload every fired job carries (default empty). */
  payload?: Payload
  /** No slot before this time. */
  startAt?: number
  /** No slot after this time; the repeat ends after its last. */
  endAt?: number
  /** Fire at most this many jobs; the repeat ends after the last. */
  limit?: number
}

/** A repeatable job as stored (unset fields are `null`). */
export interface Repeat {
  name: string
  everyMs: number | null
  cron: string | null
  tz: string | null
  payload: Buffer
  /** The slot it waits for: unix ms, server clock. */
  nextRunMs: number
  startAt: number | null
  endAt: number | null
  limit: number | null
  /** Jobs fired since the spec last changed. */
  count: number
  /** The last fire's slot and its job's id. */
  lastRunMs: number | null
  lastId: string | null
}

export interface Enqueued {
  id: string
  /** `true`: a row with this id already existed and was left untouched. */
  duplicate: boolean
}

/** `retry`'s options; omitted ones take the core's defaults. */
export interface RetryOptions {
  /** Default 0. */
  delayMs?: number
  /** Dead-letter at this many attempts. Default 5 (the worker's default). */
  maxAttempts?: number
  /** Stored as `last_error`. Default empty. */
  error?: string
}

/** `browse`'s options. */
export interface BrowseOptions {
  /** Default false. */
  newestFirst?: boolean
  /** Default 100. */
  limit?: number
  range?: TimeRange | null
}

/** What `completeMany` / `extendMany` take; a claimed `Job` fits. */
export interface JobRef {
  id: string
  token: number
}

export type RetryOutcome = 'scheduled' | 'dead'

/** `unknown`: a state another runtime wrote (the word is `rawState`). */
export type JobState = 'pending' | 'active' | 'scheduled' | 'dead' | 'unknown'

export interface JobInfo {
  id: string
  state: JobState
  /** The row's `state` field as stored (`awaiting_children`, ...). */
  rawState: string
  attempts: number
  payload: Buffer
  lastError: string | null
  /** The last progress the holder wrote (2.1.0): a number or a JSON value, or null. */
  progress: unknown
}

/** `pending` / `dead`: mint order (range = mint time); `schedule` / `active`: by score. */
export type BrowseSet = 'pending' | 'dead' | 'schedule' | 'scheduled' | 'active'

/** `[fromMs, toMs)`, unix milliseconds. */
export interface TimeRange {
  fromMs: number
  toMs: number
}

/** One verdict per input, input order, in `Promise.allSettled` shape. */
export type Verdict<T> = { status: 'fulfilled'; value: T } | { status: 'rejected'; reason: EchoMQError }

// ---- client -------------------------------------------------------------------

/**
 * Connect (`redis://`, `rediss://`, `redis+unix://`) and fence before anything
 * else. No `url`: `EMQ_URL`, else `redis://127.0.0.1:6379/`.
 */
export declare function connect(url?: string | null, options?: ConnectOptions): Promise<Client>
export declare function connect(options: ConnectOptions): Promise<Client>

// `Client` and `Queue` as index.js builds them. index.js forwards every method
// of the native client (native.d.ts, which napi generates from the `#[napi]`
// methods in src/) to `Client`, and every per-queue one of those to `Queue`;
// so do these types. Written here by hand is only what index.js writes out
// or reshapes itself (`ClientOwn`, `QueueOwn`, the class bodies): a new plain
// verb is its napi method and nothing here. test/surface.test.js checks these
// types against the methods `Client` and `Queue` have at run time.

/** Native methods that are no verb of their own (`NATIVE_ONLY` in index.js). */
type NativeOnly = 'nodeId' | 'worker' | 'retryWith'

/**
 * A native answer as the Promise resolves it: napi declares an `Option` as
 * `T | undefined | null` (it resolves `T` or `null`) and `()` as `undefined`.
 */
type Answer<T> = [T] extends [undefined] ? void : Exclude<T, undefined>

/**
 * Native methods as index.js forwards them: the same parameters; a Promise
 * (of a synchronous method's value too) that rejects with an `EchoMQError`.
 */
type Forwarded<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Answer<Awaited<R>>> : never
}

/**
 * The per-queue methods of `T` (first parameter a queue name) without that
 * parameter, as index.js forwards them to `Queue` (`CLIENT_ONLY` keeps the
 * others on the client: they take no queue first).
 */
type PerQueue<T> = {
  [K in keyof T as T[K] extends (queue: infer Q, ...rest: any[]) => any
    ? [Q] extends [string]
      ? [string] extends [Q]
        ? K
        : never
      : never
    : never]: T[K] extends (queue: string, ...rest: infer A) => infer R ? (...args: A) => R : never
}

/**
 * The client's methods index.js writes out: other arguments than the native
 * method's (checked options, another shape) or a reshaped answer (`SHAPE`).
 */
interface ClientOwn {
  /**
   * The one enqueue: now under a minted id by default; later (`runAtMs` /
   * `delayMs`), under a chosen `id`, or deduplicated (`dedupId`: `{id of the
   * live holder, duplicate: true}` while it lives) with `options`. A bad
   * combination or an unknown option rejects with `EMQ_INVALID_ARGUMENT`,
   * nothing sent.
   */
  enqueue(queue: string, payload: Payload, options?: EnqueueOptions): Promise<Enqueued>
  /**
   * One pipeline per kind of write; one verdict per item, input order. Every
   * item is checked first: a bad one (`item N: ...`) rejects the whole batch
   * with `EMQ_INVALID_ARGUMENT`, nothing sent.
   */
  enqueueMany(queue: string, items: readonly EnqueueItem[]): Promise<Verdict<Enqueued>[]>
  completeMany(queue: string, jobs: readonly JobRef[]): Promise<Verdict<undefined>[]>
  /** Settle a failed attempt: `retry(queue, id, token, {delayMs, maxAttempts, error})`. */
  retry(queue: string, id: string, token: number, options?: RetryOptions): Promise<RetryOutcome>
  /** The positional form. */
  retry(
    queue: string,
    id: string,
    token: number,
    delayMs: number,
    maxAttempts: number,
    error: string,
  ): Promise<RetryOutcome>
  extendMany(queue: string, jobs: readonly JobRef[], leaseMs: number): Promise<Verdict<undefined>[]>
  /**
   * Create or update the repeatable job `name` (wire 2.1.0). The same spec again
   * keeps its slot and count and replaces the payload; bad input rejects with
   * `EMQ_INVALID_ARGUMENT` and writes nothing.
   */
  upsertRepeat(queue: string, name: string, options: RepeatOptions): Promise<Repeat>
  /** Every repeat of the queue, soonest slot first. */
  listRepeats(queue: string): Promise<Repeat[]>
  job(queue: string, id: string): Promise<JobInfo | null>
  /** Ids in one set: `browse(queue, set, {newestFirst, limit, range})`. */
  browse(queue: string, set: BrowseSet, options?: BrowseOptions): Promise<string[]>
  /** The positional form. `newestFirst` default false, `limit` default 100. */
  browse(
    queue: string,
    set: BrowseSet,
    newestFirst?: boolean,
    limit?: number,
    range?: TimeRange | null,
  ): Promise<string[]>
  /** Subscribe to `emq:{q}:events` on a connection of its own; resolves once subscribed. */
  subscribe(queue: string): Promise<Subscription>
  /** Wait for job `id` to complete or go dead (rejects `EMQ_TIMEOUT` after `timeoutMs`). */
  waitFor(queue: string, id: string, timeoutMs: number): Promise<Settled>
  /** The holder records how far job `id` got: a number or a small JSON value (2.1.0). */
  updateProgress(queue: string, id: string, token: number, value: unknown): Promise<void>
  /** The value a worker kept for job `id` (`keepResultMs`), or null. */
  result(queue: string, id: string): Promise<Buffer | null>
}

/**
 * The client: every verb of docs/API.md as a method returning a Promise that
 * rejects with an `EchoMQError`.
 */
export declare class Client implements AsyncDisposable {
  private constructor()
  /** The node id mixed into the ids this client mints. */
  readonly nodeId: number
  /** A handle on one queue (throws `EMQ_INVALID_QUEUE` at once for a bad name). */
  queue(name: string): Queue
  /** `await using client = await connect()`: `close()` at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>
}
/** Its verbs: those written out above, and every other native one as it is. */
export interface Client extends ClientOwn, Forwarded<Omit<NativeClient, NativeOnly | keyof ClientOwn>> {}

/** The queue handle's own members (`retry` and `browse`: one form of the client's two). */
interface QueueOwn {
  /** Settle a failed attempt: `retry(id, token, {delayMs, maxAttempts, error})`. */
  retry(id: string, token: number, options?: RetryOptions): Promise<RetryOutcome>
  /** Ids in one set: `browse(set, {newestFirst, limit, range})`. */
  browse(set: BrowseSet, options?: BrowseOptions): Promise<string[]>
  /** `new Worker(client, name, handler, options)`. */
  worker(handler: Handler, options?: WorkerOptions): Worker
}

/** One queue of a `Client` (`client.queue('emails')`): its verbs without the name. */
export declare class Queue {
  private constructor()
  readonly name: string
  readonly client: Client
}
/** The client's per-queue verbs, the queue name given. */
export interface Queue extends QueueOwn, PerQueue<Omit<Client, 'queue' | keyof QueueOwn>> {}

// ---- observability ----------------------------------------------------------------

/** How a waited-on job ended. */
export interface Settled {
  state: 'completed' | 'dead'
  /** The job's `last_error` when dead. */
  error: string | null
}

/** One message of `emq:{q}:events` (all values strings). */
export interface QueueEvent {
  queue: string
  /** `added`, `active`, `completed`, `retried`, `dead`, `removed`, `requeued`, `paused`, `resumed`, ... */
  event: string
  /** The job id; `''` for queue-wide events. */
  job: string
  /** Every other field: `token`, `attempts`, `error`, `delay_ms`, `run_at_ms`, ... */
  fields: Record<string, string>
}

/**
 * A live subscription: emits `'event'` for every message and the message's own
 * name (`'completed'`, ...), then `'end'`; also `for await (const e of sub)`.
 * Keeps the process alive until `close()`.
 */
export declare class Subscription extends EventEmitter implements AsyncIterable<QueueEvent> {
  readonly queue: string
  close(): Promise<void>
  [Symbol.asyncIterator](): AsyncIterableIterator<QueueEvent>
}

export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

export interface LogRecord {
  level: Exclude<LogLevel, 'off'>
  /** The Rust module that logged, e.g. `echomq::worker::run`. */
  target: string
  message: string
}

/**
 * Receive core log records at or above `minLevel` (default `'warn'`) on the JS
 * thread; `null` restores the default (warnings and errors to stderr).
 */
export declare function setLogHandler(handler: ((record: LogRecord) => void) | null, minLevel?: LogLevel): void

/**
 * Register EchoMQ's gauges and counters for `queues` in a prom-client registry
 * (pass the `prom-client` module; default registry unless `options.registry`).
 */
export declare function promClientCollector(
  promClient: unknown,
  client: Client,
  queues: string[],
  options?: { registry?: unknown }
): unknown[]

// ---- worker -------------------------------------------------------------------

export type Backoff = 'fixed' | 'exponential' | 'jitter'

export interface WorkerOptions {
  /** Handlers running at once. Default 10. */
  concurrency?: number
  /** Lease per claim, renewed every `leaseMs / 3`. Default 30000. */
  leaseMs?: number
  /** Attempts before a job is dead-lettered. Default 5. */
  maxAttempts?: number
  /** Default `exponential`. */
  backoff?: Backoff
  /** Default 1000. */
  backoffBaseMs?: number
  /** Default 60000. */
  backoffCapMs?: number
  /** How often the worker promotes and reaps. Default 1000. */
  pumpIntervalMs?: number
  /** Longest idle poll interval. Default 50. */
  idleMaxMs?: number
  /** How long in-flight handlers may run after `close()`. Default 10000. */
  shutdownGraceMs?: number
  /**
   * Jobs claimed ahead of free slots, so the next claim overlaps running
   * handlers. Default: adaptive (as many as the slots finish during one claim
   * round trip, at most `concurrency`; none for slow handlers); 0 claims only
   * for free slots.
   */
  prefetch?: number
  /**
   * Jobs handed to the handler per crossing into JS (they run concurrently;
   * their slots free when the whole batch is done). Default 1.
   */
  handlerBatch?: number
  /** Dead-set retention: the pump deletes dead jobs minted longer ago than this. Default: keep all. */
  deadMaxAgeMs?: number
  /** Dead-set retention: the pump keeps at most this many dead jobs (oldest go first). Default: keep all. */
  deadMaxLen?: number
  /** Stalls (lapsed leases) a job survives before it is dead-lettered `stalled`. Default 2. */
  maxStalls?: number
  /**
   * Keep what the handler returns as the job's result for this long (2.1.0): Buffers and
   * strings as they are, other values as JSON. Default 0: completion deletes the job.
   */
  keepResultMs?: number
  /**
   * While `run()` runs, SIGTERM closes the worker gracefully, unless the
   * application has a SIGTERM listener of its own. Default true.
   */
  handleSignals?: boolean
  /**
   * How long an idle worker stays parked on the queue's wake list before it
   * looks anyway; hints from EchoMQ producers wake it at once, this bounds the
   * delay for jobs written without one. Default 5000.
   */
  wakeFallbackMs?: number
}

export interface WorkerStats {
  claimed: number
  completed: number
  retried: number
  dead: number
  leaseLost: number
  inFlight: number
  /** Claims that failed (connection lost, timeout); retried after a pause. */
  claimFailures: number
  /** Heartbeat round trips that failed (those leases were not renewed). */
  heartbeatFailures: number
  /** Settlements that failed or timed out (the job's lease lapses; it is reaped). */
  settleFailures: number
  /** Jobs handed back to pending unrun (prefetched at close, past the grace period). */
  released: number
}

/** The job a worker hands its handler: it also writes its own progress and log. */
export interface HandlerJob extends Job {
  /** As the job's holder: record how far it got (a number or a small JSON value). */
  updateProgress(value: unknown): Promise<void>
  /** Append a line to the job's log; resolves to its length. */
  log(line: string, maxLines?: number | null): Promise<number>
}

/**
 * Resolve = done (the value is kept as the job's result with `keepResultMs`); throw /
 * reject = retry with backoff; throw `UnrecoverableError` = dead now. `signal` aborts
 * when the job's lease is lost or the worker shuts down (`signal.reason`: an
 * `EchoMQError`, `EMQ_LEASE_LOST` / `EMQ_CLOSED`).
 */
export type Handler = (job: HandlerJob, signal: AbortSignal) => unknown | Promise<unknown>

/** A worker event; fields that do not fit the event are absent. */
export interface WorkerEvent {
  name: 'active' | 'completed' | 'failed' | 'dead' | 'leaseLost' | 'stalled' | 'drained' | 'closed'
  id?: string
  token?: number
  error?: string
  /** `failed`: ms until the next attempt; `null` when the job went dead. */
  retryInMs?: number | null
  durationMs?: number
  /** `stalled`: jobs the reap pump returned to pending. */
  count?: number
}

/** Core worker event name → the Worker's EventEmitter event name. */
export declare const WORKER_EVENTS: Readonly<Record<string, string>>

/**
 * A worker; an EventEmitter of `active`, `completed`, `failed`, `dead`,
 * `leaseLost`, `stalled`, `drained`, `closed` (a `WorkerEvent`) and `error`
 * (an `EchoMQError`; dropped when nobody listens). Attach listeners before `run()`.
 */
export declare class Worker extends EventEmitter implements AsyncDisposable {
  constructor(client: Client, queue: string, handler: Handler, options?: WorkerOptions)
  /** Claim and process until `close()`; resolves after the graceful drain. */
  run(): Promise<void>
  /** Stop claiming, abort running handlers' signals; resolves once they finished (within the grace period). */
  close(): Promise<void>
  /** `await using worker = ...`: `close()` at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>
  stats(): WorkerStats
}

// ---- pure helpers (no server) ----------------------------------------------

/** A fresh `JOB` id (strictly increasing per process). */
export declare function mintJobId(nodeId?: number): string

export interface ParsedId {
  namespace: string
  /** 63 bits: a `bigint`. */
  snowflake: bigint
  mintedAtMs: number
}

/** Throws `EchoMQError` `EMQ_INVALID_ID` for anything but a 14-byte branded id. */
export declare function parseId(text: string): ParsedId
export declare function isValidId(text: string): boolean
export declare function encodeId(namespace: string, snowflake: bigint | number): string
/** `JOB` + base62((ms − epoch) ≪ 22): a lex bound for mint time. */
export declare function lexBound(unixMs: number): string
export declare function isValidQueue(name: string): boolean

export type KeyType = 'pending' | 'active' | 'schedule' | 'dead' | 'meta'
/** `emq:{q}:<type>` */
export declare function queueKey(queue: string, type: KeyType): string
/** `emq:{q}:job:<id>` */
export declare function jobKey(queue: string, id: string): string

export interface KeyClass {
  class: 'queue' | 'job' | 'metric' | 'reserve' | 'unclassified'
  /** The queue of a per-queue key, and of `{emq}:migration:<q>`. */
  queue?: string
  /** The suffix after `emq:{q}:`: a `KeyType`, or `metrics:completed` / `metrics:failed`. */
  keyType?: KeyType | 'metrics:completed' | 'metrics:failed'
  id?: string
  /** The suffix after `{emq}:`: `version`, `locks`, `bundle`, `migration:<q>`. */
  member?: string
}
export declare function classify(key: string | Buffer): KeyClass
/** CRC16/XMODEM of the hashtag, mod 16384. */
export declare function slot(key: string | Buffer): number
/** `echomq:2.0.0` */
export declare function protocolVersion(): string

// Only the declarations marked `export` are the package's (the helper types
// above are not).
export {}
