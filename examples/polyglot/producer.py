"""The demo's producer: enqueue N orders into queue `orders`.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/polyglot/producer.py N

Order i has payload {"order": i, "fail_once": i % 20 == 7} (5%, deterministic),
sent with enqueue_many in chunks of 500.
"""

from __future__ import annotations

import json
import os
import sys

import echomq

QUEUE = "orders"
CHUNK = 500


def main() -> int:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: producer.py N", file=sys.stderr)
        return 2
    n = int(sys.argv[1])
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    client = echomq.connect(url, client_name="demo-producer-python")
    sent = 0
    for start in range(0, n, CHUNK):
        payloads = [
            json.dumps({"order": i, "fail_once": i % 20 == 7}).encode()
            for i in range(start, min(start + CHUNK, n))
        ]
        for verdict in client.enqueue_many(QUEUE, payloads):
            if isinstance(verdict, echomq.EchoMQError):
                raise verdict
        sent += len(payloads)
        print(f"python producer: {sent}/{n}", flush=True)
    client.close()
    print(f"python producer: enqueued {sent} orders", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
