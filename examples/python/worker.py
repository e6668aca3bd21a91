"""An EchoMQ worker in Python. Ctrl-C or SIGTERM stops it gracefully.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/worker.py [--async]
"""

from __future__ import annotations

import asyncio
import os
import sys

import echomq


def send_email(job: echomq.Job) -> None:
    """A plain function runs on the core's blocking threads (the GIL is held
    only while Python runs). Raise to retry; raise Unrecoverable to give up."""
    if not job.payload:
        raise echomq.Unrecoverable("empty payload: nothing to send")
    print(f"sending {job.payload!r} (attempt {job.token})")


async def send_email_async(job: echomq.Job) -> None:
    """An async def handler runs on an asyncio event loop."""
    await asyncio.sleep(0.01)
    print(f"sent {job.payload!r} asynchronously (attempt {job.token})")


def main() -> None:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    client = echomq.connect(url)
    queue = "examples.emails"
    client.enqueue_many(queue, [b"hello", b"world"])
    handler: echomq.Handler = send_email_async if "--async" in sys.argv else send_email
    worker = echomq.Worker(
        client,
        queue,
        handler,
        concurrency=8,
        lease_ms=30_000,
        max_attempts=5,
        backoff="exponential",
    )
    try:
        worker.run()  # until SIGTERM (returns) or Ctrl-C (raises after draining)
    except KeyboardInterrupt:
        pass
    stats: echomq.WorkerStats = worker.stats()
    print(f"stopped: completed={stats.completed} retried={stats.retried} dead={stats.dead}")


if __name__ == "__main__":
    main()
