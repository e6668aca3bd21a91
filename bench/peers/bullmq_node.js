#!/usr/bin/env node
// BullMQ (Node) peer driver for the EchoMQ benchmark. Contract: bench/DRIVERS.md.
//
//   enqueue-single : await queue.add('bench', data), one in flight
//   enqueue-bulk   : await queue.addBulk([...1000 jobs]) per chunk
//   prefill        : same as enqueue-bulk
//   process        : new Worker(queue, async () => {}, { concurrency }), BullMQ defaults
//                    otherwise (removeOnComplete etc. untouched); timed from worker
//                    construction to the N-th 'completed' event
//   latency        : Worker (concurrency 50) + a producer in the same process sending
//                    single adds on an absolute schedule of --rate jobs/s (open loop:
//                    an add is not awaited before the next is due; <= 1000 in flight);
//                    the processor records start - data.t
//   idle           : Worker (--concurrency, default 4) with BullMQ's defaults, idle for
//                    --idle-seconds (stderr says 'idle-start' when it begins, so the
//                    orchestrator can count the server's commands), then one add every
//                    ~200 ms, each awaited until its job started; p50/p99 of start - data.t
//
// Progress to stderr; the last stdout line is the JSON result.
'use strict';

const { performance } = require('node:perf_hooks');
const { setTimeout: sleep, setImmediate: tick } = require('node:timers/promises');
const { Queue, Worker } = require('bullmq');
const BULLMQ_VERSION = require('bullmq/package.json').version;

const VERSION = `bullmq ${BULLMQ_VERSION}`;
const CHUNK = 1000;
const BUDGET_S = Number(process.env.BENCH_BUDGET_SECONDS || 35);
const STALL_S = Number(process.env.BENCH_STALL_SECONDS || 120);
const HARD_S = Number(process.env.BENCH_HARD_SECONDS || 600);
const WORKLOADS = ['enqueue-single', 'enqueue-bulk', 'prefill', 'process', 'latency', 'idle'];

function log(...a) { console.error(...a); }

function parseArgs(argv) {
  const args = { url: 'redis://127.0.0.1:6379/', queue: 'bench', n: null,
                 concurrency: null, rate: 1000, payloadSize: 100, idleSeconds: 10 };
  const rest = argv.slice(2);
  args.workload = rest.shift();
  while (rest.length) {
    const k = rest.shift();
    const v = rest.shift();
    if (v === undefined) throw new Error(`missing value for ${k}`);
    switch (k) {
      case '--url': args.url = v; break;
      case '--queue': args.queue = v; break;
      case '--n': args.n = parseInt(v, 10); break;
      case '--concurrency': args.concurrency = parseInt(v, 10); break;
      case '--rate': args.rate = Number(v); break;
      case '--payload-size': args.payloadSize = parseInt(v, 10); break;
      case '--idle-seconds': args.idleSeconds = Number(v); break;
      default: throw new Error(`unknown option ${k}`);
    }
  }
  if (!WORKLOADS.includes(args.workload)) throw new Error(`unknown workload ${args.workload}`);
  if (!Number.isInteger(args.n) || args.n < 0) throw new Error('--n is required');
  return args;
}

function connectionFromUrl(url) {
  const u = new URL(url);
  const c = { host: u.hostname || '127.0.0.1', port: Number(u.port || 6379) };
  const db = u.pathname && u.pathname.length > 1 ? parseInt(u.pathname.slice(1), 10) : 0;
  if (db) c.db = db;
  if (u.password) c.password = decodeURIComponent(u.password);
  if (u.username) c.username = decodeURIComponent(u.username);
  return c;
}

// Wall-clock ns (float ms * 1e6); precise to well under a microsecond.
function nowNs() { return Math.round((performance.timeOrigin + performance.now()) * 1e6); }

function payload(i, size, t) {
  const d = { i, t: t === undefined ? nowNs() : t, pad: '' };
  const base = JSON.stringify(d).length;
  d.pad = 'x'.repeat(Math.max(0, size - base));
  return d;
}

function percentile(sorted, q) {
  if (!sorted.length) return null;
  const k = Math.max(0, Math.min(sorted.length - 1, Math.round(q / 100 * sorted.length + 0.5) - 1));
  return sorted[k];
}

