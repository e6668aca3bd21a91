"""An EchoMQ worker in Python. Ctrl-C or SIGTERM stops it gracefully.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/worker.py [--async]

(EMQ_URL is optional: ``echomq.connect()`` falls back to redis://127.0.0.1:6379/.)
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

import echomq


def send_email(job: echomq.Job) -> None:
    """A plain function runs on the core's blocking threads (the GIL is held
    only while Python runs). Raise to retry; raise UnrecoverableError to give up."""
    if not job.payload:
        raise echomq.UnrecoverableError("empty payload: nothing to send")
    print(f"sending {job.payload!r} (attempt {job.attempts})")


async def send_email_async(job: echomq.Job) -> None:
    """An async def handler runs on an asyncio event loop: under the blocking
    run() a private one of the worker's (see docs/PYTHON.md)."""
    await asyncio.sleep(0.01)
    print(f"sent {job.payload!r} asynchronously (attempt {job.attempts})")


def main() -> None:
    client = echomq.connect()  # EMQ_URL, else redis://127.0.0.1:6379/
    emails = client.queue("examples.emails")
    emails.enqueue_many([b"hello", b"world"])
    handler: echomq.Handler = send_email_async if "--async" in sys.argv else send_email
    with emails.worker(
        handler,
        concurrency=8,
        lease_ms=timedelta(seconds=30),
        max_attempts=5,
        backoff="exponential",
    ) as worker:
        try:
            worker.run()  # until SIGTERM (returns) or Ctrl-C (raises after draining)
        except KeyboardInterrupt:
            pass
    stats: echomq.WorkerStats = worker.stats()
    print(f"stopped: completed={stats.completed} retried={stats.retried} dead={stats.dead}")


if __name__ == "__main__":
    main()
