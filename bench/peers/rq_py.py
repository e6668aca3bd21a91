#!/usr/bin/env python3
"""RQ (python-rq) peer driver for the EchoMQ benchmark (contract: bench/DRIVERS.md).

enqueue-single : Queue.enqueue(rq_tasks.noop, payload), one at a time
enqueue-bulk   : Queue.enqueue_many([Queue.prepare_data(...)]) in chunks of 1,000
prefill        : same as enqueue-bulk
process        : rq.SimpleWorker (no fork per job), burst mode. RQ runs one job at a
                 time per worker, so --concurrency C > 1 runs P = min(C, RQ_MAX_PROCS=4)
                 SimpleWorker *processes* (see the note in the output).
latency        : P SimpleWorker processes (non-burst, blocking dequeue) + a paced
                 producer; the rate is capped at RQ_LATENCY_MAX_RATE (default 300/s)
                 because RQ cannot sustain 2,000 jobs/s here.

RQ is slow: every workload stops once BENCH_BUDGET_SECONDS (default 35 s) has
elapsed and reports the number of jobs it actually did (jobs < N, with a note).
Worker logging is set to WARNING (RQ's INFO logs two lines per job to stderr,
which would measure terminal I/O rather than the queue).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402
import rq  # noqa: E402
from rq import Queue, SimpleWorker  # noqa: E402

import rq_tasks  # noqa: E402
from _common import (CHUNK, Watchdog, emit, log, now_ns, parse_args, payload,  # noqa: E402
                     percentile)

VERSION = f"rq {rq.__version__}"
BUDGET = float(os.environ.get("BENCH_BUDGET_SECONDS", "35"))
MAX_PROCS = int(os.environ.get("RQ_MAX_PROCS", "4"))
LATENCY_MAX_RATE = float(os.environ.get("RQ_LATENCY_MAX_RATE", "300"))


def budget_note(done, n, what):
    if done < n:
        return (f"RQ is slow: stopped after the {BUDGET:.0f}s budget; {what} {done} of "
                f"the requested {n} (jobs is the real count)")
    return ""


# ---------------------------------------------------------------- enqueue

def enqueue_single(args, wd):
    r = redis.Redis.from_url(args.url)
    q = Queue(args.queue, connection=r)
    t0 = time.perf_counter()
    done = 0
    for i in range(args.n):
        q.enqueue(rq_tasks.noop, payload(i, args.payload_size))
        done += 1
        if (done & 255) == 0:
            wd.tick()
            if time.perf_counter() - t0 > BUDGET:
                break
    secs = time.perf_counter() - t0
    return done, secs, budget_note(done, args.n, "enqueued")


def enqueue_bulk(args, wd):
    r = redis.Redis.from_url(args.url)
    q = Queue(args.queue, connection=r)
    t0 = time.perf_counter()
    done = 0
    while done < args.n:
        k = min(CHUNK, args.n - done)
        datas = [Queue.prepare_data(rq_tasks.noop, args=(payload(done + j, args.payload_size),))
                 for j in range(k)]
        q.enqueue_many(datas)
        done += k
        wd.tick()
        if time.perf_counter() - t0 > BUDGET:
            break
    secs = time.perf_counter() - t0
    return done, secs, budget_note(done, args.n, "enqueued")


# ---------------------------------------------------------------- process

class _CountingWorker(SimpleWorker):
    """rq.SimpleWorker that counts executed jobs, remembers when the last one
    finished, and stops itself (warm) once the time budget is spent."""

    deadline = math.inf
    executed = 0
    last_done = None

    def execute_job(self, job, queue):
        super().execute_job(job, queue)
        self.executed += 1
        self.last_done = time.monotonic()
        if self.last_done > self.deadline:
            self._stop_requested = True


def _process_child(url, qname, quota, deadline, out):
    try:
        r = redis.Redis.from_url(url)
        w = _CountingWorker([Queue(qname, connection=r)], connection=r)
        w.deadline = deadline
        w.work(burst=True, max_jobs=quota, logging_level="WARNING")
        out.put(("ok", w.executed, w.last_done))
    except BaseException as e:  # report, never hang the parent
        out.put(("err", repr(e), None))


def process(args, wd):
    c = max(1, args.concurrency)
    procs = 1 if c == 1 else min(c, MAX_PROCS)
    quotas = [args.n // procs + (1 if i < args.n % procs else 0) for i in range(procs)]
    t0 = time.monotonic()
    deadline = t0 + BUDGET
    notes = []
    if procs == 1:
        r = redis.Redis.from_url(args.url)
        w = _CountingWorker([Queue(args.queue, connection=r)], connection=r)
        w.deadline = deadline
        w.work(burst=True, max_jobs=args.n, logging_level="WARNING")
        results = [("ok", w.executed, w.last_done)]
    else:
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        ps = [ctx.Process(target=_process_child, args=(args.url, args.queue, quotas[i], deadline, out),
                          daemon=True) for i in range(procs)]
        for p in ps:
            p.start()
        results = []
        while len(results) < procs:
            try:
                results.append(out.get(timeout=1.0))
                wd.tick()
            except Exception:
                if not any(p.is_alive() for p in ps) and out.empty():
                    break
        for p in ps:
            p.join(5)
        notes.append(f"RQ runs one job at a time per worker: concurrency {c} was run as "
                     f"{procs} SimpleWorker processes (not {c}: 2-core machine)")
    errs = [x for x in results if x[0] != "ok"]
    if errs or len(results) < (1 if procs == 1 else procs):
        log(f"worker failure: {errs or 'a worker process died'}")
        sys.exit(1)
    done = sum(x[1] for x in results)
    ends = [x[2] for x in results if x[2] is not None]
    secs = (max(ends) if ends else time.monotonic()) - t0
    bn = budget_note(done, args.n, "processed")
    if bn:
        notes.append(bn)
    return done, secs, "; ".join(notes)


# ---------------------------------------------------------------- latency

def _latency_child(url, qname, ready, out):
    try:
        batch = []
        last = [time.monotonic()]

        def sink(ms):
            batch.append(ms)
            now = time.monotonic()
            if len(batch) >= 50 or now - last[0] > 0.05:
                out.put(list(batch))
                batch.clear()
                last[0] = now

        rq_tasks._sink = sink
        r = redis.Redis.from_url(url)

        class W(SimpleWorker):
            def execute_job(self, job, queue):
                super().execute_job(job, queue)
                if batch:  # flush promptly so the parent sees the tail
                    out.put(list(batch))
                    batch.clear()

        w = W([Queue(qname, connection=r)], connection=r)
        ready.put(os.getpid())
        w.work(burst=False, logging_level="WARNING")
    except BaseException as e:
        if not isinstance(e, (KeyboardInterrupt, SystemExit)):
            out.put(("err", repr(e)))


def latency(args, wd):
    c = args.concurrency if args.concurrency and args.concurrency > 1 else 50
    procs = min(c, MAX_PROCS)
    rate = min(args.rate, LATENCY_MAX_RATE)
    n = min(args.n, max(1, int(rate * BUDGET * 0.8)))
    ctx = mp.get_context("fork")
    out, ready = ctx.Queue(), ctx.Queue()
    ps = [ctx.Process(target=_latency_child, args=(args.url, args.queue, ready, out), daemon=True)
          for _ in range(procs)]
    for p in ps:
        p.start()
    for _ in range(procs):
        ready.get(timeout=30)
    time.sleep(0.3)  # let each worker reach its blocking dequeue

    r = redis.Redis.from_url(args.url)
    q = Queue(args.queue, connection=r)
    lats = []

    def drain():
        while True:
            try:
                item = out.get_nowait()
            except Exception:
                return
            if isinstance(item, tuple):
                log(f"worker failure: {item}")
                sys.exit(1)
            lats.extend(item)
            wd.tick()

    t0 = time.monotonic()
    for i in range(n):
        due = t0 + i / rate
        d = due - time.monotonic()
        if d > 0:
            time.sleep(d)
        q.enqueue(rq_tasks.record, payload(i, args.payload_size))
        if (i & 63) == 0:
            wd.tick()
            drain()
    sent_secs = time.monotonic() - t0
    while len(lats) < n:
        try:
            item = out.get(timeout=1.0)
        except Exception:
            if not any(p.is_alive() for p in ps):
                log("all worker processes died")
                sys.exit(1)
            continue
        if isinstance(item, tuple):
            log(f"worker failure: {item}")
            sys.exit(1)
        lats.extend(item)
        wd.tick()
    secs = time.monotonic() - t0
    for p in ps:
        os.kill(p.pid, signal.SIGTERM)
    for p in ps:
        p.join(5)
        if p.is_alive():
            p.kill()
    lats.sort()
    notes = [f"{procs} SimpleWorker processes (RQ runs one job per worker; concurrency {c} "
             f"not feasible on 2 cores)",
             f"offered {n / sent_secs:.0f} jobs/s"]
    if rate < args.rate:
        notes.append(f"rate capped at {rate:.0f}/s (asked {args.rate:.0f}/s): RQ cannot keep up "
                     f"with the requested rate here, latency would only measure queue growth")
    if n < args.n:
        notes.append(f"N reduced to {n} to fit the {BUDGET:.0f}s budget at that rate")
    return n, secs, "; ".join(notes), percentile(lats, 50), percentile(lats, 99)


def main():
    args = parse_args()
    wd = Watchdog(f"rq {args.workload}")
    log(f"{VERSION}: {args.workload} n={args.n} c={args.concurrency} url={args.url}")
    if args.workload == "enqueue-single":
        jobs, secs, note = enqueue_single(args, wd)
        emit(args.workload, jobs, secs, VERSION, note)
    elif args.workload in ("enqueue-bulk", "prefill"):
        jobs, secs, note = enqueue_bulk(args, wd)
        emit(args.workload, jobs, secs, VERSION, note)
    elif args.workload == "process":
        jobs, secs, note = process(args, wd)
        emit(args.workload, jobs, secs, VERSION, note)
    elif args.workload == "latency":
        jobs, secs, note, p50, p99 = latency(args, wd)
        emit(args.workload, jobs, secs, VERSION, note, p50=p50, p99=p99)


if __name__ == "__main__":
    main()
