#!/usr/bin/env python3
"""BullMQ for Python (PyPI `bullmq`) peer driver. Contract: bench/DRIVERS.md.

enqueue-single : await Queue.add("bench", data), one in flight
enqueue-bulk   : await Queue.addBulk([...1000 jobs]) per chunk
prefill        : same as enqueue-bulk
process        : Worker(queue, async no-op, {"concurrency": C}), library defaults otherwise
                 (removeOnComplete etc. untouched); timed from Worker construction to the
                 N-th "completed" event
latency        : Worker (concurrency 50) and a producer in the same asyncio loop; single
                 adds on an absolute schedule of --rate jobs/s, each awaited (the Python
                 port uses one connection per Queue, so concurrent adds would serialize
                 on it anyway); the processor records start - data["t"]

Every workload stops once BENCH_BUDGET_SECONDS (default 35 s) has elapsed and reports
the number of jobs it actually did.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bullmq  # noqa: E402
from bullmq import Queue, Worker  # noqa: E402

from _common import CHUNK, Watchdog, emit, log, now_ns, parse_args, payload, percentile  # noqa: E402

VERSION = f"bullmq-python {bullmq.__version__}"
BUDGET = float(os.environ.get("BENCH_BUDGET_SECONDS", "35"))
NAME = "bench"


def budget_note(done, n, what):
    if done < n:
        return (f"stopped after the {BUDGET:.0f}s budget; {what} {done} of the requested "
                f"{n} (jobs is the real count)")
    return ""


async def enqueue_single(args, wd):
    q = Queue(args.queue, {"connection": args.url})
    t0 = time.perf_counter()
    done = 0
    for i in range(args.n):
        await q.add(NAME, payload(i, args.payload_size))
        done += 1
        if (done & 255) == 0:
            wd.tick()
            if time.perf_counter() - t0 > BUDGET:
                break
    secs = time.perf_counter() - t0
    await q.close()
    return done, secs, budget_note(done, args.n, "enqueued")


async def enqueue_bulk(args, wd):
    q = Queue(args.queue, {"connection": args.url})
    t0 = time.perf_counter()
    done = 0
    while done < args.n:
        k = min(CHUNK, args.n - done)
        await q.addBulk([{"name": NAME, "data": payload(done + j, args.payload_size)}
                         for j in range(k)])
        done += k
        wd.tick()
        if time.perf_counter() - t0 > BUDGET:
            break
    secs = time.perf_counter() - t0
    await q.close()
    return done, secs, budget_note(done, args.n, "enqueued")


async def _noop(job, token):
    return None


async def process(args, wd):
    c = max(1, args.concurrency or 1)
    done_ev = asyncio.Event()
    state = {"completed": 0, "t_end": None}

    def on_completed(job, result):
        state["completed"] += 1
        if (state["completed"] & 255) == 0:
            wd.tick()
        if state["completed"] == args.n:
            state["t_end"] = time.perf_counter()
            done_ev.set()

    t0 = time.perf_counter()
    worker = Worker(args.queue, _noop, {"connection": args.url, "concurrency": c})
    worker.on("completed", on_completed)
    worker.on("failed", lambda job, err: log(f"job {getattr(job, 'id', '?')} failed: {err}"))
    if args.n == 0:
        done_ev.set()
    try:
        await asyncio.wait_for(done_ev.wait(), BUDGET)
    except asyncio.TimeoutError:
        state["t_end"] = time.perf_counter()
    t_end = state["t_end"] or time.perf_counter()
    await asyncio.wait_for(worker.close(), 60)
    return state["completed"], t_end - t0, budget_note(state["completed"], args.n, "processed")


async def latency(args, wd):
    c = args.concurrency if args.concurrency and args.concurrency > 1 else 50
    n = args.n
    lats = []
    done_ev = asyncio.Event()
    state = {"completed": 0}

    async def record(job, token):
        lats.append((now_ns() - job.data["t"]) / 1e6)

    def on_completed(job, result):
        state["completed"] += 1
        if (state["completed"] & 255) == 0:
            wd.tick()
        if state["completed"] == n:
            done_ev.set()

    worker = Worker(args.queue, record, {"connection": args.url, "concurrency": c})
    worker.on("completed", on_completed)
    worker.on("failed", lambda job, err: log(f"job {getattr(job, 'id', '?')} failed: {err}"))
    q = Queue(args.queue, {"connection": args.url})
    await asyncio.sleep(0.3)  # let the worker start and reach its blocking fetch

    loop = asyncio.get_running_loop()
    t0 = loop.time()
    sent = 0
    for i in range(n):
        d = t0 + i / args.rate - loop.time()
        if d > 0:
            await asyncio.sleep(d)
        await q.add(NAME, payload(i, args.payload_size))
        sent += 1
        if (i & 255) == 0:
            wd.tick()
        if loop.time() - t0 > BUDGET:
            break
    sent_secs = loop.time() - t0
    if state["completed"] >= sent:
        done_ev.set()
    while state["completed"] < sent:
        try:
            await asyncio.wait_for(done_ev.wait(), 1.0)
        except asyncio.TimeoutError:
            pass
        if state["completed"] >= sent:
            break
    secs = loop.time() - t0
    await asyncio.wait_for(worker.close(), 60)
    await q.close()
    lats.sort()
    notes = [f"worker concurrency {c}, producer in the same asyncio loop, one add in flight; "
             f"offered {sent / max(sent_secs, 1e-9):.0f} jobs/s (asked {args.rate:.0f})"]
    if secs > 1.2 * sent_secs + 1.0:
        notes.append(f"the worker fell behind (completed {state['completed'] / secs:.0f} jobs/s "
                     f"overall, last job done {secs - sent_secs:.1f}s after the last send): "
                     f"latency includes the backlog")
    if sent < n:
        notes.append(f"stopped sending after the {BUDGET:.0f}s budget: {sent} of {n}")
    return sent, secs, "; ".join(notes), percentile(lats, 50), percentile(lats, 99)


def main():
    args = parse_args()
    wd = Watchdog(f"bullmq-python {args.workload}")
    log(f"{VERSION}: {args.workload} n={args.n} c={args.concurrency} url={args.url}")
    p50 = p99 = None
    if args.workload == "enqueue-single":
        jobs, secs, note = asyncio.run(enqueue_single(args, wd))
    elif args.workload in ("enqueue-bulk", "prefill"):
        jobs, secs, note = asyncio.run(enqueue_bulk(args, wd))
    elif args.workload == "process":
        jobs, secs, note = asyncio.run(process(args, wd))
    else:
        jobs, secs, note, p50, p99 = asyncio.run(latency(args, wd))
    emit(args.workload, jobs, secs, VERSION, note, p50=p50, p99=p99)


if __name__ == "__main__":
    main()
