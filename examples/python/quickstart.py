"""EchoMQ quickstart: a producer and a worker in one program.

    EMQ_URL=redis://127.0.0.1:6379/ python examples/python/quickstart.py

It enqueues three jobs, runs a worker until each of them has completed, and
exits. In production the producer and the worker are separate processes.
"""

from __future__ import annotations

import threading

import echomq


def send_email(job: echomq.Job) -> None:
    # Called once per claimed job. Returning completes the job; raising
    # retries it with backoff (echomq.UnrecoverableError: straight to dead).
    print(f"worker: {job.id} attempt {job.attempts}: {job.payload.decode()}")


def main() -> None:
    # No URL: EMQ_URL when set, else redis://127.0.0.1:6379/.
    with echomq.connect() as client:
        emails = client.queue("emails")

        # The producer's side: each enqueue answers the new job's id.
        ids = [emails.enqueue(f"hello #{i}").id for i in range(3)]

        # The worker's side: run() blocks until stop(), so it gets a thread here.
        with emails.worker(send_email, concurrency=4) as worker:
            runner = threading.Thread(target=worker.run)
            runner.start()
            for job_id in ids:
                settled = emails.wait_for(job_id, timeout_ms=30_000)
                print(f"producer: {job_id} {settled.state}")
            worker.stop()  # claims nothing more, lets running handlers finish
            runner.join()


if __name__ == "__main__":
    main()
