"""Progress, logs and kept results (echomq:2.1.0): a worker reports how far
each job got, logs a line, and keeps its return value for an hour; the
producer waits for the result (RQ's ``job.result``, Celery's ``AsyncResult.get``).

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/progress_results.py
"""

from __future__ import annotations

import json
import os
import threading

import echomq

QUEUE = "thumbnails"


def make_thumbnail(job: echomq.Job) -> object:
    """Runs on the core's threads; the handle writes this job's progress and log."""
    job.log(f"resizing {job.payload.decode()}")
    job.update_progress({"step": 1, "of": 2})
    job.update_progress({"step": 2, "of": 2})
    return {"source": job.payload.decode(), "size": [160, 120]}  # kept as JSON


def main() -> None:
    url = os.environ.get("EMQ_URL", "redis://127.0.0.1:6379/")
    client = echomq.connect(url)
    worker = echomq.Worker(client, QUEUE, make_thumbnail, keep_result_ms=3_600_000,
                           handle_signals=False)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        id = client.enqueue(QUEUE, "cat.png").id
        result = json.loads(client.wait_for_result(QUEUE, id, 30_000))
        print("result:", result)
        print("log:", client.logs(QUEUE, id))
    finally:
        worker.stop()
        thread.join()
        client.close()


if __name__ == "__main__":
    main()
