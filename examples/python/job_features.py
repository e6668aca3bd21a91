"""EchoMQ job features of wire echomq:2.1.0 from Python: deduplication, and the
stall cap that dead-letters a job whose handler keeps killing its worker.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/job_features.py
"""

from __future__ import annotations

import os
import time

import echomq


def main() -> None:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    with echomq.connect(url, client_name="job-features") as client:
        queue = "examples.features"

        # Deduplication: one live job per dedup id, however many producers race.
        first = client.enqueue(queue, b"welcome mail", dedup_id="welcome-user-42")
        again = client.enqueue(queue, b"welcome mail", dedup_id="welcome-user-42")
        assert again.duplicate and again.id == first.id
        print("dedup: one job", first.id)

        # Throttle mode: the dedup id is released after the TTL even if the job waits.
        client.enqueue(queue, b"digest", dedup_id="digest", dedup_ttl_ms=50)
        time.sleep(0.1)
        print("throttle: new job after the TTL:",
              not client.enqueue(queue, b"digest", dedup_id="digest", dedup_ttl_ms=50).duplicate)

        # The stall cap: a lease that lapses (the worker died mid-job) counts a stall;
        # at max_stalls the job goes to dead with last_error "stalled".
        poison_queue = "examples.poison"
        poison = client.enqueue(poison_queue, b"kills its worker")
        for _ in range(2):
            client.claim(poison_queue, lease_ms=1)  # held, then "crashes": never settled
            time.sleep(0.01)
            print("reaped:", client.reap_stalled(poison_queue, 100, max_stalls=2))
        info = client.job(poison_queue, poison.id)
        print("poison job:", info.state if info else None, info.last_error if info else None)
        client.remove(poison_queue, poison.id)

        # A Worker does the same with its max_stalls option (default 2):
        #   echomq.Worker(client, queue, handle, max_stalls=2).run()

        # Limits, enforced inside the claim: a global ceiling and a rate.
        client.set_concurrency(queue, 3)
        client.set_rate_limit(queue, 100, 1_000)
        try:
            for _ in range(10):
                client.claim(queue, lease_ms=30_000)
        except echomq.RateLimitedError as e:
            print("rate limited; retry after", e.retry_after_ms, "ms")
        client.set_concurrency(queue, 0)
        client.set_rate_limit(queue, 0, 0)

        for waiting in client.browse(queue, "pending", False, 100, None):
            client.remove(queue, waiting)


if __name__ == "__main__":
    main()
