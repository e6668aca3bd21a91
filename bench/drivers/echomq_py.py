"""The EchoMQ Python driver for bench/run.py (contract: bench/DRIVERS.md)."""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import echomq
from common import enqueued_at_ns, parse_args, payload, percentile, report, wait_until

VERSION = f"echomq {echomq.__version__} (python)"


def bulk(client: echomq.Client, a) -> None:
    chunks = [[payload(i, a.payload_size) for i in range(s, min(s + 1000, a.n))] for s in range(0, a.n, 1000)]

    def send(chunk):
        for verdict in client.enqueue_many(a.queue, chunk):
            if isinstance(verdict, Exception):
                raise verdict

    # A few pipelines in flight at once: the GIL is released while each waits.
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, chunks))


def run_worker(client, a, concurrency: int, handler, handler_batch: int = 1):
    # --listeners on: a no-op listener for every worker event.
    events = {name: (lambda e: None) for name in echomq.WORKER_EVENTS} if a.listeners == "on" else None
    # EMQ_BENCH_PREFETCH=n: a fixed prefetch window instead of the adaptive default
    # (n = the concurrency was the default before issue #16), for bench/prefetch_ab.py.
    fixed = os.environ.get("EMQ_BENCH_PREFETCH")
    worker = echomq.Worker(
        client, a.queue, handler, concurrency=concurrency, idle_max_ms=5, handler_batch=handler_batch,
        events=events, **({"prefetch": int(fixed)} if fixed else {}),
    )
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    return worker, thread


def batch_note(handler_batch: int) -> str:
    return f"handler_batch={handler_batch}" if handler_batch > 1 else ""


def main() -> None:
    a = parse_args()
    client = echomq.connect(a.url, publish_events=a.events == "on")
    if a.workload == "enqueue-single":
        start = time.perf_counter()
        for i in range(a.n):
            client.enqueue(a.queue, payload(i, a.payload_size))
        report(a.workload, a.n, time.perf_counter() - start, VERSION)
    elif a.workload in ("enqueue-bulk", "prefill"):
        start = time.perf_counter()
        bulk(client, a)
        report(a.workload, a.n, time.perf_counter() - start, VERSION)
    elif a.workload == "process":
        start = time.perf_counter()
        # A no-op handler: hand it whole claims (one interpreter entry per
        # batch), the documented setting for short handlers.
        batch = a.handler_batch or a.concurrency
        worker, thread = run_worker(client, a, a.concurrency, lambda job: None, batch)
        wait_until(lambda: worker.stats().completed >= a.n)
        seconds = time.perf_counter() - start
        worker.stop()
        thread.join(30)
        report(a.workload, a.n, seconds, VERSION, note=batch_note(batch))
    elif a.workload == "latency":
        lat: list[float] = []
        worker, thread = run_worker(client, a, 50, lambda job: lat.append((time.time_ns() - enqueued_at_ns(job.payload)) / 1e6))
        start = time.perf_counter()
        for i in range(a.n):
            delay = start + i / a.rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            client.enqueue(a.queue, payload(i, a.payload_size))
        wait_until(lambda: worker.stats().completed >= a.n)
        seconds = time.perf_counter() - start
        worker.stop()
        thread.join(30)
        report(a.workload, a.n, seconds, VERSION, percentile(lat, 0.5), percentile(lat, 0.99))
    elif a.workload == "idle":
        # Idle pickup (issue #16): the default worker options, idle, then one job every ~200 ms.
        lat = []
        worker = echomq.Worker(client, a.queue, lambda job: lat.append((time.time_ns() - enqueued_at_ns(job.payload)) / 1e6),
                               concurrency=a.concurrency, handle_signals=False)
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        time.sleep(0.5)
        print("idle-start", file=sys.stderr, flush=True)
        time.sleep(a.idle_seconds)
        start = time.perf_counter()
        for i in range(a.n):
            client.enqueue(a.queue, payload(i, a.payload_size))
            wait_until(lambda: worker.stats().completed >= i + 1)
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        worker.stop()
        thread.join(30)
        report(a.workload, a.n, seconds, VERSION, percentile(lat, 0.5), percentile(lat, 0.99))
    else:
        print('{"workload": "%s", "unsupported": "unknown workload"}' % a.workload)


if __name__ == "__main__":
    main()
