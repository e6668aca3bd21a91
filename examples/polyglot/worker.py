"""The demo's Python worker on queue `orders` (the handler contract of every
runtime): fail the first attempt of a `fail_once` order, else write a receipt
"<order> python <token>" into `orders.receipts`.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/polyglot/worker.py

Runs until SIGTERM or SIGINT, drains, then prints one line:
    python worker: processed=<completed> retried=<retried> dead=<dead>
"""

from __future__ import annotations

import json
import os
import signal
import sys

import echomq

QUEUE = "orders"
RECEIPTS = "orders.receipts"


def main() -> int:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    client = echomq.connect(url, client_name="demo-worker-python")

    def handle(job: echomq.Job) -> None:
        order = json.loads(job.payload)
        if order["fail_once"] and job.attempts == 1:
            raise RuntimeError("simulated failure (first attempt)")
        client.enqueue(RECEIPTS, f"{order['order']} python {job.token}")

    worker = echomq.Worker(
        client,
        QUEUE,
        handle,
        concurrency=8,
        lease_ms=5000,
        backoff="fixed",
        backoff_base_ms=200,
        pump_interval_ms=200,
        max_attempts=5,
    )
    # SIGTERM and SIGINT both stop gracefully (set explicitly: a background
    # job of a non-interactive shell starts with SIGINT ignored).
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: worker.stop())
    worker.run()  # returns once stopped and drained
    s = worker.stats()
    print(f"python worker: processed={s.completed} retried={s.retried} dead={s.dead}", flush=True)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
