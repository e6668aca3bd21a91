"""A Python worker for the Rust and C subscribers' cross-runtime tests (issue #12):
it processes QUEUE on URL until it is terminated. A job whose payload is b"fail"
raises, and with one attempt goes dead; every other job completes.

    python tests/cross/python_worker.py URL QUEUE
"""
import sys

import echomq


def handle(job: echomq.Job) -> None:
    if job.payload == b"fail":
        raise RuntimeError("python says no")


url, queue = sys.argv[1], sys.argv[2]
client = echomq.connect(url)
worker = echomq.Worker(client, queue, handle, max_attempts=1, idle_max_ms=20)
print("ready", flush=True)
worker.run()
