"""EchoMQ from Python, blocking API: enqueue, claim, settle, inspect.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/quickstart.py
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Union

import echomq


def main() -> None:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    with echomq.connect(url, client_name="quickstart") as client:
        queue = "examples.emails"

        # Payloads are bytes (str is encoded as UTF-8); the id is the receipt.
        receipt: echomq.Enqueued = client.enqueue(queue, json.dumps({"to": "ada@example.com"}))
        print("enqueued", receipt.id)

        # The same id again is a success shape, not an error.
        again = client.enqueue_with_id(queue, receipt.id, b"ignored")
        assert again.duplicate

        # Many at once: one verdict per payload, in input order.
        verdicts: List[Union[echomq.Enqueued, echomq.EchoMQError]] = client.enqueue_many(
            queue, [b"a", b"b"]
        )
        print("batch:", [v.id if isinstance(v, echomq.Enqueued) else v for v in verdicts])

        job = client.claim(queue, lease_ms=30_000)
        if job is not None:
            body: Dict[str, str] = json.loads(job.payload)
            print("claimed", job.id, "token", job.token, body)
            try:
                client.complete(queue, job.id, token=job.token + 1)
            except echomq.StaleTokenError as e:
                print("a wrong token is refused:", e.code)
            client.complete(queue, job.id, job.token)

        # A failure: retried after a delay, dead at max_attempts.
        failing = client.claim(queue, 30_000)
        if failing is not None:
            outcome = client.retry(queue, failing.id, failing.token, 0, 1, "smtp 550")
            print("retry ->", outcome)
            info = client.job(queue, failing.id)
            if info is not None:
                print("dead row:", info.state, info.attempts, info.last_error)
            client.requeue_dead(queue, failing.id)

        counts: echomq.Counts = client.counts(queue)
        print(counts)
        print("pending ids:", client.browse(queue, "pending", limit=10))

        try:
            client.enqueue("not a queue!", b"x")
        except echomq.InvalidQueueError as e:
            print("refused before the wire:", e.code)

        for id in client.browse(queue, "pending", limit=100):
            client.remove(queue, id)


if __name__ == "__main__":
    main()
