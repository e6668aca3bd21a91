"""EchoMQ with asyncio: the same verbs as coroutines on the running loop.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/asyncio_quickstart.py
"""

from __future__ import annotations

import asyncio
from typing import List

import echomq


async def main() -> None:
    # No URL: EMQ_URL when set, else redis://127.0.0.1:6379/.
    async with await echomq.connect_async() as client:
        q = client.queue("examples.async")
        # A thousand concurrent enqueues pipeline on one connection.
        receipts: List[echomq.Enqueued] = await asyncio.gather(
            *(q.enqueue(f"job {i}") for i in range(1000))
        )
        print("enqueued", len(receipts))

        done = 0
        while True:
            jobs = await q.claim_many(100, lease_ms=30_000)
            if not jobs:
                break
            verdicts = await q.complete_many(jobs)
            done += sum(1 for v in verdicts if v is None)
        print("completed", done, await q.counts())


if __name__ == "__main__":
    asyncio.run(main())
