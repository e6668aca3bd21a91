"""Fill a queue the way an application would, with the Python package, for the
`emq` integration tests: python fill.py URL QUEUE. Leaves 2 dead, 1 active,
3 pending and 1 scheduled job and prints their ids by state as JSON."""

from __future__ import annotations

import json
import sys

import echomq


def main() -> None:
    url, queue = sys.argv[1], sys.argv[2]
    client = echomq.connect(url)
    dead = [client.enqueue(queue, f"doomed {i}").id for i in range(2)]
    for job in client.claim_many(queue, 2, 60_000):
        outcome = client.retry(queue, job.id, job.token, 0, 1, f"boom {job.payload.decode()}")
        assert outcome == "dead", outcome
    active = client.enqueue(queue, b"busy").id
    held = client.claim(queue, 600_000)
    assert held is not None and held.id == active
    pending = [client.enqueue(queue, json.dumps({"order": i})).id for i in range(3)]
    scheduled = [client.enqueue(queue, b"later", delay_ms=3_600_000).id]
    print(json.dumps({"pending": pending, "scheduled": scheduled, "dead": dead, "active": active}))


if __name__ == "__main__":
    main()