function emit(rec) {
  const out = { workload: rec.workload, jobs: rec.jobs,
                seconds: rec.seconds == null ? null : Number(rec.seconds.toFixed(6)),
                p50_ms: rec.p50 == null ? null : Number(rec.p50.toFixed(3)),
                p99_ms: rec.p99 == null ? null : Number(rec.p99.toFixed(3)),
                version: VERSION, note: rec.note || '' };
  process.stdout.write(JSON.stringify(out) + '\n');
}

// Watchdog: exit 1 when nothing progresses for STALL_S or the run exceeds HARD_S.
const wd = { start: Date.now(), last: Date.now() };
function progress() { wd.last = Date.now(); }
const wdTimer = setInterval(() => {
  const now = Date.now();
  if (now - wd.last > STALL_S * 1000 || now - wd.start > HARD_S * 1000) {
    log(`watchdog: no progress for ${((now - wd.last) / 1000).toFixed(0)}s; giving up`);
    process.exit(1);
  }
}, 1000);
wdTimer.unref();

function budgetNote(done, n, what) {
  return done < n
    ? `BullMQ run stopped after the ${BUDGET_S}s budget; ${what} ${done} of the requested ${n} (jobs is the real count)`
    : '';
}

async function enqueueSingle(args, conn) {
  const q = new Queue(args.queue, { connection: conn });
  await q.waitUntilReady();
  const t0 = performance.now();
  let done = 0;
  for (let i = 0; i < args.n; i++) {
    await q.add('bench', payload(i, args.payloadSize));
    done++;
    if ((done & 255) === 0) {
      progress();
      if (performance.now() - t0 > BUDGET_S * 1000) break;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  await q.close();
  return { jobs: done, seconds: secs, note: budgetNote(done, args.n, 'enqueued') };
}

async function enqueueBulk(args, conn) {
  const q = new Queue(args.queue, { connection: conn });
  await q.waitUntilReady();
  const t0 = performance.now();
  let done = 0;
  while (done < args.n) {
    const k = Math.min(CHUNK, args.n - done);
    const jobs = new Array(k);
    for (let j = 0; j < k; j++) jobs[j] = { name: 'bench', data: payload(done + j, args.payloadSize) };
    await q.addBulk(jobs);
    done += k;
    progress();
    if (performance.now() - t0 > BUDGET_S * 1000) break;
  }
  const secs = (performance.now() - t0) / 1000;
  await q.close();
  return { jobs: done, seconds: secs, note: budgetNote(done, args.n, 'enqueued') };
}

async function processJobs(args, conn) {
  const concurrency = args.concurrency || 1;
  let completed = 0;
  let tEnd = null;
  let resolveDone;
  const doneP = new Promise((r) => { resolveDone = r; });
  const t0 = performance.now();
  const worker = new Worker(args.queue, async () => {}, { connection: conn, concurrency });
  worker.on('completed', () => {
    completed++;
    if ((completed & 255) === 0) progress();
    if (completed === args.n) { tEnd = performance.now(); resolveDone(); }
  });
  worker.on('failed', (job, err) => log(`job ${job && job.id} failed: ${err}`));
  worker.on('error', (err) => log(`worker error: ${err}`));
  if (args.n === 0) resolveDone();
  const budget = setTimeout(() => { tEnd = performance.now(); resolveDone(); }, BUDGET_S * 1000);
  await doneP;
  clearTimeout(budget);
  if (tEnd === null) tEnd = performance.now();
  await worker.close();
  const note = budgetNote(completed, args.n, 'processed');
  return { jobs: completed, seconds: (tEnd - t0) / 1000, note };
}

async function latency(args, conn) {
  const concurrency = args.concurrency && args.concurrency > 1 ? args.concurrency : 50;
  const n = args.n;
  const lats = new Array(n);
  let seen = 0;
  let completed = 0;
  let resolveDone;
  const doneP = new Promise((r) => { resolveDone = r; });
  const worker = new Worker(args.queue, async (job) => {
    lats[seen++] = (nowNs() - job.data.t) / 1e6;
  }, { connection: conn, concurrency });
  worker.on('completed', () => {
    completed++;
    if ((completed & 255) === 0) progress();
    if (completed === n) resolveDone();
  });
  worker.on('failed', (job, err) => log(`job ${job && job.id} failed: ${err}`));
  worker.on('error', (err) => log(`worker error: ${err}`));
  await worker.waitUntilReady();
  await sleep(200); // let the worker reach its blocking fetch
  const q = new Queue(args.queue, { connection: conn });
  await q.waitUntilReady();

  const t0 = performance.now();
  const interval = 1000 / args.rate;
  const MAX_INFLIGHT = 1000;
  const pending = new Set();
  let inflight = 0;
  for (let i = 0; i < n; i++) {
    const due = t0 + i * interval;
    for (;;) {
      const d = due - performance.now();
      if (d <= 0) break;
      if (d > 2) await sleep(d - 1); else await tick();
    }
    // Open loop: send at the scheduled time without waiting for the previous add
    // (ioredis pipelines them); bounded so an overloaded server cannot grow memory.
    const p = q.add('bench', payload(i, args.payloadSize)).finally(() => { inflight--; });
    inflight++;
    pending.add(p);
    p.finally(() => pending.delete(p)).catch(() => {});
    if (inflight >= MAX_INFLIGHT) await Promise.race(pending);
    if ((i & 255) === 0) progress();
  }
  await Promise.all(pending);
  const sentS = (performance.now() - t0) / 1000;
  if (n === 0) resolveDone();
  await doneP;
  const secs = (performance.now() - t0) / 1000;
  await worker.close();
  await q.close();
  const sorted = lats.slice(0, seen).sort((a, b) => a - b);
  const offered = n / Math.max(sentS, 1e-9);
  let note = `worker concurrency ${concurrency}, producer in the same process, adds sent open-loop on schedule; ` +
               `offered ${offered.toFixed(0)} jobs/s (asked ${args.rate})`;
  if (secs > 1.2 * sentS + 1.0) {
    note += `; the worker fell behind (completed ${(completed / secs).toFixed(0)} jobs/s overall, ` +
            `last job done ${(secs - sentS).toFixed(1)}s after the last send): latency includes the backlog`;
  }
  return { jobs: n, seconds: secs, note, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function idle(args, conn) {
  const concurrency = args.concurrency || 4;
  const lats = [];
  const worker = new Worker(args.queue, async (job) => {
    lats.push((nowNs() - job.data.t) / 1e6);
  }, { connection: conn, concurrency });
  worker.on('error', (err) => log(`worker error: ${err}`));
  await worker.waitUntilReady();
  const q = new Queue(args.queue, { connection: conn });
  await q.waitUntilReady();
  await sleep(500);
  log('idle-start');
  await sleep(args.idleSeconds * 1000);
  const t0 = performance.now();
  for (let i = 0; i < args.n; i++) {
    await q.add('bench', payload(i, args.payloadSize));
    const deadline = performance.now() + 10000;
    while (lats.length < i + 1) {
      if (performance.now() > deadline) throw new Error(`job ${i} did not start within 10 s`);
      await sleep(1);
    }
    progress();
    await sleep(200);
  }
  const secs = (performance.now() - t0) / 1000;
  await worker.close();
  await q.close();
  const sorted = lats.slice().sort((a, b) => a - b);
  return { jobs: args.n, seconds: secs, note: `worker concurrency ${concurrency}, BullMQ defaults`,
           p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function main() {
  let args;
  try { args = parseArgs(process.argv); } catch (e) { log(String(e)); process.exit(2); }
  const conn = connectionFromUrl(args.url);
  log(`${VERSION}: ${args.workload} n=${args.n} c=${args.concurrency} url=${args.url}`);
  let r;
  switch (args.workload) {
    case 'enqueue-single': r = await enqueueSingle(args, conn); break;
    case 'enqueue-bulk':
    case 'prefill': r = await enqueueBulk(args, conn); break;
    case 'process': r = await processJobs(args, conn); break;
    case 'latency': r = await latency(args, conn); break;
    case 'idle': r = await idle(args, conn); break;
  }
  emit({ workload: args.workload, ...r });
  process.exit(0);
}

main().catch((e) => { log(e && e.stack || String(e)); process.exit(1); });
