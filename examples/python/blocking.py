"""EchoMQ from Python, blocking API: enqueue, claim, settle, inspect.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/blocking.py
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Dict, List, Union

import echomq


def main() -> None:
    # No URL: EMQ_URL when set, else redis://127.0.0.1:6379/.
    with echomq.connect(client_name="blocking-tour") as client:
        emails = client.queue("examples.emails")  # the queue's verbs without its name

        # Payloads are bytes (str is encoded as UTF-8); the id is the receipt.
        receipt: echomq.Enqueued = emails.enqueue(json.dumps({"to": "ada@example.com"}))
        print("enqueued", receipt.id)

        # The same id again is a success shape, not an error.
        again = emails.enqueue(b"ignored", id=receipt.id)
        assert again.duplicate

        # Later: a delay (int ms or timedelta) or a time (unix ms or datetime).
        later = emails.enqueue(b"reminder", delay_ms=timedelta(hours=1))
        print("scheduled", later.id)

        # Many at once, one pipeline: each item a payload or (payload, options),
        # the options enqueue's keywords; one verdict per item, in input order.
        verdicts: List[Union[echomq.Enqueued, echomq.EchoMQError]] = emails.enqueue_many(
            [b"a", (b"b", {"delay_ms": 60_000}), (b"c", {"dedup_id": "digest-1"})]
        )
        print("batch:", [v.id if isinstance(v, echomq.Enqueued) else v for v in verdicts])

        job = emails.claim(lease_ms=30_000)
        if job is not None:
            body: Dict[str, str] = json.loads(job.payload)
            print("claimed", job.id, "attempt", job.attempts, body)
            try:
                emails.complete(job.id, token=job.token + 1)
            except echomq.StaleTokenError as e:
                print("a wrong token is refused:", e.code)
            emails.complete(job.id, job.token)

        # A failure: retried after a delay, dead at max_attempts.
        failing = emails.claim(30_000)
        if failing is not None:
            outcome = emails.retry(failing.id, failing.token, max_attempts=1, error="smtp 550")
            print("retry ->", outcome)
            info = emails.job(failing.id)
            if info is not None:
                print("dead row:", info.state, info.attempts, info.last_error)
            emails.requeue_dead(failing.id)

        counts: echomq.Counts = emails.counts()
        print(counts)
        print("pending ids:", emails.browse("pending", limit=10))

        try:
            client.queue("not a queue!")
        except echomq.InvalidQueueError as e:
            print("refused before the wire:", e.code)

        print("drained", emails.drain(include_scheduled=True))


if __name__ == "__main__":
    main()
