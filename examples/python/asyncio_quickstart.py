"""EchoMQ with asyncio: the same verbs as coroutines on the running loop.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/asyncio_quickstart.py
"""

from __future__ import annotations

import asyncio
import os
from typing import List

import echomq


async def main() -> None:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    queue = "examples.async"
    async with await echomq.connect_async(url) as client:
        # A thousand concurrent enqueues pipeline on one connection.
        receipts: List[echomq.Enqueued] = await asyncio.gather(
            *(client.enqueue(queue, f"job {i}") for i in range(1000))
        )
        print("enqueued", len(receipts))

        done = 0
        while True:
            jobs = await client.claim_many(queue, 100, lease_ms=30_000)
            if not jobs:
                break
            verdicts = await client.complete_many(queue, jobs)
            done += sum(1 for v in verdicts if v is None)
        print("completed", done, await client.counts(queue))


if __name__ == "__main__":
    asyncio.run(main())
