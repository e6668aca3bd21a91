#!/usr/bin/env python3
"""chasquimq (PyPI, Python binding of a Rust engine) peer driver. Contract: bench/DRIVERS.md.

chasquimq's engine uses Redis >= 8.6 commands on every path: XADD ... IDMP (idempotent
producer ids, Redis 8.6) for each enqueue and XACKDEL (Redis 8.2) for each ack. Against
an older redis-server every add fails with "ERR Invalid stream ID specified as stream
command argument". The driver therefore checks the server version first and reports
every workload `unsupported` below 8.6, saying why.

On Redis >= 8.6 (NOT exercised on the benchmark machine, which ships Redis 7.0):
enqueue-single : await Queue.add("bench", data), one in flight
enqueue-bulk   : await Queue.add_bulk([...1000 jobs]) per chunk (engine pipelines them)
prefill        : same as enqueue-bulk
process        : Worker(queue, async no-op, concurrency=C) with chasquimq's defaults otherwise;
                 timed from Worker construction to the N-th handler return (the engine
                 acks in batches after that; close() drains them)
latency        : Worker (concurrency 50) in the same asyncio loop + single adds on an
                 absolute schedule; the handler records start - data["t"]
Keys: {chasqui:<queue>}:stream (a Redis stream, consumer group "default").
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (CHUNK, Watchdog, emit, emit_unsupported, log, now_ns, parse_args,  # noqa: E402
                     payload, percentile)

NAME = "bench"
BUDGET = float(os.environ.get("BENCH_BUDGET_SECONDS", "35"))
MIN_REDIS = (8, 6)

try:
    import chasquimq  # noqa: E402
    from chasquimq import Queue, Worker  # noqa: E402
    VERSION = f"chasquimq {chasquimq.version()}"
    IMPORT_ERROR = None
except Exception as e:  # pragma: no cover - depends on the install
    VERSION = "chasquimq (not importable)"
    IMPORT_ERROR = repr(e)


def server_version(url: str):
    import redis
    r = redis.Redis.from_url(url, socket_timeout=10)
    try:
        v = r.info("server").get("redis_version", "0")
    finally:
        r.close()
    parts = tuple(int(x) for x in str(v).split(".")[:2] if x.isdigit())
    return str(v), parts


def budget_note(done, n, what):
    if done < n:
        return (f"stopped after the {BUDGET:.0f}s budget; {what} {done} of the requested "
                f"{n} (jobs is the real count)")
    return ""


async def enqueue_single(args, wd):
    q = Queue(args.queue, redis_url=args.url)
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
    q = Queue(args.queue, redis_url=args.url)
    t0 = time.perf_counter()
    done = 0
    while done < args.n:
        k = min(CHUNK, args.n - done)
        await q.add_bulk([{"name": NAME, "data": payload(done + j, args.payload_size)}
                          for j in range(k)])
        done += k
        wd.tick()
        if time.perf_counter() - t0 > BUDGET:
            break
    secs = time.perf_counter() - t0
    await q.close()
    return done, secs, budget_note(done, args.n, "enqueued")


async def process(args, wd):
    c = max(1, args.concurrency or 1)
    state = {"n": 0, "t_end": None}
    done_ev = asyncio.Event()

    async def handler(job):
        state["n"] += 1
        if (state["n"] & 255) == 0:
            wd.tick()
        if state["n"] == args.n:
            state["t_end"] = time.perf_counter()
            done_ev.set()

    t0 = time.perf_counter()
    w = Worker(args.queue, handler, redis_url=args.url, concurrency=c)
    task = asyncio.ensure_future(w.run())
    if args.n == 0:
        done_ev.set()
    waiter = asyncio.ensure_future(done_ev.wait())
    finished, _ = await asyncio.wait({waiter, task}, timeout=BUDGET,
                                     return_when=asyncio.FIRST_COMPLETED)
    if task in finished and task.exception() is not None:
        raise task.exception()
    t_end = state["t_end"] or time.perf_counter()
    waiter.cancel()
    await w.close()
    await asyncio.wait_for(task, 60)
    return state["n"], t_end - t0, budget_note(state["n"], args.n, "processed")


async def latency(args, wd):
    c = args.concurrency if args.concurrency and args.concurrency > 1 else 50
    n = args.n
    lats = []

    async def handler(job):
        lats.append((now_ns() - job.data["t"]) / 1e6)
        if (len(lats) & 255) == 0:
            wd.tick()

    w = Worker(args.queue, handler, redis_url=args.url, concurrency=c)
    task = asyncio.ensure_future(w.run())
    q = Queue(args.queue, redis_url=args.url)
    await asyncio.sleep(0.5)  # let the consumer group and the reader come up
    if task.done() and task.exception() is not None:
        raise task.exception()

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
    while len(lats) < sent:
        if task.done():
            if task.exception() is not None:
                raise task.exception()
            break
        await asyncio.sleep(0.01)
    secs = loop.time() - t0
    await w.close()
    await asyncio.wait_for(task, 60)
    await q.close()
    lats.sort()
    notes = [f"worker concurrency {c}, producer in the same asyncio loop, one add in flight; "
             f"offered {sent / max(sent_secs, 1e-9):.0f} jobs/s (asked {args.rate:.0f})"]
    if secs > 1.2 * sent_secs + 1.0:
        notes.append(f"the worker fell behind (last job done {secs - sent_secs:.1f}s after the "
                     f"last send): latency includes the backlog")
    if sent < n:
        notes.append(f"stopped sending after the {BUDGET:.0f}s budget: {sent} of {n}")
    return sent, secs, "; ".join(notes), percentile(lats, 50), percentile(lats, 99)


def main():
    args = parse_args()
    if IMPORT_ERROR is not None:
        emit_unsupported(args.workload, f"chasquimq does not import here: {IMPORT_ERROR}")
        return
    try:
        v, parts = server_version(args.url)
    except Exception as e:
        log(f"cannot reach redis at {args.url}: {e!r}")
        sys.exit(1)
    if parts < MIN_REDIS and not os.environ.get("CHASQUIMQ_FORCE"):
        emit_unsupported(
            args.workload,
            f"chasquimq needs Redis >= {MIN_REDIS[0]}.{MIN_REDIS[1]} (XADD ... IDMP on every "
            f"enqueue, XACKDEL on every ack); this redis-server is {v}, where every add fails "
            f"with 'ERR Invalid stream ID specified as stream command argument'",
            version=VERSION)
        return
    wd = Watchdog(f"chasquimq {args.workload}")
    log(f"{VERSION} (redis {v}): {args.workload} n={args.n} c={args.concurrency} url={args.url}")
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
